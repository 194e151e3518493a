"""A planted learner: an agent whose skill is a known rule over what its prompt shows, to
test that a memory method helps (and that the measures see it) without a language model.

It solves a task, replying as the oracle does, when its opening prompt shows at least `k`
earlier tasks that share a skill with it; otherwise it solves it at the `base` rate (a
coin seeded by `seed` and the task's index, so a rerun and the stateless twin throw the
same coins); otherwise it replies with text that is no action.

An earlier task is shown when its text (a DB or OS task's instruction, a KG task's
question) appears in the opening prompt, as a replay method puts it there; the task's own
text does not count. Only the first `m` earlier tasks the prompt shows count (a replay
method lists the most recent first): the learner forgets a skill as soon as the method
stops showing it, and a method that shows much gains nothing past `m`. The agent keeps no
state of its own: what it knows is what the prompt holds.
"""

from __future__ import annotations

import numpy as np

from lifelong_gym.errors import AgentSpecError
from lifelong_gym.session import Session
from lifelong_gym.tasks import Task, TaskSet

from .base import Agent
from .oracle import OracleAgent

NO_ACTION = "I have not learnt how to do this yet."


class PlantedAgent(Agent):
    """Solves a task when its prompt shows `k` earlier tasks sharing a skill, else at `base`."""

    def __init__(
        self,
        tasks: TaskSet,
        k: int = 2,
        m: int = 10,
        base: float = 0.2,
        seed: int = 0,
        action_format: str = "text",
    ):
        if k < 1 or m < 1:
            raise AgentSpecError(f"agent planted: k and m must be 1 or more, got k={k}, m={m}")
        if not 0.0 <= base <= 1.0:
            raise AgentSpecError(f"agent planted: base is a rate from 0 to 1, got {base}")
        self.oracle = OracleAgent(tasks, action_format)
        self.k, self.m, self.base, self.seed = k, m, base, seed
        self.texts = {task.index: task_text(task) for task in tasks}
        self.skills = {task.index: set(task.skills) for task in tasks}

    def use_probe_tasks(self, tasks: TaskSet) -> None:
        """Answer probe sessions from the probe set's references."""
        self.oracle.use_probe_tasks(tasks)

    def act(self, session: Session) -> str:
        """The oracle's reply when the prompt teaches the task's skill or the coin says so."""
        if self.knows(session) or self.lucky(session):
            return self.oracle.act(session)
        return NO_ACTION

    def shown(self, session: Session) -> list[int]:
        """The task indices of the earlier tasks the opening prompt shows, in its order."""
        prompt = session.chat_history[0].content
        own = None if session.probe else session.task_index
        found = {}
        for index, text in self.texts.items():
            if index != own and (position := prompt.find(text)) >= 0:
                found[index] = position
        return sorted(found, key=found.__getitem__)

    def knows(self, session: Session) -> bool:
        """Whether `k` of the first `m` earlier tasks shown share a skill with this one."""
        wanted = set(session.skills)
        sharing = [i for i in self.shown(session)[: self.m] if self.skills[i] & wanted]
        return len(sharing) >= self.k

    def lucky(self, session: Session) -> bool:
        """The task's coin: heads at the `base` rate, the same for every run of `seed`."""
        coin = np.random.default_rng([self.seed, int(session.probe), session.task_index])
        return bool(coin.random() < self.base)


def task_text(task: Task) -> str:
    """The text of a task that its prompt (and a replayed experience) shows."""
    text = getattr(task, "instruction", None) or getattr(task, "question", None)
    if not isinstance(text, str) or not text:
        raise AgentSpecError(
            f"agent planted: a {type(task).__name__} has no instruction or question to find "
            "in a prompt"
        )
    return text
