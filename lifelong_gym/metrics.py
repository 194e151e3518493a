"""Lifelong metrics: overall, per-status and per-skill success, and the learning curve."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from lifelong_gym.session import EvaluationOutcome, Session

DEFAULT_WINDOW = 50


class SkillMetrics(BaseModel):
    """How often the tasks that exercise one skill were solved."""

    count: int
    correct: int
    success_rate: float


class LearningCurve(BaseModel):
    """Success after each session: cumulative, and over a sliding window.

    `window` is the width actually used: the one asked for, or the run's length when the
    run is shorter (a 20-session run's window is 20 sessions, not 50).
    """

    window: int
    cumulative: list[float] = Field(default_factory=list)
    windowed: list[float] = Field(default_factory=list)


class LifelongMetrics(BaseModel):
    """The figures of a lifelong run over its finished sessions."""

    sessions: int
    correct: int
    success_rate: float
    status_counts: dict[str, int]
    status_rates: dict[str, float]
    outcome_counts: dict[str, int]
    per_skill: dict[str, SkillMetrics]
    learning_curve: LearningCurve


def compute_metrics(sessions: Sequence[Session], window: int = DEFAULT_WINDOW) -> LifelongMetrics:
    """Summarise finished sessions in the order they were run."""
    total = len(sessions)
    solved = [s.outcome == EvaluationOutcome.CORRECT for s in sessions]
    statuses = Counter(s.status.value for s in sessions)
    skill_count: Counter[str] = Counter()
    skill_correct: Counter[str] = Counter()
    for session, ok in zip(sessions, solved, strict=True):
        for skill in dict.fromkeys(session.skills):
            skill_count[skill] += 1
            skill_correct[skill] += ok
    return LifelongMetrics(
        sessions=total,
        correct=sum(solved),
        success_rate=sum(solved) / total if total else 0.0,
        status_counts=dict(sorted(statuses.items())),
        status_rates={k: v / total for k, v in sorted(statuses.items())},
        outcome_counts=dict(sorted(Counter(s.outcome.value for s in sessions).items())),
        per_skill={
            skill: SkillMetrics(
                count=n,
                correct=skill_correct[skill],
                success_rate=skill_correct[skill] / n,
            )
            for skill, n in sorted(skill_count.items())
        },
        learning_curve=learning_curve(solved, window),
    )


def learning_curve(solved: Sequence[bool], window: int = DEFAULT_WINDOW) -> LearningCurve:
    """Cumulative and sliding-window success after each session."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    window = min(window, len(solved)) or window
    cumulative, windowed = [], []
    running = 0
    for i, ok in enumerate(solved):
        running += ok
        cumulative.append(running / (i + 1))
        start = max(0, i + 1 - window)
        in_window = solved[start : i + 1]
        windowed.append(sum(in_window) / len(in_window))
    return LearningCurve(window=window, cumulative=cumulative, windowed=windowed)


def wilson_interval(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95% with the default `z`).

    It stays within [0, 1] and is not empty at 0 or `total` successes, where the normal
    approximation gives a zero-width interval.
    """
    if total <= 0:
        return (0.0, 1.0)
    rate = successes / total
    centre = (rate + z * z / (2 * total)) / (1 + z * z / total)
    half = (
        z / (1 + z * z / total) * (rate * (1 - rate) / total + z * z / (4 * total * total)) ** 0.5
    )
    return (max(0.0, centre - half), min(1.0, centre + half))
