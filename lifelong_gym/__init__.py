"""lifelong-gym: Gymnasium environments for LLM agents learning across a stream of tasks."""

from lifelong_gym.core import Evaluation, Interaction, LifelongEnv
from lifelong_gym.errors import LifelongGymError
from lifelong_gym.metrics import LifelongMetrics, compute_metrics
from lifelong_gym.registration import ENV_IDS, register_envs
from lifelong_gym.session import ChatMessage, EvaluationOutcome, Role, Session, SessionStatus
from lifelong_gym.spaces import UnicodeText
from lifelong_gym.tasks import Task, TaskFileError, TaskSet

__version__ = "0.1.0"

__all__ = [
    "Callback",
    "LifelongGymError",
    "RunSettings",
    "RunState",
    "Runner",
    "SessionControl",
    "ENV_IDS",
    "ChatMessage",
    "Evaluation",
    "EvaluationOutcome",
    "Interaction",
    "LifelongEnv",
    "LifelongMetrics",
    "Role",
    "Session",
    "SessionStatus",
    "Task",
    "TaskFileError",
    "TaskSet",
    "UnicodeText",
    "compute_metrics",
    "register_envs",
]

register_envs()


def __getattr__(name: str):
    """The run layer's public names, imported when first used (it pulls in the agents)."""
    if name in ("Runner", "RunSettings", "Callback", "RunState", "SessionControl"):
        from lifelong_gym import run

        return getattr(run, name)
    raise AttributeError(f"module 'lifelong_gym' has no attribute {name!r}")
