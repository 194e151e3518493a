"""The run engine: the runner, its callbacks and registry, probes, the cost meter, config.

It writes the run folder through `lifelong_gym.results`.
"""

from .callbacks import EVENTS, Callback, RunState, SessionControl
from .config import RunConfig, build_runner, load_run_config
from .method_callbacks import (
    EmbeddingReplayCallback,
    ExperienceReplayCallback,
    GroupSelfConsistencyCallback,
    ReasoningMemoryCallback,
    RelevantReplayCallback,
)
from .online_training import OnlineTrainingCallback
from .play import run_with_twin
from .registry import CALLBACKS, make_callback, register_callback
from .runner import Runner
from .settings import RunSettings

__all__ = [
    "CALLBACKS",
    "EVENTS",
    "Callback",
    "EmbeddingReplayCallback",
    "ExperienceReplayCallback",
    "GroupSelfConsistencyCallback",
    "OnlineTrainingCallback",
    "ReasoningMemoryCallback",
    "RelevantReplayCallback",
    "RunConfig",
    "RunSettings",
    "RunState",
    "Runner",
    "SessionControl",
    "build_runner",
    "load_run_config",
    "make_callback",
    "register_callback",
    "run_with_twin",
]
