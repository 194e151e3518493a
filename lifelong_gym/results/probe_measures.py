"""The lifelong measures of a run's probes: the accuracy matrix, forgetting, transfer, AULC.

Pure functions of the probe records (`probes.jsonl`, read by `read_probes`; the engine's
`lifelong_gym.run.probes` plays them) and the stream's order of skills; docs/metrics.md
defines each with its formula and a worked example. A probe point is the number of stream
tasks finished before it (0, N, 2N, ...): the probe at point p saw the stream's tasks
0..p-1, none of task p or later.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from lifelong_gym.errors import RunDirectoryError
from lifelong_gym.results.folder import PROBES_FILE, REPAIR
from lifelong_gym.session import ERROR_STATUSES

Matrix = dict[int, dict[str, float]]
"""Probe point -> skill -> mean probe reward of that skill's probe tasks."""


class ProbeRecord(BaseModel):
    """One probe episode (a line of `probes.jsonl`)."""

    point: int  # stream tasks finished before the probe
    task_index: int  # in the probe set
    skills: list[str]
    status: str
    reward: float


def read_probes(path: Path) -> tuple[list[ProbeRecord], list[int]]:
    """The records of a `probes.jsonl` and where each line ends; bytes after the last
    newline (a write cut short) are ignored, a damaged complete line is an error."""
    if not path.exists():
        return [], []
    complete, newline, _torn = path.read_bytes().rpartition(b"\n")
    records, ends, offset = [], [], 0
    for number, line in enumerate(complete.split(b"\n") if newline else [], start=1):
        offset += len(line) + 1
        try:
            records.append(ProbeRecord.model_validate_json(line))
        except ValidationError as error:
            problem = error.errors()[0]["msg"]
            raise RunDirectoryError(
                f"{path}:{number} is not a probe record ({problem}); {REPAIR}"
            ) from None
        ends.append(offset)
    return records, ends


def load_probes(folder: Path) -> list[ProbeRecord]:
    """The probe records of a run folder (none when it has no `probes.jsonl`)."""
    return read_probes(folder / PROBES_FILE)[0]


@dataclass(frozen=True)
class ProbeMeasures:
    """The matrix and the measures derived from it, per skill and their means over skills.

    A skill is left out of `backward` and `forward` when the stream never plays it (or
    when no probe point falls where the measure needs one), and out of `forgetting` when
    the probes have only one point.
    """

    matrix: Matrix
    skills: tuple[str, ...]
    forgetting: dict[str, float]
    backward: dict[str, float]
    forward: dict[str, float]
    aulc: float

    @property
    def points(self) -> list[int]:
        """The probe points, in stream order."""
        return sorted(self.matrix)

    def mean(self, measure: dict[str, float]) -> float | None:
        """A per-skill measure's mean over the skills it is defined for (None: none).

        Sums are `math.fsum`, exact whatever the order of the skills."""
        return math.fsum(measure.values()) / len(measure) if measure else None


def accuracy_matrix(records: Sequence[ProbeRecord]) -> Matrix:
    """A[p][s]: the mean reward of the probe tasks of skill s at point p, over the judged
    episodes (an errored one says nothing of the agent: it is left out, as in the stream's
    success)."""
    sums: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    errors = {status.value for status in ERROR_STATUSES}
    for record in records:
        if record.status in errors:
            continue
        for skill in record.skills:
            sums[record.point][skill].append(record.reward)
    return {
        point: {skill: math.fsum(rewards) / len(rewards) for skill, rewards in sorted(row.items())}
        for point, row in sorted(sums.items())
    }


def forgetting(matrix: Matrix) -> dict[str, float]:
    """Per skill: the best accuracy at an earlier point minus the accuracy at the last."""
    points = sorted(matrix)
    if len(points) < 2:
        return {}
    final = matrix[points[-1]]
    return {
        skill: max(matrix[p][skill] for p in points[:-1] if skill in matrix[p]) - final[skill]
        for skill in final
        if any(skill in matrix[p] for p in points[:-1])
    }


def stream_spans(stream_skills: Sequence[Sequence[str]]) -> dict[str, tuple[int, int]]:
    """Per skill: the positions of its first and last task in the stream."""
    spans: dict[str, tuple[int, int]] = {}
    for position, skills in enumerate(stream_skills):
        for skill in skills:
            first = spans[skill][0] if skill in spans else position
            spans[skill] = (first, position)
    return spans


def backward_transfer(matrix: Matrix, stream_skills: Sequence[Sequence[str]]) -> dict[str, float]:
    """Per skill: A[last][s] minus A[first point after s's last stream task][s]."""
    points = sorted(matrix)
    measure = {}
    for skill, (_, last) in stream_spans(stream_skills).items():
        after = [p for p in points if p > last and skill in matrix[p]]
        if after and skill in matrix[points[-1]]:
            measure[skill] = matrix[points[-1]][skill] - matrix[after[0]][skill]
    return dict(sorted(measure.items()))


def forward_transfer(
    matrix: Matrix, stream_skills: Sequence[Sequence[str]], baseline: Matrix | None = None
) -> dict[str, float]:
    """Per skill: A[last point at or before s's first stream task][s] minus A[0][s], or
    minus the stateless twin's accuracy at that same point when `baseline` is given."""
    points = sorted(matrix)
    measure = {}
    for skill, (first, _) in stream_spans(stream_skills).items():
        before = [p for p in points if p <= first and skill in matrix[p]]
        if not before:
            continue
        point = before[-1]
        reference = baseline.get(point, {}) if baseline is not None else matrix[points[0]]
        if skill in reference:
            measure[skill] = matrix[point][skill] - reference[skill]
    return dict(sorted(measure.items()))


def area_under_learning_curve(matrix: Matrix) -> float:
    """The mean over probe points of the mean accuracy over the point's skills."""
    if not matrix:
        return 0.0
    return math.fsum(math.fsum(row.values()) / len(row) for row in matrix.values()) / len(matrix)


def probe_measures(
    records: Sequence[ProbeRecord],
    stream_skills: Sequence[Sequence[str]],
    baseline: Sequence[ProbeRecord] | None = None,
) -> ProbeMeasures:
    """Every measure of a run's probes; `stream_skills`: each stream task's skills, in
    order; `baseline`: the stateless twin's probes (for forward transfer)."""
    matrix = accuracy_matrix(records)
    twin = accuracy_matrix(baseline) if baseline is not None else None
    return ProbeMeasures(
        matrix=matrix,
        skills=tuple(sorted({skill for row in matrix.values() for skill in row})),
        forgetting=forgetting(matrix),
        backward=backward_transfer(matrix, stream_skills),
        forward=forward_transfer(matrix, stream_skills, twin),
        aulc=area_under_learning_curve(matrix),
    )
