"""The comparison page: runs side by side, per skill, and the tasks one solved and another did not.

Every task listed links to its conversation in each run's own `report.html` (by the
`#task-N` anchor), so the page stays small however long the runs are.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote

from lifelong_gym.metrics import describe_errors
from lifelong_gym.results.compare import ComparedRun, comparison_warnings, solved_by_one
from lifelong_gym.results.html_measures import cost_comparison_panel, paired_gain_panels
from lifelong_gym.results.html_page import render_page, write_page
from lifelong_gym.results.html_report import (
    REPORT_FILE,
    is_report_current,
    opening_text,
    snippet,
    write_html_report,
)
from lifelong_gym.results.probe_display import probe_panel, run_probes
from lifelong_gym.results.svg_charts import Series, SkillBar, line_chart, skill_chart
from lifelong_gym.results.task_reference import load_references

PALETTE = ("#1f5f99", "#e45756", "#54a24b", "#b279a2", "#f58518", "#72b7b2", "#9d755d")


def write_compare_page(runs: Sequence[ComparedRun], path: Path) -> list[Path]:
    """Write the comparison page (and any run's report.html that is missing or stale)."""
    written = [
        write_html_report(run.record) for run in runs if not is_report_current(run.record.folder)
    ]
    title = "Comparison: " + " vs ".join(run.name for run in runs)
    warnings = comparison_warnings(runs)
    body = "".join(
        [
            f"<header class='top'><h1>{escape(title)}</h1></header>",
            "".join(f"<p class='warning'>warning: {escape(w)}</p>" for w in warnings),
            _runs_table(runs, path),
            _charts(runs),
            _skills_table(runs),
            cost_comparison_panel([(run.letter, run.record.cost) for run in runs]),
            paired_gain_panels([(run.letter, run.record) for run in runs]),
            *(
                probe_panel(probes, f"{run.letter} probes: {run.name}")
                for run in runs
                if (probes := run_probes(run.record)) is not None
            ),
            *(_differences(runs[0], other, path) for other in runs[1:]),
        ]
    )
    return [*written, write_page(path, render_page(title, body, [], "compare.js"))]


def _color(position: int) -> str:
    return PALETTE[position % len(PALETTE)]


def _report_link(run: ComparedRun, page: Path, anchor: str = "") -> str:
    target = os.path.relpath(run.record.folder.resolve() / REPORT_FILE, page.resolve().parent)
    return quote(Path(target).as_posix()) + anchor


def _runs_table(runs: Sequence[ComparedRun], page: Path) -> str:
    rows = []
    for run in runs:
        identity = run.record.identity
        rows.append(
            "<tr>"
            f"<td class='letter'>{run.letter}</td>"
            f"<td><a href='{escape(_report_link(run, page))}'>{escape(run.name)}</a></td>"
            f"<td>{escape(identity.env)}</td><td>{escape(identity.task_set)}</td>"
            f"<td>{escape(identity.agent)}</td>"
            f"<td>{escape(', '.join(identity.callbacks) or 'none')}</td>"
            f"<td class='num'>{run.metrics.sessions}</td>"
            f"<td class='num'>{run.metrics.errored}</td>"
            f"<td class='num'>{run.metrics.success_rate:.1%}</td></tr>"
        )
    columns = ("", "run", "environment", "task set", "agent", "callbacks", "sessions", "errored")
    head = "".join(f"<th>{h}</th>" for h in (*columns, "success (of the judged)"))
    errored = "".join(
        f"<p class='note errored'>{run.letter}: {escape(errors)}</p>"
        for run in runs
        if (errors := describe_errors(run.metrics))
    )
    return (
        "<section class='panel' id='runs'><h2>Runs</h2><table class='runs-table'>"
        f"<tr>{head}</tr>{''.join(rows)}</table>{errored}</section>"
    )


def _charts(runs: Sequence[ComparedRun]) -> str:
    curves = line_chart(
        "Cumulative success",
        [
            Series(f"{run.letter}", run.metrics.learning_curve.cumulative, _color(i))
            for i, run in enumerate(runs)
        ],
    )
    skills = sorted({skill for run in runs for skill in run.metrics.per_skill})
    bars = skill_chart(
        "Success per skill (one bar per run, in letter order)",
        [
            (
                skill,
                [
                    SkillBar(run.letter, m.correct, m.count, _color(i))
                    if (m := run.metrics.per_skill.get(skill))
                    else SkillBar(run.letter, 0, 0, _color(i))
                    for i, run in enumerate(runs)
                ],
            )
            for skill in skills
        ],
    )
    return (
        f"<section class='charts'><div class='chart-box'>{curves}</div>"
        f"<div class='chart-box wide'>{bars}</div></section>"
    )


def _skills_table(runs: Sequence[ComparedRun]) -> str:
    skills = sorted({skill for run in runs for skill in run.metrics.per_skill})
    head = "<th>skill</th>" + "".join(f"<th class='num'>{run.letter}</th>" for run in runs)

    def cells(rates: list[tuple[float, str] | None]) -> str:
        first = rates[0][0] if rates[0] else None
        out = []
        for k, rate in enumerate(rates):
            if rate is None:
                out.append("<td class='num'>-</td>")
                continue
            gain = ""
            if k and first is not None:
                delta = (rate[0] - first) * 100
                css = "gain-up" if delta > 0 else "gain-down" if delta < 0 else ""
                gain = f" <span class='{css}'>({delta:+.1f})</span>"
            out.append(f"<td class='num'>{rate[0]:.1%} <small>{rate[1]}</small>{gain}</td>")
        return "".join(out)

    overall = [(r.metrics.success_rate, f"{r.metrics.correct}/{r.metrics.judged}") for r in runs]
    rows = [f"<tr><th>overall</th>{cells(overall)}</tr>"]
    for skill in skills:
        rates = [
            (m.success_rate, f"{m.correct}/{m.count}")
            if (m := run.metrics.per_skill.get(skill))
            else None
            for run in runs
        ]
        rows.append(f"<tr><td>{escape(skill)}</td>{cells(rates)}</tr>")
    return (
        "<section class='panel' id='per-skill'><h2>Success per skill "
        "<small>(Δ: points against A)</small></h2>"
        f"<table class='skills-table'><tr>{head}</tr>{''.join(rows)}</table></section>"
    )


def _differences(first: ComparedRun, other: ComparedRun, page: Path) -> str:
    only_first, only_other = solved_by_one(first.record, other.record)
    texts = _task_texts(first)
    skills_of = {s.task_index: s.skills for s in first.record.sessions}
    parts = []
    for solver, loser, tasks in ((first, other, only_first), (other, first, only_other)):
        by_skill: dict[str, list[int]] = {}
        for task in tasks:
            for skill in skills_of.get(task) or ["(no skill)"]:
                by_skill.setdefault(skill, []).append(task)
        groups = "".join(
            f"<details><summary>{escape(skill)} ({len(found)})</summary><ul>"
            + "".join(_task_item(t, texts.get(t, ""), first, other, page) for t in found)
            + "</ul></details>"
            for skill, found in sorted(by_skill.items())
        )
        parts.append(
            f"<div class='diff' data-solver='{solver.letter}' data-tasks='{len(tasks)}'>"
            f"<h3>solved by {solver.letter}, not by {loser.letter}: {len(tasks)} tasks</h3>"
            f"{groups or '<p>none</p>'}</div>"
        )
    return (
        f"<section class='panel' id='diff-{first.letter}-{other.letter}'>"
        f"<h2>{first.letter} and {other.letter}: tasks only one solved</h2>{''.join(parts)}"
        "</section>"
    )


def _task_item(task: int, text: str, first: ComparedRun, other: ComparedRun, page: Path) -> str:
    links = " · ".join(
        f"<a href='{escape(_report_link(run, page, f'#task-{task}'))}' "
        f"data-run='{run.letter}'>{run.letter}'s conversation</a>"
        for run in (first, other)
    )
    return f"<li data-task='{task}'><b>task {task}</b> {escape(snippet(text))} — {links}</li>"


def _task_texts(run: ComparedRun) -> dict[int, str]:
    references = load_references(run.record.identity, run.record.sessions)
    return {
        s.task_index: (references.tasks.get(s.task_index) or {}).get("text") or opening_text(s)
        for s in run.record.sessions
    }
