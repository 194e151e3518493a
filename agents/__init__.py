"""Agents and the model pool (import as `lifelong_gym.agents`)."""

from lifelong_gym.session import to_messages

from .base import Agent, AgentContextLimitError, AgentError, AgentOutOfMemoryError
from .factory import AGENT_SPECS, AgentSpecError, make_agent
from .language_model import LanguageModelAgent
from .models import (
    HFModelConfig,
    LanguageModel,
    ModelConfig,
    ModelConfigError,
    OpenAIModelConfig,
    Usage,
    UsageLog,
)
from .oracle import OracleAgent
from .pool import ModelPool, create_model, parse_model_config
from .scripted import ScriptedAgent

__all__ = [
    "AGENT_SPECS",
    "Agent",
    "AgentContextLimitError",
    "AgentError",
    "AgentOutOfMemoryError",
    "AgentSpecError",
    "HFModelConfig",
    "LanguageModel",
    "LanguageModelAgent",
    "ModelConfig",
    "ModelConfigError",
    "ModelPool",
    "OpenAIModelConfig",
    "OracleAgent",
    "ScriptedAgent",
    "Usage",
    "UsageLog",
    "create_model",
    "make_agent",
    "parse_model_config",
    "to_messages",
]
