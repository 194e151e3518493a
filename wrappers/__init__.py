"""Gymnasium wrappers for lifelong environments (import as `lifelong_gym.wrappers`)."""

from lifelong_gym.orders import task_order

from .experience_replay import ExperienceReplay
from .group_self_consistency import GroupSelfConsistency
from .task_sequence import LifelongTaskSequence

__all__ = ["ExperienceReplay", "GroupSelfConsistency", "LifelongTaskSequence", "task_order"]
