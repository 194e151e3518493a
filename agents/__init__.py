"""Agents and the model pool (import as `lifelong_gym.agents`)."""

from .base import Agent, AgentContextLimitError, AgentError, AgentOutOfMemoryError
from .oracle import OracleAgent

__all__ = ["Agent", "AgentContextLimitError", "AgentError", "AgentOutOfMemoryError", "OracleAgent"]
