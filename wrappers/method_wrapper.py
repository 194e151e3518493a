"""`MethodWrapper`: the reset shared by the wrappers that put a method's memory into prompts."""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class MethodWrapper(gym.Wrapper[str, str, str, str]):
    """Starts each task through `self.method`, so the opening prompt is the one it wrote.

    A subclass sets `self.method` and says, in `reset_info`, what the reset's info adds.
    """

    method: Any

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start the next task with the method's additions in its prompt."""
        _, info = self.env.reset(seed=seed, options=options)
        session = self.env.unwrapped.session
        self.method.start(session)
        return session.chat_history[0].content, {**info, **self.reset_info(session)}

    def reset_info(self, session: Any) -> dict[str, Any]:
        """What the method adds to the reset's info (nothing unless a subclass says)."""
        return {}
