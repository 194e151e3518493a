"""What a person reads after a run: a summary, a per-skill table, plots and the HTML report."""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.metrics import (
    DEFAULT_WINDOW,
    LifelongMetrics,
    describe_success,
    format_status_counts,
)
from lifelong_gym.results.cost_summary import write_cost_summary
from lifelong_gym.results.costs import Price
from lifelong_gym.results.folder import METRICS_FILE, write_json_atomic
from lifelong_gym.results.gain import Gain, twin_and_gain
from lifelong_gym.results.html_report import write_html_report
from lifelong_gym.results.plots import (
    LEARNING_CURVE_FILE,
    PER_SKILL_FILE,
    STATUSES_FILE,
    write_plots,
)
from lifelong_gym.results.run_record import RunRecord, load_run

__all__ = [
    "LEARNING_CURVE_FILE",
    "PER_SKILL_FILE",
    "STATUSES_FILE",
    "format_report",
    "report_run",
    "write_plots",
]


def format_report(metrics: LifelongMetrics) -> str:
    """The overall figures, the status counts and the per-skill table (over the judged
    sessions) as plain text."""
    lines = [
        f"sessions {metrics.sessions}   correct {metrics.correct}   "
        f"success rate {describe_success(metrics)}",
        "statuses: " + (format_status_counts(metrics.status_counts) or "none"),
    ]
    if metrics.per_skill:
        width = max(len("skill"), *(len(name) for name in metrics.per_skill))
        lines += ["", f"{'skill':<{width}}  {'tasks':>6}  {'correct':>7}  {'success':>7}"]
        lines += [
            f"{name:<{width}}  {m.count:>6}  {m.correct:>7}  {m.success_rate:>7.1%}"
            for name, m in metrics.per_skill.items()
        ]
    return "\n".join(lines)


def report_run(
    folder: Path, window: int = DEFAULT_WINDOW, price: Price | None = None
) -> tuple[RunRecord, list[Path], Gain | str | None]:
    """Recompute a finished or partial run's `metrics.json` and `cost.json` (at `price`, or
    the run's own); write its plots and report.html. Also returns the gain over its
    stateless twin (`twin_gain`)."""
    run = load_run(folder, window=window, price=price)
    write_json_atomic(folder / METRICS_FILE, run.metrics.model_dump(mode="json"))
    write_cost_summary(folder, run.cost)
    written = write_plots(run.metrics, folder, run.sessions) if run.sessions else []
    twin = twin_and_gain(run)
    return run, [*written, write_html_report(run, twin)], twin[1]
