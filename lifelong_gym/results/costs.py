"""The cost log of a run folder: `costs.jsonl`, one line per finished session, apart from
`sessions.jsonl` (whose bytes repeat from run to run, which a wall time would break).

A line is a `SessionCost`: the task's position in the stream and index in its set, the
agent's model calls and their tokens, the calls its callbacks made, the memory's share of
its opening prompt (in the model's tokens where it counts them, else in characters) and
its wall time; a count nobody reported is None. The engine's meter
(`lifelong_gym.run.cost`) measures them; `Price` turns tokens into dollars.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from lifelong_gym.errors import RunConfigError, RunDirectoryError
from lifelong_gym.results.folder import COSTS_FILE, append_whole
from lifelong_gym.session import Session

MemoryUnit = Literal["tokens", "characters"]


class CallCost(BaseModel):
    """Model calls and their tokens; None where they are unknown."""

    calls: int | None = 0
    prompt_tokens: int | None = None
    generated_tokens: int | None = None


class SessionCost(BaseModel):
    """What one task of the stream cost (a line of `costs.jsonl`)."""

    position: int
    task_index: int
    agent: CallCost
    methods: CallCost
    memory: int = 0  # what the callbacks added to the opening prompt, in `memory_unit`
    memory_unit: MemoryUnit = "characters"
    wall_seconds: float = 0.0


class Price(BaseModel):
    """Dollars per million prompt tokens and per million generated tokens."""

    prompt: float
    generated: float

    def dollars(self, prompt_tokens: int, generated_tokens: int) -> float:
        """The price of so many tokens."""
        return (prompt_tokens * self.prompt + generated_tokens * self.generated) / 1e6


def parse_price(text: str) -> Price:
    """`--price-per-mtok PROMPT[,GENERATED]`: dollars per million tokens (one price: both)."""
    parts = text.split(",")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or any(not v >= 0 or v == float("inf") for v in values):
        raise RunConfigError(
            f"--price-per-mtok {text!r}: give dollars per million tokens as PROMPT or "
            "PROMPT,GENERATED, numbers of 0 or more (e.g. 0.15,0.60)"
        )
    return Price(prompt=values[0], generated=values[-1])


def plus_known(total: int | None, more: int | None) -> int | None:
    """A sum that is unknown when either part is."""
    return None if total is None or more is None else total + more


class CostLog:
    """`costs.jsonl` of a run folder: one line per finished session, appended at once."""

    def __init__(self, folder: Path):
        self.path = folder / COSTS_FILE

    def resume(self, history: Sequence[Session]) -> list[SessionCost | None]:
        """Keep the lines of the sessions recorded and drop the lines after them (one written
        before its session's, when the process was killed in between); return each recorded
        session's cost, None where it has none (sessions of a run begun before costs were)."""
        costs: list[SessionCost | None] = [None] * len(history)
        if not self.path.exists():
            return costs
        size = 0
        lines = self.path.read_bytes().split(b"\n")  # a torn tail comes after every cost
        for cost, line in zip(read_costs(self.path), lines, strict=False):
            position = cost.position
            if position >= len(history) or history[position].task_index != cost.task_index:
                break
            costs[position] = cost
            size += len(line) + 1
        if self.path.stat().st_size != size:
            os.truncate(self.path, size)
        return costs

    def append(self, cost: SessionCost) -> None:
        """Record a finished session's cost (before its session line: see `resume`)."""
        line = (cost.model_dump_json() + "\n").encode()
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            append_whole(descriptor, line)
        finally:
            os.close(descriptor)


def read_costs(path: Path) -> list[SessionCost]:
    """The costs of a `costs.jsonl` (none for a folder without one); a torn tail is ignored."""
    if not path.is_file():
        return []
    complete, newline, _torn = path.read_bytes().rpartition(b"\n")
    costs: list[SessionCost] = []
    for number, line in enumerate(complete.split(b"\n") if newline else [], start=1):
        try:
            costs.append(SessionCost.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as error:
            raise RunDirectoryError(
                f"{path}:{number} is not a cost record ({error}); repair or delete the file"
            ) from None
    return costs


def costs_of(folder: Path, sessions: Sequence[Session]) -> list[SessionCost | None]:
    """Each recorded session's cost, or None where none was recorded (an older run)."""
    costs = {c.position: c for c in read_costs(folder / COSTS_FILE)}
    return [
        cost if (cost := costs.get(p)) is not None and cost.task_index == s.task_index else None
        for p, s in enumerate(sessions)
    ]
