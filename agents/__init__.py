"""Agents and the model pool (import as `lifelong_gym.agents`)."""

from .base import Agent, AgentContextLimitError, AgentError, AgentOutOfMemoryError
from .factory import AGENT_SPECS, AgentSpecError, make_agent
from .oracle import OracleAgent

__all__ = [
    "AGENT_SPECS",
    "Agent",
    "AgentContextLimitError",
    "AgentError",
    "AgentOutOfMemoryError",
    "AgentSpecError",
    "OracleAgent",
    "make_agent",
]
