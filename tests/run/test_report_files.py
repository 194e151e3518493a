"""What `report` writes: the HTML file's safety and notes, the plots' labels, titles and ticks."""

from __future__ import annotations

import json
import re

import gymnasium as gym
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.cli import main
from lifelong_gym.metrics import compute_metrics
from lifelong_gym.results.folder import METRICS_FILE, SESSIONS_FILE, read_sessions
from lifelong_gym.results.html_report import REPORT_FILE
from lifelong_gym.results.plots import (
    learning_curve_figure,
    per_skill_figure,
    status_bins,
    status_figure,
    window_label,
)
from lifelong_gym.results.report import report_run
from lifelong_gym.results.run_record import RunIdentity
from lifelong_gym.run import Runner

from ..arithmetic_env import PatternAgent, SumEnv
from ..methods.skill_recall import labelled_task_file
from .scripted_run import HOSTILE_REPLY, ScriptedAgent

BLOCK = re.compile(r'<script type="application/json" id="c-(\d+)">(.*?)</script>', re.S)


def test_report_writes_every_file_and_names_them(scripted_report):
    result = CliRunner().invoke(main, ["report", str(scripted_report)])
    assert result.exit_code == 0, result.output
    written = [
        line.removeprefix("wrote ") for line in result.output.splitlines() if "wrote" in line
    ]
    names = [name.rsplit("/", 1)[-1] for name in written]
    assert names == ["learning_curve.png", "statuses.png", "per_skill.png", REPORT_FILE]
    assert all((scripted_report / name).stat().st_size > 1000 for name in names)


def test_agent_text_cannot_close_its_block_or_become_markup(scripted_report):
    page = (scripted_report / REPORT_FILE).read_text(encoding="utf-8")
    # every </script> closes one of the page's own elements: the agent's never appears raw
    assert page.count("</script>") == page.count("<script")
    assert "<img" not in page and "<!-- <script>" not in page
    blocks = {int(position): json.loads(text) for position, text in BLOCK.findall(page)}
    sessions = read_sessions(scripted_report / SESSIONS_FILE)[0]
    assert sorted(blocks) == list(range(1, len(sessions) + 1))
    assert blocks[4]["m"][1] == [1, HOSTILE_REPLY]


def test_tasks_that_cannot_be_loaded_are_named_on_the_page(tmp_path):
    env = SumEnv()  # a custom environment: no task loader is known for it
    Runner(env, PatternAgent(env.tasks), [], output=tmp_path / "sums", progress=False).run()
    report_run(tmp_path / "sums")
    page = (tmp_path / "sums" / REPORT_FILE).read_text(encoding="utf-8")
    assert 'id="task-note"' in page and "no task loader is known for" in page

    tasks = labelled_task_file(tmp_path, ["alpha", "beta"] * 3)
    db = gym.make("LifelongDB-v0", tasks=str(tasks))
    Runner(db, ScriptedAgent(db.unwrapped.tasks), [], output=tmp_path / "db", progress=False).run()
    db.close()
    tasks.unlink()
    report_run(tmp_path / "db")
    page = (tmp_path / "db" / REPORT_FILE).read_text(encoding="utf-8")
    assert f"the task set {str(tasks)!r} cannot be read" in page
    assert '<script type="application/json" id="t-' not in page


def test_learning_curve_names_the_window_it_used_and_counts_sessions_in_integers(tmp_path):
    env = gym.make("LifelongDB-v0")
    folder = tmp_path / "twenty"
    Runner(
        env, ScriptedAgent(env.unwrapped.tasks), [], output=folder, max_tasks=20, progress=False
    ).run()
    env.close()
    metrics = json.loads((folder / METRICS_FILE).read_text())
    assert metrics["learning_curve"]["window"] == 20  # not the default 50 of a longer run
    sessions = read_sessions(folder / SESSIONS_FILE)[0]
    computed = compute_metrics(sessions)
    figure = learning_curve_figure(computed, RunIdentity.of_folder(folder))
    axes = figure.axes[0]
    labels = [text.get_text() for text in axes.get_legend().get_texts()]
    assert (
        labels
        == ["cumulative", window_label(computed.learning_curve)]
        == [
            "cumulative",
            "last 20 sessions",
        ]
    )
    title = axes.get_title()
    assert "twenty" in title and "LifelongDB-v0" in title and "ScriptedAgent" in title
    figure.canvas.draw()
    ticks = [t for t in axes.get_xticks() if 1 <= t <= 20]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_status_plot_and_per_skill_plot_show_failures_and_zeros(scripted_report):
    sessions = read_sessions(scripted_report / SESSIONS_FILE)[0]
    statuses = [s.status.value for s in sessions]
    identity = RunIdentity.of_folder(scripted_report)
    figure = status_figure(statuses, identity)
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    expected = {f"{s} ({statuses.count(s)})" for s in set(statuses)}
    assert set(legend) == expected and len(expected) >= 3
    bins = status_bins(statuses)
    assert sum(sum(b.counts.values()) for b in bins) == len(sessions)
    assert [b.counts for b in bins] == [{s: 1} for s in statuses]  # one bar a session
    metrics = compute_metrics(sessions)
    texts = [t.get_text().strip() for t in per_skill_figure(metrics, identity).axes[0].texts]
    zero = next(name for name, m in metrics.per_skill.items() if m.correct == 0)
    assert f"0% (0/{metrics.per_skill[zero].count})" in texts
    assert len(texts) == len(metrics.per_skill)


def test_status_bins_cover_a_long_run_in_fifty_stretches():
    statuses = ["completed"] * 9_000 + ["agent_validation_failed"] * 1_000
    bins = status_bins(statuses)
    assert len(bins) == 50 and bins[0].first == 1 and bins[-1].last == 10_000
    assert all(b.first == a.last + 1 for a, b in zip(bins, bins[1:], strict=False))
    assert bins[-1].counts == {"agent_validation_failed": 200}
