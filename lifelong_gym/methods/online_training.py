"""Online training along the stream: the policy's weights updated from the stream's feedback.

Every `every` finished tasks a learner makes `steps` optimizer steps, in one of two modes:
rejection-sampling fine-tuning (`rft`: the loss on the agent's own replies in the
conversations of the stream's solved tasks), or GRPO (`grpo`) over the reply groups group
self-consistency samples at each turn (`session.reply_groups`): a reply's reward is the
episode's when its action is the one the vote sent, else 0, and a group whose rewards are
all equal teaches nothing and is not kept. The learner owns the weights and the optimizer
(`lifelong_gym.training.online.LoraLearner`: LoRA adapters through peft); this object only
decides what to learn from and when, so it needs no torch and knows nothing of the runner.
A probe session (`session.probe`) is never learned from and never triggers an update: it
reads the weights as they are.
"""

from __future__ import annotations

import random
from typing import Any, Literal, Protocol

from lifelong_gym.session import ReplyGroup, Session, to_messages, until_last_reply

from .experience import is_solved
from .method import Method

Mode = Literal["rft", "grpo"]
MODES: tuple[str, ...] = ("rft", "grpo")
DETAILS = "online_training"
"""The key of the update's record in `session.details` (and a wrapper's `info`)."""


def check_whole(name: str, value: Any, least: int = 1, wanted: str | None = None) -> None:
    """A ValueError naming `name` unless `value` is a whole number of at least `least`."""
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        wanted = wanted or f"of at least {least}"
        raise ValueError(f"{name}={value!r}: give a whole number {wanted}")


class Learner(Protocol):
    """What the method needs of a learner: supervised and policy-gradient steps."""

    def sft(self, batches: list[list[list[dict[str, Any]]]]) -> dict[str, Any]:
        """One optimizer step per batch of conversations; what it cost and its loss."""
        ...

    def grpo(
        self,
        conversations: list[list[dict[str, Any]]],
        rewards: list[float],
        groups: list[int],
        steps: int,
        batch: int,
    ) -> dict[str, Any]:
        """`steps` optimizer steps of GRPO over the conversations' last replies, each in
        group `groups[i]` with reward `rewards[i]`; what it cost and its loss."""
        ...


def conversation(session: Session, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """A finished session as the chat messages the model took part in, up to its last reply
    (the observation after it is never read by a model)."""
    return to_messages(until_last_reply(session.chat_history), system_prompt)


class OnlineTrainingMethod(Method):
    """Online training every `every` stream tasks: `steps` optimizer steps.

    `rft`: each step on `batch` conversations drawn from the last `buffer` solved ones
    (seeded by `seed` and the update's number, so a resumed run draws the same). `grpo`:
    each step over every reply group kept since the last update (from at most the last
    `buffer` tasks), `batch` replies per forward pass; the groups are used once, since they
    were sampled with the weights being updated.
    """

    def __init__(
        self,
        mode: str = "rft",
        every: int = 4,
        steps: int = 4,
        batch: int = 4,
        buffer: int = 64,
        seed: int = 0,
    ):
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is unknown; choose rft or grpo")
        for name, value in (("every", every), ("steps", steps), ("batch", batch)):
            check_whole(name, value)
        if mode == "rft":  # its steps draw `batch` conversations from the buffer
            check_whole("buffer", buffer, batch, f"of at least batch={batch}")
        else:
            check_whole("buffer", buffer)
        self.mode, self.every, self.steps, self.batch = mode, every, steps, batch
        self.buffer_size, self.seed = buffer, seed
        self.learner: Learner | None = None
        self.system_prompt: str | None = None
        # rft: {"task_index": i, "messages": [...]}; grpo: a task's groups (`kept_groups`)
        self.buffer: list[dict[str, Any]] = []
        self.tasks = 0  # stream tasks finished
        self.updates = 0
        self.equal_groups = 0  # grpo: groups left out since the last update
        self.totals: dict[str, float] = {"examples": 0, "tokens": 0, "seconds": 0.0}
        if mode == "grpo":
            self.totals.update(groups=0, equal_groups=0)

    def bind(self, learner: Learner, system_prompt: str | None = None) -> None:
        """Learn with `learner`; conversations open with the agent's `system_prompt`."""
        self.learner, self.system_prompt = learner, system_prompt

    def start(self, session: Session) -> None:
        """Nothing to do when a task begins: the weights are read as they are."""

    def finish(self, session: Session) -> None:
        """Keep what a stream session teaches; every `every` stream tasks, update the weights.

        The update's record (its number, examples, tokens, seconds and loss; in grpo the
        groups used and left out) goes into `session.details["online_training"]`; a due
        grpo update with no group to learn from records the groups it left out.
        """
        if session.probe:
            return
        self.tasks += 1
        if self.mode == "grpo":
            self._keep_groups(session)
        elif is_solved(session):
            messages = conversation(session, self.system_prompt)
            self.buffer.append({"task_index": session.task_index, "messages": messages})
        del self.buffer[: -self.buffer_size]
        if self.tasks % self.every:
            return
        if self.buffer:
            session.details[DETAILS] = self.update()
        elif self.equal_groups:
            session.details[DETAILS] = self._record({"groups": 0, "steps": 0})

    def _keep_groups(self, session: Session) -> None:
        """Keep the session's reply groups whose rewards differ; count the others."""
        groups = session.reply_groups
        rewards = [[session.reward if chosen else 0.0 for chosen in g.chosen] for g in groups]
        mixed = [(g, r) for g, r in zip(groups, rewards, strict=True) if len(set(r)) > 1]
        self.equal_groups += len(groups) - len(mixed)
        self.totals["equal_groups"] += len(groups) - len(mixed)
        if mixed:
            self.buffer.append(kept_groups(session, mixed))

    def update(self) -> dict[str, Any]:
        """`steps` optimizer steps on what the buffer holds; the update's record."""
        if self.learner is None:
            raise RuntimeError("bind a learner before the first update")
        if self.mode == "grpo":
            record = self._grpo_step()
        else:
            draw = random.Random(f"{self.seed}:{self.updates}")
            size = min(self.batch, len(self.buffer))
            batches = [
                [item["messages"] for item in draw.sample(self.buffer, size)]
                for _ in range(self.steps)
            ]
            record = self.learner.sft(batches)
        self.updates += 1
        for key in self.totals:
            self.totals[key] += record.get(key, 0)
        return {"update": self.updates, **self._record(record)}

    def _grpo_step(self) -> dict[str, Any]:
        """GRPO over every kept group (its replies numbered by group); the buffer emptied."""
        conversations, rewards, numbers = [], [], []
        groups = [(item, group) for item in self.buffer for group in item["groups"]]
        for number, (item, group) in enumerate(groups):
            for index, reward in enumerate(group["rewards"]):
                conversations.append(candidate(item, group, index, self.system_prompt))
                rewards.append(reward)
                numbers.append(number)
        record = self.learner.grpo(conversations, rewards, numbers, self.steps, self.batch)
        self.buffer = []
        return {"groups": len(groups), **record}

    def _record(self, record: dict[str, Any]) -> dict[str, Any]:
        """An update's record under the mode's name (grpo: with the groups left out)."""
        if self.mode == "grpo":
            record = {**record, "equal_groups": self.equal_groups}
            self.equal_groups = 0
        return {"mode": self.mode, **record}

    def state(self) -> dict[str, Any]:
        """The buffer and the counts, as JSON-ready values (the weights are the learner's)."""
        return {
            "buffer": self.buffer,
            "tasks": self.tasks,
            "updates": self.updates,
            "equal_groups": self.equal_groups,
            "totals": self.totals,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back what `state()` returned."""
        self.buffer = list(state.get("buffer", []))
        self.tasks = int(state.get("tasks", 0))
        self.updates = int(state.get("updates", 0))
        self.equal_groups = int(state.get("equal_groups", 0))
        self.totals = dict(state.get("totals", self.totals))


def kept_groups(session: Session, groups: list[tuple[ReplyGroup, list[float]]]) -> dict[str, Any]:
    """A session's reply groups with their rewards, as JSON-ready values; each distinct
    opening, and the history after it, is kept once rather than once per reply and turn."""
    openings: dict[str, int] = {}
    kept = [
        {
            "turn": group.turn,
            "openings": [openings.setdefault(text, len(openings)) for text in group.openings],
            "replies": group.replies,
            "rewards": rewards,
        }
        for group, rewards in groups
    ]
    last = max(group.turn for group, _ in groups)
    return {
        "task_index": session.task_index,
        "openings": list(openings),
        "history": to_messages(session.chat_history[1:last]),
        "groups": kept,
    }


def candidate(
    item: dict[str, Any], group: dict[str, Any], index: int, system_prompt: str | None = None
) -> list[dict[str, Any]]:
    """Reply `index` of a kept group as the conversation it ends: the opening it was
    generated from, the history up to its turn, the reply; the agent's own (index 0) after
    the agent's system prompt, as the agent asked for it."""
    own = index == 0 and system_prompt
    system = [{"role": "system", "content": system_prompt}] if own else []
    opening = {"role": "user", "content": item["openings"][group["openings"][index]]}
    reply = {"role": "assistant", "content": group["replies"][index]}
    return [*system, opening, *item["history"][: group["turn"] - 1], reply]
