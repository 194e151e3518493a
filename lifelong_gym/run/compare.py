"""Comparing runs: overall and per-skill success side by side, and their learning curves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lifelong_gym.metrics import LifelongMetrics, compute_metrics
from lifelong_gym.run.folder import SESSIONS_FILE, read_sessions

COMPARISON_PLOT = "comparison.png"


def load_run_metrics(folder: Path) -> LifelongMetrics:
    """The metrics of a run folder, recomputed from its sessions."""
    path = folder / SESSIONS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder} holds no {SESSIONS_FILE}: is it a run's output folder?")
    return compute_metrics(read_sessions(path)[0])


def format_comparison(names: Sequence[str], runs: Sequence[LifelongMetrics]) -> str:
    """A table: overall success and success per skill, each run beside the first, with the gain."""
    skills = sorted({skill for run in runs for skill in run.per_skill})
    width = max(len("skill"), *(len(s) for s in skills)) if skills else len("overall")
    columns = [names[0][-18:]] + [f"{n[-12:]} (Δ)" for n in names[1:]]
    header = f"{'skill':<{width}}  " + "  ".join(f"{c:>20}" for c in columns)

    def row(label: str, values: list[float | None]) -> str:
        first = values[0]
        cells = [_percent(first)]
        for value in values[1:]:
            gain = "" if value is None or first is None else f" ({(value - first) * 100:+.1f})"
            cells.append(_percent(value) + gain)
        return f"{label:<{width}}  " + "  ".join(f"{c:>20}" for c in cells)

    lines = [header, row("overall", [run.success_rate for run in runs])]
    for skill in skills:
        values = [r.per_skill[skill].success_rate if skill in r.per_skill else None for r in runs]
        lines.append(row(skill, values))
    return "\n".join(lines)


def plot_comparison(names: Sequence[str], runs: Sequence[LifelongMetrics], path: Path) -> Path:
    """One plot of the runs' cumulative and windowed learning curves overlaid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for name, run in zip(names, runs, strict=True):
        curve = run.learning_curve
        steps = range(1, len(curve.cumulative) + 1)
        (line,) = axes.plot(steps, curve.cumulative, label=f"{name} (cumulative)")
        axes.plot(steps, curve.windowed, color=line.get_color(), alpha=0.35, linestyle="--")
    axes.set(xlabel="session", ylabel="success rate", ylim=(-0.02, 1.02))
    axes.set_title("Learning curves (dashed: sliding window)")
    axes.legend(loc="lower right", fontsize=8)
    axes.grid(alpha=0.3)
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)
    return path


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
