"""Lifelong metrics: overall, per-status and per-skill success, and the learning curve.

Success is counted over the judged sessions only (`JUDGED_STATUSES`): a session an error
ended (`ERROR_STATUSES`: ours, the environment's, a callback's or a custom agent's) says
nothing of the agent, so it is counted apart (`errored`), never as a failure or a success.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, model_validator

from lifelong_gym.session import ERROR_STATUSES, Session

DEFAULT_WINDOW = 50


class SkillMetrics(BaseModel):
    """How often the judged tasks that exercise one skill were solved."""

    count: int
    correct: int
    success_rate: float


class LearningCurve(BaseModel):
    """Success after each judged session: cumulative, and over a sliding window.

    `window` is the width actually used: the one asked for, or the run's length when the
    run is shorter (a 20-session run's window is 20 sessions, not 50).
    """

    window: int
    cumulative: list[float] = Field(default_factory=list)
    windowed: list[float] = Field(default_factory=list)


class LifelongMetrics(BaseModel):
    """The figures of a lifelong run over its finished sessions: `sessions` of them,
    `judged` by the benchmark and `errored` (counted apart); `correct` and `success_rate`
    (correct over judged), `per_skill` and `learning_curve` are over the judged ones, the
    status and outcome counts over all."""

    sessions: int
    judged: int
    errored: int
    correct: int
    success_rate: float
    status_counts: dict[str, int]
    status_rates: dict[str, float]
    outcome_counts: dict[str, int]
    per_skill: dict[str, SkillMetrics]
    learning_curve: LearningCurve

    @model_validator(mode="before")
    @classmethod
    def _count_errors_of_earlier_files(cls, data: Any) -> Any:
        """A `metrics.json` written before errors were counted apart: its errored sessions
        are in its status counts (its rates still count them as failures)."""
        if isinstance(data, dict) and "judged" not in data:
            counts = data.get("status_counts") or {}
            errored = sum(counts.get(status.value, 0) for status in ERROR_STATUSES)
            data = {**data, "judged": data.get("sessions", 0) - errored, "errored": errored}
        return data

    @property
    def errored_counts(self) -> dict[str, int]:
        """The count of each error status the run has (none when nothing errored)."""
        errors = {status.value for status in ERROR_STATUSES}
        return {k: v for k, v in self.status_counts.items() if k in errors}


def compute_metrics(sessions: Sequence[Session], window: int = DEFAULT_WINDOW) -> LifelongMetrics:
    """Summarise finished sessions in the order they were run."""
    total = len(sessions)
    judged = [s for s in sessions if not s.errored]
    solved = [s.solved for s in judged]
    statuses = Counter(s.status.value for s in sessions)
    skill_count: Counter[str] = Counter()
    skill_correct: Counter[str] = Counter()
    for session, ok in zip(judged, solved, strict=True):
        for skill in dict.fromkeys(session.skills):
            skill_count[skill] += 1
            skill_correct[skill] += ok
    return LifelongMetrics(
        sessions=total,
        judged=len(judged),
        errored=total - len(judged),
        correct=sum(solved),
        success_rate=sum(solved) / len(judged) if judged else 0.0,
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


def format_status_counts(counts: Mapping[str, int]) -> str:
    """Counts by status as text, sorted by status: `agent_unknown_error 34, completed 2`."""
    return ", ".join(f"{status} {count}" for status, count in sorted(counts.items()))


def describe_errors(metrics: LifelongMetrics) -> str:
    """`34 errored (agent_unknown_error 34): not counted, see docs/runner.md`, or "" when no
    session errored."""
    if not metrics.errored:
        return ""
    statuses = format_status_counts(metrics.errored_counts)
    return f"{metrics.errored} errored ({statuses}): not counted, see docs/runner.md"


def describe_success(metrics: LifelongMetrics) -> str:
    """The success rate and what it is over: `43.3% over 66 judged tasks; 34 errored
    (agent_unknown_error 34): not counted, see docs/runner.md` (the rate alone when no
    session errored)."""
    if not metrics.errored:
        return f"{metrics.success_rate:.1%}"
    judged = f"{metrics.success_rate:.1%} over {metrics.judged} judged tasks"
    return f"{judged}; {describe_errors(metrics)}"


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
