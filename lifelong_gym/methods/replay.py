"""Experience replay as runner callbacks: `experience_replay` and `relevant_replay`."""

from __future__ import annotations

from typing import Any

from lifelong_gym.callbacks import Callback, register_callback
from lifelong_gym.experience import DEFAULT_REPLY_RESERVE, ExperienceMemory, Strategy

from .budget import resolve_budget


@register_callback("experience_replay")
class ExperienceReplayCallback(Callback):
    """Put the last `n` solved sessions into each new task's opening prompt (the paper's replay).

    `budget`: None, a number of tokens, or "auto" (the agent's model's context window);
    with a budget, experiences are dropped until the prompt plus `reserve` tokens fits.
    The memory is saved with every snapshot and restored on resume.
    """

    strategy: Strategy = "recent"

    def __init__(
        self, n: int = 4, budget: int | str | None = None, reserve: int = DEFAULT_REPLY_RESERVE
    ):
        self.n = n
        self.budget = budget
        self.reserve = reserve
        self.memory = ExperienceMemory(n, self.strategy)
        self._opening: str | None = None

    def setup(self, agent, env):
        """Resolve the budget against the agent's model (an unusable budget stops the run)."""
        self.memory.token_budget, self.memory.count_tokens = resolve_budget(self.budget, agent)

    def on_environment_reset(self, agent, env, session, history, control):
        """Replace the opening prompt with one that holds the chosen experiences."""
        opening = session.chat_history[0].content
        self._opening = opening
        prompt, replayed = self.memory.prompt_with_experiences(
            opening, session.skills, reserve=self.reserve
        )
        session.chat_history[0].content = prompt
        session.details["replayed"] = replayed

    def on_environment_complete(self, agent, env, session, history, control):
        """Remember the session if it was solved."""
        if self._opening is not None:
            self.memory.remember(session, self._opening)
            self._opening = None

    def state(self) -> dict[str, Any]:
        """The memory of experiences."""
        return self.memory.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore the memory."""
        self.memory.load_state(state)


@register_callback("relevant_replay")
class RelevantReplayCallback(ExperienceReplayCallback):
    """Replay the `n` solved sessions sharing most skills, then most similar instructions."""

    strategy: Strategy = "relevant"
