"""Training on the suite: demonstrations, token-exact episodes, batched rollouts, GRPO; the
token-level policy they sample with (`TransformersPolicy`) comes from `lifelong_gym.decoding`.

Names are imported when first used, so `demonstrations` (which needs no torch) works where
torch is not installed.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "ChatTurns": "lifelong_gym.decoding.chat_tokens",
    "Demonstration": "lifelong_gym.training.demonstration",
    "demonstrations": "lifelong_gym.training.demonstration",
    "Generation": "lifelong_gym.decoding.policy",
    "TokenEpisode": "lifelong_gym.training.episode",
    "TransformersPolicy": "lifelong_gym.decoding.policy",
    "collect_episodes": "lifelong_gym.training.rollout",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
