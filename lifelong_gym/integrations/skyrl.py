"""SkyRL: the suite's environments as `skyrl_gym` text environments.

Importing this module registers each id of the suite with `skyrl_gym` (an `env_class`
of SkyRL's dataset rows and configs):

    import skyrl_gym
    import lifelong_gym.integrations.skyrl  # noqa: F401

    env = skyrl_gym.make("LifelongDB-v0", env_config={"env_kwargs": {"max_turns": 5}},
                         extras={"task_index": 3})
    chat, metadata = env.init(prompt)      # the task's prompt as chat messages
    output = env.step(model_reply)         # observations, reward, done, metadata

`env_config` is SkyRL's per-environment config (`environment.skyrl_gym.<env_class>`):
`env_kwargs` go to `gym.make`. `extras` is the dataset row: its `task_index` (or
`extra_info.task_index`) picks the task, else the environment draws one. With
`env_kwargs={"action_format": "tools"}` the observations are `tool` messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from lifelong_gym.extras import import_extra
from lifelong_gym.registration import ENV_IDS

_skyrl = import_extra("skyrl_gym", "skyrl", "lifelong_gym.integrations.skyrl")
_text_env = import_extra("skyrl_gym.envs.base_text_env", "skyrl", "lifelong_gym.integrations.skyrl")


class LifelongTextEnv(_text_env.BaseTextEnv):
    """One environment of the suite as a `BaseTextEnv`: one task per `init`.

    `init` returns the task's prompt as chat messages (after the system messages of the
    dataset's prompt), `step` takes the model's reply and returns the observation as a
    message, the environment's reward, `done`, and the step's `info` as metadata (with
    `status` and `outcome` once the task has ended).
    """

    def __init__(
        self,
        env_config: Mapping[str, Any] | None = None,
        extras: Mapping[str, Any] | None = None,
        *,
        env_id: str,
    ):
        super().__init__()
        config = dict(env_config or {})
        self.env = gym.make(env_id, **dict(config.get("env_kwargs") or {}))
        self.max_turns = self.env.unwrapped.max_turns
        extras = dict(extras or {})
        self.task_index = extras.get(
            "task_index", dict(extras.get("extra_info") or {}).get("task_index")
        )
        self._role = "tool" if self.env.unwrapped.action_format == "tools" else "user"
        self._info: dict[str, Any] = {}

    def init(
        self, prompt: list[dict[str, str]] | None = None
    ) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """Start the task; the chat the model reads first, and the task's index and skills."""
        observation, info = self.env.reset(options={"task_index": self.task_index})
        self.turns = 0
        self._info = info
        system = [m for m in prompt or [] if m.get("role") == "system"]
        return [*system, {"role": "user", "content": observation}], info

    def step(self, action: str) -> Any:
        """Apply the model's reply; the observation as a message while the task runs."""
        self.turns += 1
        observation, reward, terminated, truncated, info = self.env.step(action)
        done = terminated or truncated
        self._info = info
        observations = [] if done else [{"role": self._role, "content": observation}]
        return _text_env.BaseTextEnvStepOutput(
            observations=observations, reward=float(reward), done=done, metadata=info
        )

    def get_metrics(self) -> dict[str, Any]:
        """The episode's turns, status, outcome and whether it was solved."""
        return {
            "turns": self.turns,
            "status": self._info.get("status", "running"),
            "outcome": self._info.get("outcome", "unset"),
            "correct": float(self._info.get("outcome") == "correct"),
        }

    def close(self) -> None:
        """Free the environment's back-end (database, container, store)."""
        self.env.close()


def register_envs() -> None:
    """Register each id of the suite with `skyrl_gym` (idempotent)."""
    for env_id in ENV_IDS:
        if env_id not in _skyrl.registry:
            _skyrl.register(
                id=env_id,
                entry_point=f"{__name__}:LifelongTextEnv",
                kwargs={"env_id": env_id},
            )


register_envs()
