"""What each task of a run cost: model calls, tokens, the memory's share, wall time, money.

The meter reads the agent's model's usage log (`LanguageModel.usage`: one record per reply,
as the back-end counted it) around each thing the runner does for a task: the agent's
replies are the task's `agent` calls, the model calls its callbacks make (a vote, a
distillation) are its `methods` calls. The memory's share is what the callbacks added to
the task's opening prompt when it began, in the model's tokens where it counts them, else
in characters. Nothing is guessed: an agent without a model makes 0 calls of unknown tokens,
and a model that does not report its usage makes calls of unknown number and tokens.

The costs are recorded in `costs.jsonl` (`lifelong_gym.results.costs`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lifelong_gym.agents.models import Usage
from lifelong_gym.methods.budget import model_of, token_counter
from lifelong_gym.results.costs import CallCost, MemoryUnit, SessionCost, plus_known

T = TypeVar("T")


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
