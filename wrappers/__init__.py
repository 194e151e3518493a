"""Gymnasium wrappers for lifelong environments (import as `lifelong_gym.wrappers`)."""

from lifelong_gym.methods import MethodWrapper
from lifelong_gym.orders import task_order

from .experience_replay import ExperienceReplay
from .group_self_consistency import GroupSelfConsistency
from .online_training import OnlineTraining
from .reasoning_memory import ReasoningMemory
from .task_sequence import LifelongTaskSequence

__all__ = [
    "ExperienceReplay",
    "GroupSelfConsistency",
    "LifelongTaskSequence",
    "MethodWrapper",
    "OnlineTraining",
    "ReasoningMemory",
    "task_order",
]
