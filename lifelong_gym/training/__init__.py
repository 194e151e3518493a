"""Training on the suite: demonstrations, token-exact episodes, a token-level policy, batched
rollouts, GRPO.

Names are imported when first used, so `demonstrations` (which needs no torch) works where
torch is not installed.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "ChatTurns": "chat_tokens",
    "Demonstration": "demonstration",
    "demonstrations": "demonstration",
    "Generation": "policy",
    "TokenEpisode": "episode",
    "TransformersPolicy": "policy",
    "collect_episodes": "rollout",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
