"""Experience replay, written once: the runner's callbacks and the Gymnasium wrapper call it."""

from __future__ import annotations

from collections.abc import Callable

from lifelong_gym.session import Session

from .experience import DEFAULT_REPLY_RESERVE, ExperienceMemory, ExperienceMethod, Strategy


class ExperienceReplayMethod(ExperienceMethod):
    """Put the `n` chosen solved sessions into each new task's opening prompt (the paper's).

    `start(session)` when a task begins inserts them (`session.insert_memory`, so the
    session records what the agent saw) and lists the replayed task indices in
    `session.details["replayed"]`; `finish(session)` when it ends remembers it if it was
    solved. `strategy` is "recent" (the last `n`) or "relevant" (most shared skills, then
    the most similar task text). With `token_budget` and `count_tokens` (the model's
    tokenizer), experiences are dropped until the prompt plus `reply_reserve` tokens fits.
    """

    def __init__(
        self,
        n: int = 4,
        strategy: Strategy = "recent",
        *,
        token_budget: int | None = None,
        count_tokens: Callable[[str], int] | None = None,
        reply_reserve: int = DEFAULT_REPLY_RESERVE,
    ):
        super().__init__()
        self.memory = ExperienceMemory(
            n, strategy, token_budget=token_budget, count_tokens=count_tokens
        )
        self.reply_reserve = reply_reserve

    def start(self, session: Session) -> None:
        """Put the chosen experiences into the session's opening prompt."""
        super().start(session)
        text, replayed = self.memory.memory_text(
            session.chat_history[0].content,
            session.task_start,
            session.skills,
            reserve=self.reply_reserve,
            learn=not session.probe,
        )
        items = [f"task {index}" for index in replayed]
        session.insert_memory(text, title="experience replay", items=items)
        session.details["replayed"] = replayed
