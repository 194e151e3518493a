"""Remembered experiences: finished sessions kept for replay, chosen and put into prompts.

Written once for every lifelong method that replays experience, whether it runs as a
Gymnasium wrapper in a plain loop or as a runner callback. An experience keeps the task's
own text (the environment's shared instructions stripped), the agent's replies and the
observations, so that many fit a prompt; the instructions appear once, in the new prompt.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from lifelong_gym.session import (
    ChatMessage,
    EvaluationOutcome,
    Role,
    Session,
    SessionStatus,
    with_memory,
)

from .budget import resolve_budget
from .method import Method
from .similarity import Similarity, similarity

Strategy = Literal["recent", "relevant", "embedding"]
STRATEGIES: tuple[str, ...] = ("recent", "relevant", "embedding")
DEFAULT_REPLY_RESERVE = 1024
"""Tokens kept free for the replies and observations that follow the opening prompt."""
HEADING = "Here are tasks you solved before, with your replies and what you observed:"
CLOSING = "That is the end of the earlier tasks. Now solve the new task below."


class Experience(BaseModel):
    """One solved task as it can be replayed."""

    task_index: int
    skills: list[str]
    opening: str
    turns: list[ChatMessage]
    task_start: int | None = None
    """Where the task begins in `opening`, as its environment marked it (None in memories
    saved before environments did: their instructions are learned from two openings)."""

    def render(self, number: int, task: str) -> str:
        """The experience as prompt text, `task` being its opening without the instructions."""
        lines = [f"### Earlier task {number}", task]
        for message in self.turns:
            who = "Your reply" if message.role == Role.AGENT else "Observation"
            lines.append(f"{who}:\n{message.content}")
        return "\n\n".join(lines)


def split_instructions(prompt: str, other: str) -> tuple[str, str]:
    """Split `prompt` into the instructions it shares with `other` and its own task text.

    The shared part ends at the last paragraph break within the common prefix, so that a
    task text that happens to start like another task's is not cut mid-paragraph.
    """
    common = 0
    for a, b in zip(prompt, other, strict=False):
        if a != b:
            break
        common += 1
    if common == len(prompt) == len(other):
        return prompt, ""
    cut = prompt.rfind("\n\n", 0, common + 1)
    if cut <= 0:
        return "", prompt
    return prompt[:cut], prompt[cut + 2 :]


class SharedInstructions:
    """The instructions every opening prompt of an environment shares, learned from two:
    the task texts of experiences saved before environments marked where the task begins
    (`Experience.task_start`) are their openings without these."""

    def __init__(self) -> None:
        self.text: str | None = None  # learned from two different openings
        self._first_opening: str | None = None

    def learn(self, opening: str) -> None:
        """Learn the shared instructions from the first two different openings seen."""
        if self.text is not None:
            return
        if self._first_opening is None:
            self._first_opening = opening
        elif opening != self._first_opening:
            self.text = split_instructions(opening, self._first_opening)[0]

    def task_text(self, opening: str) -> str:
        """An opening prompt without the environment's shared instructions."""
        if self.text and opening.startswith(self.text + "\n\n"):
            return opening[len(self.text) + 2 :]
        return opening

    def state(self) -> dict:
        """What was learned, as JSON-ready values."""
        return {"instructions": self.text, "first_opening": self._first_opening}

    def load_state(self, state: dict) -> None:
        """Take back what `state()` returned."""
        self.text = state.get("instructions")
        self._first_opening = state.get("first_opening")


def is_solved(session: Session) -> bool:
    """Whether a session is worth replaying: completed and correct (the benchmark's rule)."""
    return (
        session.status == SessionStatus.COMPLETED and session.outcome == EvaluationOutcome.CORRECT
    )


class ExperienceMemory:
    """Solved sessions in the order they finished, and the choice of which to replay.

    `strategy` is "recent" (the last `n`), "relevant" (most shared skills, then the most
    similar task text by difflib) or "embedding" (the most similar task text by a sentence
    embedder's cosine, BM25 without the `embeddings` extra: `similarity.py`).
    """

    def __init__(
        self,
        n: int = 4,
        strategy: Strategy = "recent",
        *,
        budget: int | None = None,
        count_tokens: Callable[[str], int] | None = None,
    ):
        if n < 0:
            raise ValueError(f"n must be 0 or more, got {n}")
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy={strategy!r} is unknown; choose one of {STRATEGIES}")
        if budget is not None and count_tokens is None:
            raise ValueError("a budget needs count_tokens (the model's tokenizer)")
        self.n = n
        self.strategy = strategy
        self.budget = budget
        self.count_tokens = count_tokens
        self.similarity: Similarity | None = similarity() if strategy == "embedding" else None
        self.experiences: list[Experience] = []
        self.instructions = SharedInstructions()

    # -- remembering ------------------------------------------------------------------

    def remember(self, session: Session, opening: str, task_start: int | None = None) -> bool:
        """Keep a finished session if it was solved; `opening` is its prompt as the env gave
        it, its task beginning at `task_start`."""
        self.instructions.learn(opening)
        if not is_solved(session):
            return False
        self.experiences.append(
            Experience(
                task_index=session.task_index,
                skills=list(session.skills),
                opening=opening,
                turns=[m.model_copy() for m in session.chat_history[1:]],
                task_start=task_start,
            )
        )
        return True

    # -- replaying --------------------------------------------------------------------

    def select(self, skills: Sequence[str], task: str) -> list[Experience]:
        """The experiences to replay for a new task (its skills and task text), best first."""
        if self.n == 0 or not self.experiences:
            return []
        if self.strategy == "recent":
            return list(reversed(self.experiences[-self.n :]))
        if self.similarity is not None:
            texts = [self.experience_task(e) for e in self.experiences]
            scores = self.similarity.scores(task, texts)
            best = sorted(range(len(texts)), key=lambda i: (scores[i], i), reverse=True)
            return [self.experiences[i] for i in best[: self.n]]
        wanted = set(skills)

        def relevance(item: tuple[int, Experience]) -> tuple[int, float, int]:
            position, experience = item
            shared = len(wanted & set(experience.skills))
            text = self.experience_task(experience)
            similar = difflib.SequenceMatcher(None, task, text, autojunk=False).ratio()
            return (shared, similar, position)

        ranked = sorted(enumerate(self.experiences), key=relevance, reverse=True)
        return [experience for _, experience in ranked[: self.n]]

    def memory_text(
        self,
        opening: str,
        task_start: int,
        skills: Sequence[str],
        *,
        reserve: int = 0,
        learn: bool = True,
    ) -> tuple[str, list[int]]:
        """The chosen experiences as the text to put before the task of `opening` (which
        begins at `task_start`), and their task indices.

        With a token budget, experiences are dropped (least relevant first) until the
        prompt with them plus `reserve` tokens (room for the replies) fits. `learn=False`
        (a probe) leaves the memory as it was: the opening does not teach it the shared
        instructions its experiences are rendered without.
        """
        if learn:
            self.instructions.learn(opening)
        chosen = self.select(skills, opening[task_start:])
        while True:
            text = self.render(chosen)
            if not chosen or self.fits(with_memory(opening, task_start, text)[0], reserve):
                return text, [e.task_index for e in chosen]
            chosen = chosen[:-1]

    def render(self, chosen: Sequence[Experience]) -> str:
        """`chosen` as one text, under a heading (empty when nothing is chosen)."""
        if not chosen:
            return ""
        rendered = (e.render(i, self.experience_task(e)) for i, e in enumerate(chosen, start=1))
        return "\n\n".join([HEADING, *rendered, CLOSING])

    def compose(self, opening: str, task_start: int, chosen: Sequence[Experience]) -> str:
        """The opening prompt with `chosen` before its task (which begins at `task_start`)."""
        return with_memory(opening, task_start, self.render(chosen))[0] if chosen else opening

    def experience_task(self, experience: Experience) -> str:
        """An experience's task text, without the environment's instructions."""
        if experience.task_start is None:
            return self.instructions.task_text(experience.opening)
        return experience.opening[experience.task_start :]

    # -- state ------------------------------------------------------------------------

    def state(self) -> dict:
        """The memory as JSON-ready values."""
        return {
            "experiences": [e.model_dump(mode="json") for e in self.experiences],
            **self.instructions.state(),
        }

    def load_state(self, state: dict) -> None:
        """Take back what `state()` returned."""
        self.experiences = [Experience.model_validate(e) for e in state.get("experiences", [])]
        self.instructions.load_state(state)

    # -- internals --------------------------------------------------------------------

    def fits(self, prompt: str, reserve: int) -> bool:
        """Whether `prompt` plus `reserve` tokens stays within the token budget (if any)."""
        if self.budget is None or self.count_tokens is None:
            return True
        return self.count_tokens(prompt) + reserve <= self.budget


def flight_key(session: Session) -> tuple[bool, int]:
    """What tells the tasks in flight apart: a stream task's index is unique in the stream,
    a probe's in its probe point, and a probe may run while stream tasks are in flight."""
    return session.probe, session.task_index


class ExperienceMethod(Method):
    """The part every experience-based method shares: a memory fed by finished sessions.

    A method keeps the opening prompt the environment gave at `start` (subclasses extend
    it), remembers the session at `finish` if it was solved, and saves its memory. A probe
    session (`session.probe`) is never remembered. `budget` (None, a number of tokens, or
    "auto": the agent's model's context window) caps the prompt with its experiences; with
    no `count_tokens` it is counted with the agent's model, found at `setup`.
    """

    memory: ExperienceMemory

    def __init__(self, budget: int | str | None = None) -> None:
        self.budget = budget
        # the opening prompts of the tasks in flight, and where their tasks begin
        self._openings: dict[tuple[bool, int], tuple[str, int]] = {}

    def setup(self, agent: Any, env: Any) -> None:
        """Count the budget with the agent's model's tokenizer, when none was given (an
        unusable budget stops the run before any task)."""
        if self.budget is not None and self.memory.count_tokens is None:
            self.memory.budget, self.memory.count_tokens = resolve_budget(self.budget, agent)

    def start(self, session: Session) -> None:
        """Keep the opening prompt of the task that begins (by task, for tasks in flight)."""
        self._openings[flight_key(session)] = (session.chat_history[0].content, session.task_start)

    def opening(self, session: Session) -> tuple[str, int] | None:
        """The opening prompt the environment gave `session`, while it is in flight, and
        where its task begins."""
        return self._openings.get(flight_key(session))

    def finish(self, session: Session) -> None:
        """Remember the finished session if it was solved (with the opening the env gave)."""
        opening = self._openings.pop(flight_key(session), None)
        if opening is not None and not session.probe:
            self.memory.remember(session, *opening)

    def state(self) -> dict:
        """The memory of experiences, as JSON-ready values."""
        return self.memory.state()

    def load_state(self, state: dict) -> None:
        """Take back what `state()` returned."""
        self.memory.load_state(state)
