"""`LifelongTaskSequence`: a task set as one ordered stream of episodes, with its record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from lifelong_gym.metrics import DEFAULT_WINDOW, LifelongMetrics, compute_metrics
from lifelong_gym.orders import OrderName, shard_order, task_order
from lifelong_gym.session import Session, SessionStatus


class LifelongTaskSequence(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """Runs a lifelong environment's task set as one ordered stream, one task per episode.

    Each `reset()` starts the next task of the stream (the set's sample order, a
    seeded permutation with `order="shuffled"`, easy to hard with `order="curriculum"`,
    or a controlled stream: `"blocks"`, `"compositional"`) by passing
    `options={"task_index": i}` to the inner environment; an explicit
    `options["task_index"]` is honoured and does not advance the stream. After the last
    task the stream starts over (`epoch` counts the passes);
    a reset given a `seed` starts a new run (the stream from its start, an empty record),
    so that seeded resets repeat exactly, as `check_env` expects. Every finished
    session is kept (a copy of `env.unwrapped.session`), and the `info` of the step that
    ends an episode carries `info["lifelong"]`: the running session count, success rate,
    stream position and the epoch of the task just finished. `calculate_metric()`
    returns the full record.

    With `shard=(index, count)` the stream is shard `index` of `count` of that order:
    tasks `order[index]`, `order[index + count]`, ... (`lifelong_gym.orders.shard_order`).
    Give each of `count` vector-env copies its own index and together they play every
    task once in their first pass (`info["lifelong"]["epoch"] == 0`), with no repeats.

    Args:
        env: an environment whose `unwrapped` is a `LifelongEnv` (it has `tasks` and
            `session`).
        order: "sample" (the task set's own order), "shuffled" (needs `seed`),
            "curriculum" (easy to hard, see `lifelong_gym.orders.curriculum_order`),
            "blocks" (one skill group after another, needs `seed`) or "compositional"
            (a skill's parts first); docs/runner.md, "Controlled streams".
        seed: seed of the permutation (shuffled), of the blocks' order and of the
            tasks within them (blocks), of the ties' shuffle (curriculum, compositional).
        window: width of the sliding window of the learning curve.
        stages: skill stages of the curriculum, easiest first (default: by skill count).
        shard: `(index, count)`: play only this shard of the order.

    Example:
        >>> import gymnasium as gym
        >>> import lifelong_gym
        >>> from lifelong_gym.agents import OracleAgent
        >>> from lifelong_gym.wrappers import LifelongTaskSequence
        >>> env = LifelongTaskSequence(gym.make("LifelongDB-v0"), order="shuffled", seed=0)
        >>> oracle = OracleAgent(env.unwrapped.tasks)
        >>> for _ in range(2):  # two tasks of the stream, each one episode
        ...     obs, info = env.reset()
        ...     terminated = truncated = False
        ...     while not (terminated or truncated):
        ...         reply = oracle.act(env.unwrapped.session)
        ...         obs, reward, terminated, truncated, info = env.step(reply)
        >>> info["lifelong"]["sessions"], info["lifelong"]["success_rate"]
        (2, 1.0)
        >>> env.calculate_metric().correct
        2
        >>> env.close()
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        order: OrderName = "sample",
        seed: int | None = None,
        window: int = DEFAULT_WINDOW,
        stages: Sequence[Sequence[str]] | None = None,
        shard: tuple[int, int] | None = None,
    ):
        RecordConstructorArgs.__init__(
            self, order=order, seed=seed, window=window, stages=stages, shard=shard
        )
        gym.Wrapper.__init__(self, env)
        self.order = task_order(env.unwrapped.tasks, order, seed, stages)
        if shard is not None:
            self.order = shard_order(self.order, shard)
        self.window = window
        self.position = 0
        self.sessions: list[Session] = []
        self._correct = self._errored = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start the next task of the stream (or `options["task_index"]` when given)."""
        if seed is not None:  # a new run: seeded resets and their steps repeat exactly
            self.position, self.sessions, self._correct, self._errored = 0, [], 0, 0
        options = dict(options or {})
        if options.get("task_index") is None:
            options["task_index"] = self.order[self.position % len(self.order)]
            self.position += 1
        return self.env.reset(seed=seed, options=options)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the inner environment; record the session when the episode ends."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            env = self.env.unwrapped
            if env.session is not None and not env.session.finished:
                # truncated from outside (Gymnasium's TimeLimit): score the task all the same
                env.end_task(SessionStatus.TASK_LIMIT_REACHED)
                reward = env.session.reward
                info = {**info, **env.task_info()}
            if env.session is not None:
                self._record(env.session)
            info["lifelong"] = self.running_figures()
        return observation, reward, terminated, truncated, info

    def running_figures(self) -> dict[str, Any]:
        """Sessions so far, how many were judged (no error ended them), their success rate
        (over the judged) and the position in the stream."""
        count = len(self.sessions)
        judged = count - self._errored
        return {
            "sessions": count,
            "judged": judged,
            "correct": self._correct,
            "success_rate": self._correct / judged if judged else 0.0,
            "position": self.position,
            "stream_length": len(self.order),
            "epoch": max(self.position - 1, 0) // len(self.order),
        }

    def calculate_metric(self) -> LifelongMetrics:
        """The cumulative record: success overall, per skill and per status, learning curve."""
        return compute_metrics(self.sessions, window=self.window)

    def _record(self, session: Session) -> None:
        self.sessions.append(session.model_copy(deep=True))
        self._correct += session.solved
        self._errored += session.errored
