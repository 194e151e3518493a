"""Lifelong-learning methods, each one object used by a callback and by a wrapper.

The runner's callbacks are in `lifelong_gym.run.method_callbacks`, the Gymnasium wrappers
in `lifelong_gym.wrappers`; both call the same `start` / `finish` of the method object.
Nothing here knows the runner.
"""

from .budget import resolve_budget
from .experience import Experience, ExperienceMemory
from .memory_items import MemoryItem
from .reasoning_memory import ReasoningMemoryMethod
from .replay import ExperienceReplayMethod
from .self_consistency import GroupSelfConsistencyMethod

__all__ = [
    "Experience",
    "ExperienceMemory",
    "ExperienceReplayMethod",
    "GroupSelfConsistencyMethod",
    "MemoryItem",
    "ReasoningMemoryMethod",
    "resolve_budget",
]
