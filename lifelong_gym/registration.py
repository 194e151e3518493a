"""The one place where the suite's environment ids are registered with Gymnasium."""

from __future__ import annotations

import gymnasium as gym

# id -> (entry point, registered as nondeterministic). A live shell is nondeterministic.
_ENVIRONMENTS: dict[str, tuple[str, bool]] = {
    "LifelongDB-v0": ("lifelong_gym.envs.db.env:LifelongDBEnv", False),
    "LifelongOS-v0": ("lifelong_gym.envs.os.env:LifelongOSEnv", True),
    "LifelongKG-v0": ("lifelong_gym.envs.kg.env:LifelongKGEnv", False),
}

ENV_IDS: tuple[str, ...] = tuple(_ENVIRONMENTS)


def register_envs() -> None:
    """Register every id of the suite (idempotent)."""
    for env_id, (entry_point, nondeterministic) in _ENVIRONMENTS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=entry_point,
                nondeterministic=nondeterministic,
                disable_env_checker=False,
            )
