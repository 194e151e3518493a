"""Lifelong-learning methods as runner callbacks (their wrappers live in `lifelong_gym.wrappers`).

Importing this package registers the callbacks' names for `--callback NAME:k=v,...`.
"""

from .replay import ExperienceReplayCallback, RelevantReplayCallback
from .self_consistency import GroupSelfConsistencyCallback, GroupVote

__all__ = [
    "ExperienceReplayCallback",
    "GroupSelfConsistencyCallback",
    "GroupVote",
    "RelevantReplayCallback",
]
