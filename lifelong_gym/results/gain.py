"""The gain of a run over its stateless twin: the same stream run by the agent alone.

The gain is the stateful run's success minus the stateless run's, over the tasks both
finished, paired task by task, leaving out the tasks either run errored on (an error is no
verdict on the agent: `lifelong_gym.session.ERROR_STATUSES`); overall and per skill, each
with a 95% confidence interval from a paired bootstrap (`paired_bootstrap`). A gain whose
interval holds 0 is within noise. `run --stateless-baseline` writes the twin into
OUTPUT/stateless (docs/runner.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from lifelong_gym.errors import ConfigError, LifelongGymError
from lifelong_gym.results.folder import SESSIONS_FILE
from lifelong_gym.results.run_record import RunRecord, load_run
from lifelong_gym.session import Session

STATELESS_FOLDER = "stateless"
RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
CHUNK = 1_000_000  # resampled values held at once


def paired_bootstrap(
    differences: Sequence[float],
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> tuple[float, float]:
    """The `level` percentile interval of the mean of paired differences, by bootstrap.

    `differences` holds one value per task: the stateful run's success on it minus the
    stateless run's (1, 0 or -1). Each of the `resamples` draws the same number of tasks
    with replacement from these tasks (a task's two results stay together: that is the
    pairing) and takes the mean of their differences; the interval runs from the
    (1 - level) / 2 to the (1 + level) / 2 quantile of those means. Seeded: the same
    differences give the same interval.
    """
    values = np.asarray(differences, dtype=float)
    if values.size == 0:
        raise ValueError("a bootstrap needs at least one paired task")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    rows = max(1, CHUNK // values.size)
    for start in range(0, resamples, rows):
        count = min(rows, resamples - start)
        drawn = rng.integers(0, values.size, size=(count, values.size))
        means[start : start + count] = values[drawn].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


class GainFigure(BaseModel):
    """One gain: over how many paired tasks, its value and its 95% interval."""

    tasks: int
    stateful: float
    stateless: float
    gain: float
    low: float
    high: float

    @property
    def within_noise(self) -> bool:
        """Whether the interval holds 0."""
        return self.low <= 0 <= self.high

    @property
    def interval(self) -> str:
        """The interval in points, as "[+1.2, +3.4]"."""
        return f"[{self.low * 100:+.1f}, {self.high * 100:+.1f}]"


class Gain(BaseModel):
    """The gain of a run over its stateless twin, overall and per skill; `errored_pairs`
    tasks both finished are left out, as either run errored on them."""

    overall: GainFigure
    per_skill: dict[str, GainFigure]
    errored_pairs: int = 0

    def left_out(self) -> str:
        """The line saying how many pairs were left out, or "" when none was."""
        if not self.errored_pairs:
            return ""
        return (
            f"{self.errored_pairs} tasks left out: either run errored on them "
            "(not counted, see docs/runner.md)"
        )


def _figure(pairs: Sequence[tuple[bool, bool]]) -> GainFigure:
    differences = [float(a) - float(b) for a, b in pairs]
    low, high = paired_bootstrap(differences)
    return GainFigure(
        tasks=len(pairs),
        stateful=sum(a for a, _ in pairs) / len(pairs),
        stateless=sum(b for _, b in pairs) / len(pairs),
        gain=sum(differences) / len(pairs),
        low=low,
        high=high,
    )


def paired_gain(stateful: RunRecord, stateless: RunRecord) -> Gain:
    """The gain of `stateful` over `stateless`; refused unless both ran the same stream."""
    first, second = stateful.identity, stateless.identity
    if first.task_stream != second.task_stream or not first.config or not second.config:
        raise ConfigError(
            f"no paired gain: {stateful.folder} and {stateless.folder} did not run the same "
            f"task stream ({_stream(first.task_stream)} against {_stream(second.task_stream)})"
        )
    others = {s.task_index: s for s in stateless.sessions}
    both: list[tuple[Session, Session]] = [
        (s, others[s.task_index]) for s in stateful.sessions if s.task_index in others
    ]
    paired = [(s, other.solved) for s, other in both if not (s.errored or other.errored)]
    if not paired:
        none = "judged task" if both else "finished task"
        raise ConfigError(
            f"no paired gain: {stateful.folder} and {stateless.folder} share no {none}"
        )
    pairs = [(s.solved, other) for s, other in paired]
    skills = sorted({skill for s, _ in paired for skill in s.skills})
    return Gain(
        errored_pairs=len(both) - len(paired),
        overall=_figure(pairs),
        per_skill={
            skill: _figure(
                [p for (s, _), p in zip(paired, pairs, strict=True) if skill in s.skills]
            )
            for skill in skills
        },
    )


def twin_folder(output: Path) -> Path:
    """Where the stateless twin of the run in `output` is written."""
    return output / STATELESS_FOLDER


def twin_gain(run: RunRecord) -> Gain | str | None:
    """The gain of a run over the twin in its `stateless` folder; None when it has none, the
    one line saying why when the folder holds no twin of it."""
    return twin_and_gain(run)[1]


def twin_and_gain(run: RunRecord) -> tuple[RunRecord | None, Gain | str | None]:
    """The run's stateless twin and the gain over it, as `twin_gain` gives it; the twin is
    None unless there is a gain over it."""
    twin = twin_folder(run.folder)
    if not (twin / SESSIONS_FILE).is_file():
        return None, None
    try:
        record = load_run(twin)
        return record, paired_gain(run, record)
    except LifelongGymError as error:
        return None, str(error)


def format_gain(
    gain: Gain,
    title: str = "gain over the stateless run",
    names: tuple[str, str] = ("stateful", "stateless"),
) -> str:
    """The gain overall and per skill, in points, with the interval, as plain text; `names`
    head the two runs' success columns."""
    width = max(len("overall"), *(len(skill) for skill in gain.per_skill))
    lines = [
        f"{title} (paired bootstrap over tasks, {RESAMPLES:,} resamples, 95% interval):",
        f"{'skill':<{width}}  {'tasks':>5}  {names[0]:>9}  {names[1]:>9}  {'gain':>7}  interval",
    ]
    for name, figure in [("overall", gain.overall), *gain.per_skill.items()]:
        lines.append(
            f"{name:<{width}}  {figure.tasks:>5}  {figure.stateful:>9.1%}  "
            f"{figure.stateless:>9.1%}  {describe_gain(figure)}"
        )
    if note := gain.left_out():
        lines.append(note)
    return "\n".join(lines)


def describe_gain(figure: GainFigure) -> str:
    """A gain in points and its interval, and "within noise" when the interval holds 0."""
    text = f"{figure.gain * 100:>+7.1f}  {figure.interval}"
    return text + ("  within noise" if figure.within_noise else "")


def _stream(stream: tuple[object, ...]) -> str:
    task_set, count, digest = stream
    return f"{task_set}, {count if count is not None else '?'} tasks, order {digest or '?'}"


def paired_gains(runs: Sequence[tuple[str, RunRecord]]) -> list[tuple[str, str, Gain | str]]:
    """The gain of the first run over each other run, by letter; or, for a run of another
    stream, the one line saying why there is none."""
    (first, record), others = runs[0], runs[1:]
    gains: list[tuple[str, str, Gain | str]] = []
    for letter, other in others:
        try:
            gains.append((first, letter, paired_gain(record, other)))
        except ConfigError as error:
            gains.append((first, letter, str(error)))
    return gains


def format_paired_gains(runs: Sequence[tuple[str, RunRecord]]) -> str:
    """The gain of the first run over each other run of the same stream (e.g. its
    stateless twin), and one line for each run whose stream differs."""
    return "\n\n".join(
        format_gain(gain, f"gain of {first} over {other} ({first} - {other})", (first, other))
        if isinstance(gain, Gain)
        else f"gain of {first} over {other}: {gain}"
        for first, other, gain in paired_gains(runs)
    )
