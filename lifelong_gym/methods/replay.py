"""Experience replay, written once: the runner's callbacks and the Gymnasium wrapper call it."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from lifelong_gym.session import Session

from .experience import DEFAULT_REPLY_RESERVE, ExperienceMemory, ExperienceMethod, Strategy


class ExperienceReplayMethod(ExperienceMethod):
    """Put the `n` chosen solved sessions into each new task's opening prompt (the paper's).

    `start(session)` when a task begins inserts them (`session.insert_memory`, so the
    session records what the agent saw) and lists the replayed task indices in
    `session.details["replayed"]`; `finish(session)` when it ends remembers it if it was
    solved. `strategy` (`ExperienceMemory`'s) is "recent" (the last `n`), "relevant" or
    "embedding"; "embedding" records the ranker it used in `session.details["ranked_by"]`.
    With a `budget` (counted by `count_tokens`, else by the agent's model's tokenizer),
    experiences are dropped until the prompt plus `reserve` tokens fits.
    """

    default_strategy: ClassVar[Strategy] = "recent"

    def __init__(
        self,
        n: int = 4,
        strategy: Strategy | None = None,
        *,
        budget: int | str | None = None,
        count_tokens: Callable[[str], int] | None = None,
        reserve: int = DEFAULT_REPLY_RESERVE,
    ):
        super().__init__(budget)
        counted = budget if count_tokens is not None else None
        self.memory = ExperienceMemory(
            n, strategy or self.default_strategy, budget=counted, count_tokens=count_tokens
        )
        self.reserve = reserve

    def start(self, session: Session) -> None:
        """Put the chosen experiences into the session's opening prompt."""
        super().start(session)
        text, replayed = self.memory.memory_text(
            session.chat_history[0].content,
            session.task_start,
            session.skills,
            reserve=self.reserve,
            learn=not session.probe,
        )
        items = [f"task {index}" for index in replayed]
        session.insert_memory(text, title="experience replay", items=items)
        session.details["replayed"] = replayed
        if self.memory.similarity is not None:
            session.details["ranked_by"] = self.memory.similarity.name


class RelevantReplayMethod(ExperienceReplayMethod):
    """Replay the `n` solved sessions sharing most skills, then with the most similar task
    text (difflib), then the most recent."""

    default_strategy: ClassVar[Strategy] = "relevant"


class EmbeddingReplayMethod(ExperienceReplayMethod):
    """Replay the `n` solved sessions whose task texts are nearest the new task's by the
    cosine of their sentence embeddings (ExpRAG-style retrieval), BM25 without the
    `embeddings` extra; `session.details["ranked_by"]` says which ranked."""

    default_strategy: ClassVar[Strategy] = "embedding"
