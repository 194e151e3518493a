"""Lifelong-learning methods, each one object used by a callback and by a wrapper.

Each is a `Method`: `method.as_callback()` gives its runner callback (made from the method
class in `lifelong_gym.run.method_callbacks`), `method.as_wrapper(env)` its Gymnasium wrapper
(`MethodWrapper`, exported by `lifelong_gym.wrappers` too); both call the same `start` and
`finish`. Nothing here knows the runner.
"""

from .budget import resolve_budget
from .experience import Experience, ExperienceMemory
from .memory_items import MemoryItem
from .method import Method, MethodWrapper
from .procedural_memory import ProceduralMemoryMethod, Procedure
from .reasoning_memory import ReasoningMemoryMethod
from .replay import EmbeddingReplayMethod, ExperienceReplayMethod, RelevantReplayMethod
from .self_consistency import GroupSelfConsistencyMethod
from .workflow_memory import Workflow, WorkflowMemoryMethod

__all__ = [
    "EmbeddingReplayMethod",
    "Experience",
    "ExperienceMemory",
    "ExperienceReplayMethod",
    "GroupSelfConsistencyMethod",
    "MemoryItem",
    "Method",
    "MethodWrapper",
    "Procedure",
    "ProceduralMemoryMethod",
    "ReasoningMemoryMethod",
    "RelevantReplayMethod",
    "Workflow",
    "WorkflowMemoryMethod",
    "resolve_budget",
]
