"""Experience replay, written once: the runner's callbacks and the Gymnasium wrapper call it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lifelong_gym.session import Session

from .experience import DEFAULT_REPLY_RESERVE, ExperienceMemory, Strategy


class ExperienceReplayMethod:
    """Put the `n` chosen solved sessions into each new task's opening prompt (the paper's).

    `start(session)` when a task begins rewrites the session's first message (so the
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
        self.memory = ExperienceMemory(
            n, strategy, token_budget=token_budget, count_tokens=count_tokens
        )
        self.reply_reserve = reply_reserve
        self._opening: str | None = None

    def start(self, session: Session) -> str:
        """Put the chosen experiences into the opening prompt; return the new prompt."""
        opening = session.chat_history[0].content
        self._opening = opening
        prompt, replayed = self.memory.prompt_with_experiences(
            opening, session.skills, reserve=self.reply_reserve
        )
        session.chat_history[0].content = prompt
        session.details["replayed"] = replayed
        return prompt

    def finish(self, session: Session) -> None:
        """Remember the finished session if it was solved (with the opening the env gave)."""
        if self._opening is not None:
            self.memory.remember(session, self._opening)
            self._opening = None

    def state(self) -> dict[str, Any]:
        """The memory of experiences, as JSON-ready values."""
        return self.memory.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back what `state()` returned."""
        self.memory.load_state(state)
