"""Comparing runs: overall and per-skill success side by side, and their learning curves.

Runs are lettered A, B, C, ... in the order given; each is named by its folder (with as
many parent folders as it takes to tell two runs apart), and every table refers to the
letters, so long names are shown whole once instead of cut in every column.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lifelong_gym.errors import ConfigError
from lifelong_gym.metrics import LifelongMetrics, describe_errors
from lifelong_gym.results.folder import CONFIG_FILE, replicates_in
from lifelong_gym.results.run_record import RunRecord, load_run

MAX_FILE_NAME = 120


@dataclass(frozen=True)
class ComparedRun:
    """One run of a comparison: its letter, its unique name, and what it holds."""

    letter: str
    name: str
    record: RunRecord
    replicate_of: Path | None = None  # the folder of replicates it was read from

    @property
    def metrics(self) -> LifelongMetrics:
        """The run's metrics."""
        return self.record.metrics


def load_compared_runs(folders: Sequence[Path]) -> list[ComparedRun]:
    """Read the runs to compare and give each a letter and a name no other run has; refuse
    one run alone, and runs of different environments (their figures mean other things).

    A folder of replicates (`run --replicates K`) stands for its K runs, by seed.
    """
    expanded = {folder: replicates_in(folder) for folder in folders}
    parents = {run: folder for folder, runs in expanded.items() for run in runs}
    folders = [run for folder in folders for run in expanded[folder] or [folder]]
    if len(folders) < 2:
        raise ConfigError(
            "compare needs two or more runs; `lifelong-gym report RUN` reads one run alone"
        )
    names = unique_names(folders)
    runs = [
        ComparedRun(_letter(i), name, load_run(folder), parents.get(folder))
        for i, (name, folder) in enumerate(zip(names, folders, strict=True))
    ]
    known = [run for run in runs if run.record.identity.config]
    if len({run.record.identity.env for run in known}) > 1:
        listed = ", ".join(f"{run.letter}: {run.record.identity.env}" for run in known)
        raise ConfigError(
            f"the runs are of different environments ({listed}); compare runs of one environment"
        )
    return runs


def unique_names(folders: Sequence[Path]) -> list[str]:
    """Each folder's name, with parent folders added until no two names are the same."""
    parts = [folder.resolve().parts for folder in folders]
    depth = [1] * len(parts)
    while True:
        names = ["/".join(p[-d:]) for p, d in zip(parts, depth, strict=True)]
        clashes = {n for n in names if names.count(n) > 1}
        grow = [i for i, n in enumerate(names) if n in clashes and depth[i] < len(parts[i])]
        if not grow:
            return names
        for i in grow:
            depth[i] += 1


def comparison_warnings(runs: Sequence[ComparedRun]) -> list[str]:
    """What makes the runs' figures not comparable task for task: other task streams, or a
    run with no config to check. Runs that differ only in their order's seed are replicates
    of one stream, compared on purpose: no warning."""
    warnings = [
        f"{run.letter} ({run.name}) has no {CONFIG_FILE}: cannot check that it ran the "
        "same environment and tasks as the others"
        for run in runs
        if not run.record.identity.config
    ]
    known = [run for run in runs if run.record.identity.config]
    replicates = {_replicate_key(run) for run in known}
    if len({run.record.identity.task_stream for run in known}) > 1 and len(replicates) > 1:
        listed = "; ".join(f"{run.letter}: {_stream(run)}" for run in known)
        warnings.append(
            f"the runs saw different task sets or orders ({listed}); their figures are not "
            "comparable task for task"
        )
    return warnings


def format_runs(runs: Sequence[ComparedRun]) -> str:
    """The key of the letters: each run's full name, environment, agent and size (and the
    sessions that errored, which its success leaves out)."""
    width = max(len(run.name) for run in runs)
    return "\n".join(
        f"{run.letter}  {run.name:<{width}}  {run.record.identity.env}, "
        f"agent {run.record.identity.agent}, {run.metrics.sessions} sessions"
        + (f"; {errors}" if (errors := describe_errors(run.metrics)) else "")
        for run in runs
    )


def format_replicates(runs: Sequence[ComparedRun]) -> str:
    """A line per folder of replicates: its runs' letters and the spread of their success,
    what the order alone moves a run's figure by."""
    groups: dict[Path, list[ComparedRun]] = {}
    for run in runs:
        if run.replicate_of is not None:
            groups.setdefault(run.replicate_of, []).append(run)
    lines = []
    for folder, group in groups.items():
        rates = [run.metrics.success_rate for run in group]
        mean = sum(rates) / len(rates)
        spread = (sum((r - mean) ** 2 for r in rates) / max(len(rates) - 1, 1)) ** 0.5
        lines.append(
            f"{folder}: {len(group)} replicates ({', '.join(r.letter for r in group)}), "
            f"success mean {mean:.1%}, min {min(rates):.1%}, max {max(rates):.1%}, "
            f"sd {spread * 100:.1f} points"
        )
    return "\n".join(lines)


def format_comparison(names: Sequence[str], runs: Sequence[LifelongMetrics]) -> str:
    """A table: overall success and success per skill (over each run's judged sessions),
    each run beside the first, with the gain.

    `names` head the columns (the runs' letters).
    """
    skills = sorted({skill for run in runs for skill in run.per_skill})
    width = max(len("skill"), len("overall"), *(len(s) for s in skills))
    columns = [names[0]] + [f"{n} (Δ)" for n in names[1:]]
    header = f"{'skill':<{width}}  " + "  ".join(f"{c:>15}" for c in columns)

    def row(label: str, values: list[float | None]) -> str:
        first = values[0]
        cells = [_percent(first)]
        for value in values[1:]:
            gain = "" if value is None or first is None else f" ({(value - first) * 100:+.1f})"
            cells.append(_percent(value) + gain)
        return f"{label:<{width}}  " + "  ".join(f"{c:>15}" for c in cells)

    lines = [header, row("overall", [run.success_rate for run in runs])]
    for skill in skills:
        values = [r.per_skill[skill].success_rate if skill in r.per_skill else None for r in runs]
        lines.append(row(skill, values))
    return "\n".join(lines)


def default_plot_path(runs: Sequence[ComparedRun]) -> Path:
    """Where the comparison plot goes by default: beside the first run, named after all runs."""
    stem = "comparison_" + "_vs_".join(re.sub(r"[^\w.-]+", "-", run.name) for run in runs)
    if len(stem) > MAX_FILE_NAME:
        digest = hashlib.sha256(stem.encode()).hexdigest()[:10]
        stem = f"{stem[: MAX_FILE_NAME - 11]}-{digest}"
    return runs[0].record.folder.resolve().parent / f"{stem}.png"


def plot_comparison(runs: Sequence[ComparedRun], path: Path) -> Path:
    """One plot of the runs' cumulative (solid) and windowed (dashed) learning curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axes = plt.subplots(figsize=(9, 5))
    for run in runs:
        curve = run.metrics.learning_curve
        steps = range(1, len(curve.cumulative) + 1)
        (line,) = axes.plot(steps, curve.cumulative, label=f"{run.letter}: {run.name}")
        axes.plot(steps, curve.windowed, color=line.get_color(), alpha=0.4, linestyle="--")
    windows = sorted({run.metrics.learning_curve.window for run in runs})
    axes.set(xlabel="session", ylabel="success rate", ylim=(-0.02, 1.02))
    axes.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    envs = ", ".join(sorted({run.record.identity.env for run in runs}))
    axes.set_title(
        f"Learning curves, {envs} (solid: cumulative; dashed: last "
        f"{'/'.join(map(str, windows))} sessions)",
        fontsize=10,
    )
    axes.legend(loc="upper left", bbox_to_anchor=(0, -0.14), fontsize=8, frameon=False)
    axes.grid(alpha=0.3)
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)
    return path


def solved_by_one(first: RunRecord, second: RunRecord) -> tuple[list[int], list[int]]:
    """The task indices both runs were judged on (neither errored) that only the first, or
    only the second, solved."""
    solved = [
        {s.task_index: s.solved for s in run.sessions if not s.errored} for run in (first, second)
    ]
    common = [index for index in solved[0] if index in solved[1]]
    only_first = [i for i in common if solved[0][i] and not solved[1][i]]
    only_second = [i for i in common if solved[1][i] and not solved[0][i]]
    return only_first, only_second


def _stream(run: ComparedRun) -> str:
    identity = run.record.identity
    tasks = identity.config.get("tasks") or {}
    return (
        f"{identity.task_set}, {tasks.get('count', '?')} tasks, order {identity.task_order} "
        f"{tasks.get('order_sha256', '')}".rstrip()
    )


def _replicate_key(run: ComparedRun) -> tuple[object, ...]:
    """What replicates share: the task stream but for the seed of its order (the same tasks
    in orders the researcher chose to vary)."""
    identity = run.record.identity
    if identity.config.get("seed") is None:
        return identity.task_stream
    return (*identity.task_stream[:2], identity.config.get("order"))


def _letter(position: int) -> str:
    letters = string.ascii_uppercase
    return letters[position] if position < 26 else f"R{position + 1}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
