"""Online training along the stream: the policy's weights updated from the stream's feedback.

The method keeps the conversations of the stream's solved tasks and, every `every`
finished tasks, has a learner make `steps` optimizer steps on them (rejection-sampling
fine-tuning: the loss is on the agent's own replies). The learner owns the weights and the
optimizer (`lifelong_gym.training.online.LoraLearner`: LoRA adapters through peft); this
object only decides what to learn from and when, so it needs no torch and knows nothing of
the runner. A probe session (`session.probe`) is never learned from and never triggers an
update: it reads the weights as they are.
"""

from __future__ import annotations

import random
from typing import Any, Literal, Protocol

from lifelong_gym.session import Session, to_messages, until_last_reply

from .experience import is_solved

Mode = Literal["rft", "grpo"]
MODES: tuple[str, ...] = ("rft",)
"""The modes that run; "grpo" (GRPO over the self-consistency groups) is not built yet."""
DETAILS = "online_training"
"""The key of the update's record in `session.details` (and a wrapper's `info`)."""


def check_whole(name: str, value: Any, least: int = 1, wanted: str | None = None) -> None:
    """A ValueError naming `name` unless `value` is a whole number of at least `least`."""
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        wanted = wanted or f"of at least {least}"
        raise ValueError(f"{name}={value!r}: give a whole number {wanted}")


class Learner(Protocol):
    """What the method needs of a learner: supervised steps on conversations."""

    def sft(self, batches: list[list[list[dict[str, Any]]]]) -> dict[str, Any]:
        """One optimizer step per batch of conversations; what it cost and its loss."""
        ...


def conversation(session: Session, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """A finished session as the chat messages the model took part in, up to its last reply
    (the observation after it is never read by a model)."""
    return to_messages(until_last_reply(session.chat_history), system_prompt)


class OnlineTrainingMethod:
    """Rejection-sampling fine-tuning every `every` stream tasks, `steps` steps of `batch`
    conversations drawn from the last `buffer` solved ones (seeded by `seed` and the
    update's number, so a resumed run draws the same)."""

    def __init__(
        self,
        mode: str = "rft",
        every: int = 4,
        steps: int = 4,
        batch: int = 4,
        buffer: int = 64,
        seed: int = 0,
    ):
        if mode == "grpo":
            raise ValueError("mode grpo: not yet (GRPO over the self-consistency groups); use rft")
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is unknown; choose rft")
        for name, value in (("every", every), ("steps", steps), ("batch", batch)):
            check_whole(name, value)
        check_whole("buffer", buffer, batch, f"of at least batch={batch}")
        self.mode, self.every, self.steps, self.batch = mode, every, steps, batch
        self.buffer_size, self.seed = buffer, seed
        self.learner: Learner | None = None
        self.system_prompt: str | None = None
        self.buffer: list[dict[str, Any]] = []  # {"task_index": i, "messages": [...]}
        self.tasks = 0  # stream tasks finished
        self.updates = 0
        self.totals = {"examples": 0, "tokens": 0, "seconds": 0.0}

    def bind(self, learner: Learner, system_prompt: str | None = None) -> None:
        """Learn with `learner`; conversations open with the agent's `system_prompt`."""
        self.learner, self.system_prompt = learner, system_prompt

    def start(self, session: Session) -> None:
        """Nothing to do when a task begins: the weights are read as they are."""

    def finish(self, session: Session) -> None:
        """Keep a solved stream session; every `every` stream tasks, update the weights.

        The update's record (its number, examples, tokens, seconds and loss) goes into
        `session.details["online_training"]`.
        """
        if session.probe:
            return
        self.tasks += 1
        if is_solved(session):
            messages = conversation(session, self.system_prompt)
            self.buffer.append({"task_index": session.task_index, "messages": messages})
            del self.buffer[: -self.buffer_size]
        if self.tasks % self.every == 0 and self.buffer:
            session.details[DETAILS] = self.update()

    def update(self) -> dict[str, Any]:
        """`steps` optimizer steps on batches drawn from the buffer; the update's record."""
        if self.learner is None:
            raise RuntimeError("bind a learner before the first update")
        draw = random.Random(f"{self.seed}:{self.updates}")
        size = min(self.batch, len(self.buffer))
        batches = [
            [item["messages"] for item in draw.sample(self.buffer, size)] for _ in range(self.steps)
        ]
        record = self.learner.sft(batches)
        self.updates += 1
        for key in self.totals:
            self.totals[key] += record.get(key, 0)
        return {"update": self.updates, "mode": self.mode, **record}

    def state(self) -> dict[str, Any]:
        """The buffer and the counts, as JSON-ready values (the weights are the learner's)."""
        return {
            "buffer": self.buffer,
            "tasks": self.tasks,
            "updates": self.updates,
            "totals": self.totals,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back what `state()` returned."""
        self.buffer = list(state.get("buffer", []))
        self.tasks = int(state.get("tasks", 0))
        self.updates = int(state.get("updates", 0))
        self.totals = dict(state.get("totals", self.totals))
