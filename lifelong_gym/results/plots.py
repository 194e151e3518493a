"""The run's PNG plots: learning curve, statuses over the run, success per skill."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lifelong_gym.metrics import LearningCurve, LifelongMetrics
from lifelong_gym.results.folder import SESSIONS_FILE, read_sessions
from lifelong_gym.results.run_record import RunIdentity
from lifelong_gym.session import Session, SessionStatus

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LEARNING_CURVE_FILE = "learning_curve.png"
STATUSES_FILE = "statuses.png"
PER_SKILL_FILE = "per_skill.png"
MAX_STATUS_BINS = 50

# one colour per status, the same in the PNGs and the HTML report
STATUS_COLORS = {
    SessionStatus.COMPLETED.value: "#4c78a8",
    SessionStatus.AGENT_VALIDATION_FAILED.value: "#e45756",
    SessionStatus.TASK_LIMIT_REACHED.value: "#f58518",
    SessionStatus.TASK_ENVIRONMENT_ERROR.value: "#9d755d",
    SessionStatus.TASK_UNKNOWN_ERROR.value: "#79706e",
    SessionStatus.AGENT_CONTEXT_LIMIT.value: "#b279a2",
    SessionStatus.AGENT_OUT_OF_MEMORY.value: "#ff9da6",
    SessionStatus.AGENT_UNKNOWN_ERROR.value: "#72b7b2",
}
OTHER_STATUS_COLOR = "#bab0ac"


def status_color(status: str) -> str:
    """The colour a status is drawn in."""
    return STATUS_COLORS.get(status, OTHER_STATUS_COLOR)


def window_label(curve: LearningCurve) -> str:
    """The legend of the windowed curve, naming the window it was computed with."""
    return f"last {curve.window} session{'s' if curve.window != 1 else ''}"


@dataclass(frozen=True)
class StatusBin:
    """How the sessions `first` to `last` (1-based, inclusive) ended."""

    first: int
    last: int
    counts: dict[str, int]


def status_bins(statuses: Sequence[str], max_bins: int = MAX_STATUS_BINS) -> list[StatusBin]:
    """The run cut into at most `max_bins` consecutive stretches, with their status counts."""
    total = len(statuses)
    bins = min(total, max_bins)
    edges = [round(i * total / bins) for i in range(bins + 1)] if bins else []
    return [
        StatusBin(start + 1, end, dict(Counter(statuses[start:end])))
        for start, end in zip(edges, edges[1:], strict=False)
    ]


def learning_curve_figure(metrics: LifelongMetrics, identity: RunIdentity) -> Figure:
    """Cumulative and windowed success after each judged session (errored ones left out)."""
    plt = _pyplot()
    curve = metrics.learning_curve
    figure, axes = plt.subplots(figsize=(8, 4.5))
    steps = range(1, len(curve.cumulative) + 1)
    axes.plot(steps, curve.cumulative, label="cumulative")
    axes.plot(steps, curve.windowed, label=window_label(curve), alpha=0.7)
    axes.set(xlabel="judged session", ylabel="success rate", ylim=(-0.02, 1.02))
    _integer_sessions(axes, len(curve.cumulative))
    axes.set_title(f"Learning curve\n{identity.title()}", fontsize=10)
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    return figure


def status_figure(statuses: Sequence[str], identity: RunIdentity) -> Figure:
    """How the sessions ended along the run: one stacked bar per stretch of sessions."""
    plt = _pyplot()
    bins = status_bins(statuses)
    figure, axes = plt.subplots(figsize=(8, 3.5))
    bottoms = [0.0] * len(bins)
    for status in sorted(set(statuses), key=status_rank):
        shares = [b.counts.get(status, 0) / (b.last - b.first + 1) for b in bins]
        axes.bar(
            [(b.first + b.last) / 2 for b in bins],
            shares,
            width=[b.last - b.first + 1 for b in bins],
            bottom=bottoms,
            color=status_color(status),
            label=f"{status} ({sum(b.counts.get(status, 0) for b in bins)})",
            align="center",
        )
        bottoms = [low + share for low, share in zip(bottoms, shares, strict=True)]
    axes.set(xlabel="session", ylabel="share of sessions", ylim=(0, 1))
    _integer_sessions(axes, len(statuses))
    axes.set_title(f"Statuses along the run\n{identity.title()}", fontsize=10)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    return figure


def per_skill_figure(metrics: LifelongMetrics, identity: RunIdentity) -> Figure:
    """Success per skill: a bar on a full-width track, labelled with rate and counts."""
    plt = _pyplot()
    names = list(metrics.per_skill)
    figure, axes = plt.subplots(figsize=(8, max(2.5, 0.3 * len(names) + 1.2)))
    rates = [metrics.per_skill[n].success_rate for n in names]
    axes.barh(names, [1.0] * len(names), color="#e8e8e8")  # the track: visible at 0%
    axes.barh(names, rates, color=STATUS_COLORS[SessionStatus.COMPLETED.value])
    for y, name in enumerate(names):
        skill = metrics.per_skill[name]
        label = f" {skill.success_rate:.0%} ({skill.correct}/{skill.count})"
        axes.text(1.0, y, label, va="center", fontsize=8)
    axes.set(xlabel="success rate (correct/tasks)", xlim=(0, 1.25))
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    axes.invert_yaxis()
    axes.set_title(f"Success per skill\n{identity.title()}", fontsize=10)
    return figure


def write_plots(
    metrics: LifelongMetrics, folder: Path, sessions: Sequence[Session] | None = None
) -> list[Path]:
    """Write the three PNGs into the run folder (sessions read from it when not given)."""
    if sessions is None:
        sessions = read_sessions(folder / SESSIONS_FILE)[0]
    identity = RunIdentity.of_folder(folder)
    figures = {
        LEARNING_CURVE_FILE: learning_curve_figure(metrics, identity),
        STATUSES_FILE: status_figure([s.status.value for s in sessions], identity),
        PER_SKILL_FILE: per_skill_figure(metrics, identity),
    }
    plt = _pyplot()
    paths = []
    for name, figure in figures.items():
        figure.savefig(folder / name, dpi=100, bbox_inches="tight")
        plt.close(figure)
        paths.append(folder / name)
    return paths


def status_rank(status: str) -> tuple[int, str]:
    """Where a status is listed: the known ones in a fixed order, then others by name."""
    order = list(STATUS_COLORS)
    return (order.index(status) if status in order else len(order), status)


def _integer_sessions(axes, sessions: int) -> None:
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    axes.set_xlim(0.5, max(sessions, 1) + 0.5)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
