"""`ExperienceReplay`: put earlier solved tasks into each new task's prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from lifelong_gym.methods import ExperienceReplayMethod, MethodWrapper
from lifelong_gym.methods.experience import DEFAULT_REPLY_RESERVE, Strategy
from lifelong_gym.spaces import UnicodeText


class ExperienceReplay(MethodWrapper, RecordConstructorArgs):
    """Replays the last `n` (or the `n` most relevant) solved sessions in each opening prompt.

    The benchmark's experience replay, for a plain Gymnasium loop: at every reset the
    chosen experiences are put between the environment's instructions and the new task,
    and the live session's first message is set to that prompt, so the session records
    what the agent saw. `info["replayed"]` lists the task indices replayed. `strategy` is
    "recent", "relevant" or "embedding" (`info["ranked_by"]` then names the ranker). With
    a `budget` of tokens and `count_tokens` (the model's tokenizer), experiences are
    dropped until the prompt plus `reserve` tokens fits the budget.

    Example:
        >>> import gymnasium as gym
        >>> import lifelong_gym
        >>> from lifelong_gym.agents import OracleAgent
        >>> from lifelong_gym.wrappers import ExperienceReplay
        >>> env = ExperienceReplay(gym.make("LifelongDB-v0"), n=2)
        >>> oracle = OracleAgent(env.unwrapped.tasks)
        >>> obs, info = env.reset(options={"task_index": 0})
        >>> info["replayed"]
        []
        >>> terminated = truncated = False
        >>> while not (terminated or truncated):  # the oracle solves task 0
        ...     reply = oracle.act(env.unwrapped.session)
        ...     obs, reward, terminated, truncated, info = env.step(reply)
        >>> obs, info = env.reset(options={"task_index": 1})
        >>> info["replayed"]
        [0]
        >>> "Here are tasks you solved before" in obs
        True
        >>> env.close()
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        n: int = 4,
        strategy: Strategy = "recent",
        budget: int | None = None,
        count_tokens: Callable[[str], int] | None = None,
        reserve: int = DEFAULT_REPLY_RESERVE,
    ):
        if budget is not None and count_tokens is None:
            raise ValueError("a budget needs count_tokens (the model's tokenizer)")
        RecordConstructorArgs.__init__(self, n=n, strategy=strategy, budget=budget, reserve=reserve)
        method = ExperienceReplayMethod(
            n, strategy, budget=budget, count_tokens=count_tokens, reserve=reserve
        )
        MethodWrapper.__init__(self, env, method)
        inner = env.observation_space
        limit = getattr(inner, "max_length", 16_000)
        self.observation_space = UnicodeText(limit * (n + 1))

    def reset_info(self, session: Any) -> dict[str, Any]:
        """The task indices replayed into the prompt (and the ranker, when one ranked)."""
        keys = ("replayed", "ranked_by")
        return {key: session.details[key] for key in keys if key in session.details}
