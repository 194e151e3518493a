"""A deterministic test agent that solves a task only when it has seen how.

It solves the first task of each skill label outright (`seed` tasks), and any other task
only when its prompt holds a replayed earlier task with the same label; otherwise it
gives a wrong final answer. So replay helps it by exactly as much as the task order and
the replay strategy predict, which `predict` works out without running anything.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from lifelong_gym.agents import Agent, OracleAgent
from lifelong_gym.envs.db.actions import answer_reply
from lifelong_gym.envs.db.tasks import load_db_tasks, to_record
from lifelong_gym.methods.experience import CLOSING, HEADING
from lifelong_gym.session import Session

LABELS = ("alpha", "beta", "gamma")


def labelled_task_file(folder: Path, order: Sequence[str]) -> Path:
    """Shipped DB tasks, one per entry of `order`, each tagged with that single label."""
    shipped = load_db_tasks()
    records = []
    for position, (label, index) in enumerate(zip(order, shipped.order, strict=False)):
        record = to_record(shipped[index])
        record.update(sample_index=position, skill_list=[label])
        records.append(record)
    path = folder / "labelled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "labelled.order.json").write_text(json.dumps(list(range(len(records)))))
    return path


class SkillRecallAgent(Agent):
    """Solves seed tasks, and others only with a same-label experience in the prompt."""

    def __init__(self, tasks, seeds: set[int]):
        self.tasks = tasks
        self.seeds = seeds
        self.oracle = OracleAgent(tasks)

    def act(self, session: Session) -> str:
        if session.task_index in self.seeds or self._has_recalled(session):
            return self.oracle.act(session)
        return answer_reply("I do not know")

    def _has_recalled(self, session: Session) -> bool:
        prompt = session.chat_history[0].content
        if HEADING not in prompt:
            return False
        replayed = prompt[prompt.index(HEADING) : prompt.index(CLOSING)]
        label = self.tasks[session.task_index].skills[0]
        return any(
            f"Task: {task.instruction}\n" in replayed
            for task in self.tasks
            if task.index != session.task_index and task.skills[0] == label
        )


def seeds_of(order: Sequence[str]) -> set[int]:
    """The position of the first task of each label."""
    return {order.index(label) for label in set(order)}


def predict(order: Sequence[str], n: int, strategy: str) -> int:
    """How many tasks the agent solves under replay of `n` experiences by `strategy`."""
    seeds = seeds_of(order)
    solved: list[int] = []
    for position, label in enumerate(order):
        if strategy == "recent":
            chosen = solved[-n:] if n else []
        else:  # relevant: same label first (the only skill), then most recent
            same = [p for p in solved if order[p] == label]
            other = [p for p in solved if order[p] != label]
            chosen = (same[::-1] + other[::-1])[:n]
        if position in seeds or any(order[p] == label for p in chosen):
            solved.append(position)
    return len(solved)
