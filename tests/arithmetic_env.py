"""A small but real lifelong environment for the runner's tests: add two numbers.

The agent may `Action: Think` (no effect, one turn) or `Action: Answer N`; anything else
fails validation. Each task's skill is the size of its numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lifelong_gym.agents import Agent, AgentError
from lifelong_gym.core import Evaluation, Interaction, LifelongEnv
from lifelong_gym.session import ChatMessage, EvaluationOutcome, Role, Session, SessionStatus
from lifelong_gym.tasks import Task, TaskSet

ANSWER = re.compile(r"Action:\s*Answer\s+(-?\d+)\s*$")


class SumTask(Task):
    """Add `a` and `b`."""

    a: int
    b: int

    def oracle_reply(self, history: Sequence[ChatMessage]) -> str:
        """Think once, then answer."""
        turns = sum(1 for m in history if m.role == Role.AGENT)
        return "Action: Think" if turns == 0 else f"Action: Answer {self.a + self.b}"


def sum_tasks(count: int = 12) -> TaskSet[SumTask]:
    """`count` tasks in a sample order that is not the index order."""
    tasks = [
        SumTask(index=i, a=i * 7 % 13, b=i * 5 % 11, skills=("small" if i % 3 else "large",))
        for i in range(count)
    ]
    return TaskSet(tasks, order=[*range(1, count, 2), *range(0, count, 2)], name="sums")


class SumEnv(LifelongEnv[SumTask]):
    """Adds two numbers per task; counts the tasks it started and ended."""

    def __init__(
        self, tasks: TaskSet[SumTask] | None = None, max_turns: int = 3, url: str | None = None
    ):
        super().__init__(tasks or sum_tasks(), max_turns=max_turns)
        self.url = url  # unused: stands for a back-end's address in the config tests
        self.started = 0
        self.ended = 0
        self.answer: int | None = None

    def interact(self, action: str) -> Interaction:
        """Think, or answer."""
        if action.strip() == "Action: Think":
            return Interaction("Go on.")
        match = ANSWER.match(action.strip())
        if match is None:
            return Interaction("No valid action.", True, SessionStatus.AGENT_VALIDATION_FAILED)
        self.answer = int(match.group(1))
        return Interaction("", done=True)

    def release(self) -> None:
        """Nothing to free."""

    def _start_task(self, task: SumTask) -> str:
        self.started += 1
        self.answer = None
        return f"What is {task.a} + {task.b}? Reply 'Action: Think' or 'Action: Answer N'."

    def _evaluate(self, task: SumTask, session: Session) -> Evaluation:
        correct = self.answer == task.a + task.b
        outcome = EvaluationOutcome.CORRECT if correct else EvaluationOutcome.INCORRECT
        return Evaluation(outcome, {"answer": self.answer})

    def _end_task(self) -> None:
        self.ended += 1


class PatternAgent(Agent):
    """Answers right except on the task indices in `wrong`, and raises on those in `fail`."""

    def __init__(self, tasks: TaskSet[SumTask], wrong=(), fail=(), error=RuntimeError):
        self.tasks, self.wrong, self.fail, self.error = tasks, set(wrong), set(fail), error
        self.calls = 0

    def act(self, session: Session) -> str:
        """The oracle's reply, or a wrong or failing one."""
        self.calls += 1
        if session.task_index in self.fail:
            raise self.error("the model is down")
        reply = self.tasks[session.task_index].oracle_reply(session.chat_history)
        return (
            "Action: Answer -1" if session.task_index in self.wrong and "Answer" in reply else reply
        )


class DownAgent(Agent):
    """An agent whose model is always unreachable."""

    def act(self, session: Session) -> str:
        """Fail."""
        raise AgentError("connection refused")
