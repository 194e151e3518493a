"""Gymnasium wrappers for lifelong environments (import as `lifelong_gym.wrappers`)."""

from .task_sequence import LifelongTaskSequence, task_order

__all__ = ["LifelongTaskSequence", "task_order"]
