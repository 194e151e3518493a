"""What a person reads after a run: a summary, a per-skill table and two plots."""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.metrics import DEFAULT_WINDOW, LifelongMetrics, compute_metrics
from lifelong_gym.run.folder import METRICS_FILE, SESSIONS_FILE, read_sessions, write_json_atomic

LEARNING_CURVE_FILE = "learning_curve.png"
PER_SKILL_FILE = "per_skill.png"


def format_report(metrics: LifelongMetrics) -> str:
    """The overall figures, the status counts and the per-skill table as plain text."""
    lines = [
        f"sessions {metrics.sessions}   correct {metrics.correct}   "
        f"success rate {metrics.success_rate:.1%}",
        "statuses: " + (", ".join(f"{k} {v}" for k, v in metrics.status_counts.items()) or "none"),
    ]
    if metrics.per_skill:
        width = max(len("skill"), *(len(name) for name in metrics.per_skill))
        lines += ["", f"{'skill':<{width}}  {'tasks':>6}  {'correct':>7}  {'success':>7}"]
        lines += [
            f"{name:<{width}}  {m.count:>6}  {m.correct:>7}  {m.success_rate:>7.1%}"
            for name, m in metrics.per_skill.items()
        ]
    return "\n".join(lines)


def write_plots(metrics: LifelongMetrics, folder: Path) -> list[Path]:
    """Write the learning curve and the per-skill bar chart as PNGs; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = metrics.learning_curve
    figure, axes = plt.subplots(figsize=(8, 4.5))
    steps = range(1, len(curve.cumulative) + 1)
    axes.plot(steps, curve.cumulative, label="cumulative")
    axes.plot(steps, curve.windowed, label=f"last {curve.window} sessions", alpha=0.7)
    axes.set(xlabel="session", ylabel="success rate", ylim=(-0.02, 1.02))
    axes.set_title("Learning curve")
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    curve_path = folder / LEARNING_CURVE_FILE
    figure.savefig(curve_path, dpi=100, bbox_inches="tight")
    plt.close(figure)

    names = list(metrics.per_skill)
    figure, axes = plt.subplots(figsize=(8, max(2.5, 0.3 * len(names) + 1)))
    rates = [metrics.per_skill[n].success_rate for n in names]
    axes.barh(names, rates)
    for y, name in enumerate(names):
        axes.text(rates[y], y, f" {metrics.per_skill[name].count}", va="center", fontsize=8)
    axes.set(xlabel="success rate (label: tasks)", xlim=(0, 1.1))
    axes.invert_yaxis()
    axes.set_title("Success per skill")
    skill_path = folder / PER_SKILL_FILE
    figure.savefig(skill_path, dpi=100, bbox_inches="tight")
    plt.close(figure)
    return [curve_path, skill_path]


def report_run(folder: Path, window: int = DEFAULT_WINDOW) -> tuple[LifelongMetrics, list[Path]]:
    """Recompute the metrics of a finished or partial run, rewrite `metrics.json`, plot."""
    sessions_path = folder / SESSIONS_FILE
    if not sessions_path.is_file():
        raise FileNotFoundError(f"{folder} holds no {SESSIONS_FILE}: is it a run's output folder?")
    sessions = read_sessions(sessions_path)[0]
    metrics = compute_metrics(sessions, window=window)
    write_json_atomic(folder / METRICS_FILE, metrics.model_dump(mode="json"))
    return metrics, write_plots(metrics, folder) if sessions else []
