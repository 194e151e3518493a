"""What each task of a run cost: model calls, tokens, the memory's share, wall time, money.

The meter reads the agent's model's usage log (`LanguageModel.usage`: one record per reply,
as the back-end counted it) around each thing the runner does for a task: the agent's
replies are the task's `agent` calls, the model calls its callbacks make (a vote, a
distillation) are its `methods` calls. The memory's share is what the callbacks added to
the task's opening prompt when it began, in the model's tokens where it counts them, else
in characters. Nothing is guessed: an agent without a model makes 0 calls of unknown tokens,
and a model that does not report its usage makes calls of unknown number and tokens.

Costs are recorded in `costs.jsonl`, one line per finished session, apart from
`sessions.jsonl` (whose bytes repeat from run to run, which a wall time would break).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from lifelong_gym.agents.models import Usage
from lifelong_gym.errors import RunConfigError, RunDirectoryError
from lifelong_gym.methods.budget import model_of, token_counter
from lifelong_gym.results.folder import COSTS_FILE, append_whole
from lifelong_gym.session import Session

MemoryUnit = Literal["tokens", "characters"]
T = TypeVar("T")


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


# -- measuring --------------------------------------------------------------------------


@dataclass
class _Tally:
    task_index: int
    started: float
    agent: CallCost
    methods: CallCost
    memory: int = 0


class CostMeter:
    """Measures the tasks in flight, by their position in the stream."""

    def __init__(self, agent: Any):
        self.model = model_of(agent)
        self.log = self.model.usage if getattr(self.model, "reports_usage", False) else None
        self.count_tokens = token_counter(self.model)
        self.memory_unit: MemoryUnit = "tokens" if self.count_tokens else "characters"
        self._tallies: dict[int, _Tally] = {}

    def _nothing_yet(self) -> CallCost:
        """No call so far: 0 calls of 0 tokens, of unknown tokens when there is no model to
        count them, and of unknown number when the model does not report its calls."""
        if self.log is not None:
            return CallCost(calls=0, prompt_tokens=0, generated_tokens=0)
        return CallCost(calls=0 if self.model is None else None)

    def begin(self, position: int, task_index: int) -> None:
        """A task of the stream is created: its clock starts."""
        self._tallies[position] = _Tally(
            task_index, time.monotonic(), self._nothing_yet(), self._nothing_yet()
        )

    def opening(self, position: int, before: str, after: str) -> None:
        """The task's opening prompt as the environment gave it, and as the callbacks left it."""
        if before == after:
            return
        count = self.count_tokens or len
        self._tallies[position].memory = count(after) - count(before)

    def agent_replies(self, positions: Sequence[int], ask: Callable[[], list[Any]]) -> list[Any]:
        """Ask the agent for the replies of the tasks at `positions`; charge each its calls.

        A reply that is an exception made no logged call. When the calls logged do not line
        up one to one with the replies (an agent that calls its model more than once per
        reply, in a batch of several), the batch's tasks get unknown calls and tokens.
        """
        mark = self._mark()
        replies = ask()
        if self.log is None:
            return replies
        records = self.log.since(mark)
        answered = [
            p for p, r in zip(positions, replies, strict=True) if not isinstance(r, Exception)
        ]
        if len(records) == len(answered):
            for position, record in zip(answered, records, strict=True):
                _add(self._tallies[position].agent, [record])
        elif len(answered) == 1:
            _add(self._tallies[answered[0]].agent, records)
        else:
            for position in answered:
                self._tallies[position].agent = CallCost(calls=None)
        return replies

    def method_event(self, position: int, call: Callable[[], T]) -> T:
        """Run a callback event of the task at `position`; charge it the model calls made."""
        mark = self._mark()
        result = call()
        if self.log is not None:
            _add(self._tallies[position].methods, self.log.since(mark))
        return result

    def end(self, position: int) -> SessionCost:
        """The cost of a finished task (its clock stops)."""
        tally = self._tallies.pop(position)
        return SessionCost(
            position=position,
            task_index=tally.task_index,
            agent=tally.agent,
            methods=tally.methods,
            memory=tally.memory,
            memory_unit=self.memory_unit,
            wall_seconds=round(time.monotonic() - tally.started, 6),
        )

    def _mark(self) -> int:
        return self.log.mark() if self.log is not None else 0


def _add(cost: CallCost, records: Sequence[Usage]) -> None:
    """Add the calls of `records` to `cost`; an unknown count stays unknown."""
    cost.calls = plus_known(cost.calls, len(records))
    for record in records:
        cost.prompt_tokens = plus_known(cost.prompt_tokens, record.prompt_tokens)
        cost.generated_tokens = plus_known(cost.generated_tokens, record.generated_tokens)


def plus_known(total: int | None, more: int | None) -> int | None:
    """A sum that is unknown when either part is."""
    return None if total is None or more is None else total + more


# -- the record ---------------------------------------------------------------------------


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
