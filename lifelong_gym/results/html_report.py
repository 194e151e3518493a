"""A run's `report.html`: figures, charts, and every session's conversation, in one file.

The headline, identity and charts are written here as escaped markup and inline SVG; the
sessions travel as JSON (a compact row per session for the table, one block per
conversation and per task, parsed only when opened), so a 10,000-session report opens
at once and its table scrolls and filters without rendering every row.
"""

from __future__ import annotations

import json
import os
from html import escape
from pathlib import Path
from typing import Any

from lifelong_gym.metrics import describe_errors
from lifelong_gym.results.gain import Gain, twin_and_gain
from lifelong_gym.results.html_measures import cost_panel, twin_gain_panel
from lifelong_gym.results.html_memory import has_memory, inserted_chars, memory_panel
from lifelong_gym.results.html_page import json_block, render_page, write_page
from lifelong_gym.results.plots import status_bins, status_color, status_rank, window_label
from lifelong_gym.results.probe_display import probe_panel, run_probes
from lifelong_gym.results.run_record import RunRecord
from lifelong_gym.results.svg_charts import Series, SkillBar, line_chart, skill_chart, status_chart
from lifelong_gym.results.task_reference import TaskReferences, load_references
from lifelong_gym.session import Role, Session

REPORT_FILE = "report.html"
MIN_SHARED_PREFIX = 200  # shorter shared openings are not worth folding
SNIPPET_LENGTH = 160
CUMULATIVE_COLOR, WINDOWED_COLOR, TWIN_COLOR = "#1f5f99", "#f58518", "#8c8c8c"


TwinAndGain = tuple[RunRecord | None, Gain | str | None]


def write_html_report(run: RunRecord, twin: TwinAndGain | None = None) -> Path:
    """Write `report.html` into the run folder and return its path; `twin` is the run's
    `twin_and_gain` when the caller has it already."""
    return write_page(run.folder / REPORT_FILE, report_page(run, twin))


def report_page(run: RunRecord, twin: TwinAndGain | None = None) -> str:
    """The report of a run as one HTML page."""
    references = load_references(run.identity, run.sessions)
    prefix = shared_prefix([s.chat_history[0].content for s in run.sessions if s.chat_history])
    blocks = [json_block("report-data", _table_data(run, references, prefix))]
    blocks += [
        json_block(f"c-{position}", _conversation(session, prefix))
        for position, session in enumerate(run.sessions, start=1)
    ]
    blocks += [json_block(f"t-{index}", task) for index, task in references.tasks.items()]
    title = f"{run.identity.name}: lifelong run report"
    body = _body(run, references, *(twin or twin_and_gain(run)))
    return render_page(title, body, blocks, "report.js")


def report_path_of(folder: Path) -> Path:
    """Where a run folder's HTML report is."""
    return folder / REPORT_FILE


def is_report_current(folder: Path) -> bool:
    """Whether the folder's report.html exists and is newer than its sessions."""
    report, sessions = folder / REPORT_FILE, folder / "sessions.jsonl"
    return report.is_file() and report.stat().st_mtime >= sessions.stat().st_mtime


def shared_prefix(texts: list[str]) -> str:
    """The opening all the prompts share (cut at a line end), or "" when it is short."""
    if len(texts) < 2:
        return ""
    common = os.path.commonprefix(texts)
    common = common[: common.rfind("\n") + 1]
    return common if len(common) >= MIN_SHARED_PREFIX else ""


def _table_data(run: RunRecord, references: TaskReferences, prefix: str) -> dict[str, Any]:
    statuses = sorted({s.status.value for s in run.sessions}, key=status_rank)
    outcomes = sorted({s.outcome.value for s in run.sessions})
    skills = sorted({k for s in run.sessions for k in s.skills})
    status_ids, outcome_ids = _ids(statuses), _ids(outcomes)
    skill_ids = _ids(skills)
    memory = has_memory(run.sessions)
    rows = []
    for position, session in enumerate(run.sessions, start=1):
        task = references.tasks.get(session.task_index) or {}
        rows.append(
            [
                position,
                session.task_index,
                status_ids[session.status.value],
                outcome_ids[session.outcome.value],
                [skill_ids[k] for k in session.skills],
                session.agent_turns,
                session.reward,
                snippet(task.get("text") or opening_text(session, prefix)),
                *([inserted_chars(session)] if memory else []),
            ]
        )
    return {
        "run": run.identity.name,
        "statuses": statuses,
        "outcomes": outcomes,
        "skills": skills,
        "colors": {s: status_color(s) for s in statuses},
        "prefix": prefix,
        "taskNote": references.note,
        "memory": memory,
        "rows": rows,
    }


def _conversation(session: Session, prefix: str) -> dict[str, Any]:
    messages = [[int(m.role == Role.AGENT), m.content] for m in session.chat_history]
    folded = bool(prefix and messages and messages[0][1].startswith(prefix))
    if folded:
        messages[0][1] = messages[0][1][len(prefix) :]
    details = session.details
    if "memory" in details:  # the page shows each insertion's text
        details = {**details, "memory": session.inserted_memory()}
    return {"m": messages, "p": folded, "d": details, "e": session.error}


def _body(
    run: RunRecord, references: TaskReferences, twin: RunRecord | None, gain: Gain | str | None
) -> str:
    identity, metrics = run.identity, run.metrics
    callbacks = ", ".join(identity.callbacks) or "none"
    tasks = identity.task_set + (f" ({identity.task_count} tasks)" if identity.task_count else "")
    facts = [
        ("environment", identity.env),
        ("task set", tasks),
        ("order", identity.task_order),
        ("agent", identity.agent),
        ("callbacks", callbacks),
    ]
    identity_html = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts)
    config = json.dumps(identity.config, indent=2, sort_keys=True) if identity.config else ""
    probes = probe_panel(measures) if (measures := run_probes(run)) is not None else ""
    chips = "".join(
        f'<button type="button" class="chip" data-status="{escape(status)}" '
        f'style="--chip:{status_color(status)}"><span class="chip-name">{escape(status)}</span>'
        f' <span class="chip-count">{count}</span></button>'
        for status, count in sorted(metrics.status_counts.items(), key=lambda i: status_rank(i[0]))
    )
    note = (
        f'<p class="note" id="task-note">Reference solutions: {escape(references.note)}</p>'
        if references.note
        else ""
    )
    errored = (
        f'<p class="note errored" id="headline-errored">Success is over the '
        f"{metrics.judged} judged sessions; {escape(errors)}</p>"
        if (errors := describe_errors(metrics))
        else ""
    )
    return f"""
<header class="top">
  <h1>{escape(identity.name)}</h1>
  <dl class="identity">{identity_html}</dl>
  <details class="config"><summary>config.json</summary>
    <pre>{escape(config) or "this run folder has no config.json"}</pre></details>
</header>
<section class="headline" aria-label="headline figures">
  <div class="figure"><span class="value" id="headline-success">{metrics.success_rate:.1%}</span>
    <span class="name">success rate</span></div>
  <div class="figure"><span class="value" id="headline-correct">{metrics.correct}</span>
    <span class="name">correct</span></div>
  <div class="figure"><span class="value" id="headline-judged">{metrics.judged}</span>
    <span class="name">judged</span></div>
  <div class="figure"><span class="value" id="headline-errored-count">{metrics.errored}</span>
    <span class="name">errored</span></div>
  <div class="figure"><span class="value" id="headline-sessions">{metrics.sessions}</span>
    <span class="name">sessions</span></div>
  {_gain_figure(gain)}<div class="statuses" id="headline-statuses"><span class="name">statuses
    (click to filter)</span>{chips}</div>
</section>
{errored}
{_charts(run, twin)}
{memory_panel(run.sessions)}
{cost_panel(run.cost)}{twin_gain_panel(gain)}{probes}
{note}
<section id="sessions" class="panel">
  <h2>Sessions</h2>
  <div class="filters" id="filters"></div>
  <div class="table" id="session-table" role="table" aria-label="sessions"></div>
</section>
<section id="session-view" class="panel" hidden></section>
<noscript><p class="note">The session table and conversations need JavaScript.</p></noscript>
"""


def _gain_figure(gain: Gain | str | None) -> str:
    if not isinstance(gain, Gain):
        return ""
    overall = gain.overall
    return (
        f'<div class="figure"><span class="value" id="headline-gain">{overall.gain * 100:+.1f}'
        f' <small>{overall.interval}</small></span><span class="name">gain over the stateless'
        " run (points, 95% interval)</span></div>\n  "
    )


def _charts(run: RunRecord, twin: RunRecord | None) -> str:
    metrics = run.metrics
    if not run.sessions:
        return '<p class="note">This run has no finished session yet.</p>'
    curve = metrics.learning_curve
    learning = line_chart(
        "Learning curve",
        [
            Series("cumulative", curve.cumulative, CUMULATIVE_COLOR),
            Series(window_label(curve), curve.windowed, WINDOWED_COLOR, dashed=True),
            *(
                [Series("stateless cumulative", twin.metrics.learning_curve.cumulative, TWIN_COLOR)]
                if twin is not None
                else []
            ),
        ],
    )
    statuses = [s.status.value for s in run.sessions]
    along = status_chart(
        "Statuses along the run",
        status_bins(statuses),
        sorted(set(statuses), key=status_rank),
    )
    skills = skill_chart(
        "Success per skill",
        [
            (name, [SkillBar(name, skill.correct, skill.count, CUMULATIVE_COLOR)])
            for name, skill in metrics.per_skill.items()
        ],
    )
    return (
        f'<section class="charts"><div class="chart-box">{learning}</div>'
        f'<div class="chart-box">{along}</div>'
        f'<div class="chart-box wide">{skills}</div></section>'
    )


def opening_text(session: Session, prefix: str = "") -> str:
    """The session's opening prompt without the instructions every prompt shares."""
    if not session.chat_history:
        return ""
    text = session.chat_history[0].content
    return text[len(prefix) :] if prefix and text.startswith(prefix) else text


def snippet(text: str) -> str:
    """A text on one line, cut to the length of a table cell."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_LENGTH else flat[: SNIPPET_LENGTH - 1] + "…"


def _ids(values: list[str]) -> dict[str, int]:
    return {value: i for i, value in enumerate(values)}
