"""Gymnasium wrappers for lifelong environments (import as `lifelong_gym.wrappers`)."""

from .experience_replay import ExperienceReplay
from .task_sequence import LifelongTaskSequence, task_order

__all__ = ["ExperienceReplay", "LifelongTaskSequence", "task_order"]
