"""Agents by spec string, as the command line names them (`--agent oracle`)."""

from __future__ import annotations

from collections.abc import Callable

from lifelong_gym.tasks import TaskSet

from .base import Agent
from .oracle import OracleAgent

AgentBuilder = Callable[[str, TaskSet], Agent]

# spec prefix -> builder(argument after the prefix, tasks). A prefix ending in ":" takes an
# argument ("hf:MODEL"); one without must match the whole spec.
AGENT_SPECS: dict[str, AgentBuilder] = {
    "oracle": lambda _argument, tasks: OracleAgent(tasks),
}


class AgentSpecError(ValueError):
    """An agent spec that names no known kind of agent."""


def make_agent(spec: str, tasks: TaskSet) -> Agent:
    """Build the agent a spec names: "oracle" (more kinds register in `AGENT_SPECS`)."""
    for prefix, build in AGENT_SPECS.items():
        if prefix.endswith(":") and spec.startswith(prefix):
            return build(spec.removeprefix(prefix), tasks)
        if spec == prefix:
            return build("", tasks)
    known = ", ".join(p + ("..." if p.endswith(":") else "") for p in AGENT_SPECS)
    raise AgentSpecError(f"unknown agent {spec!r}; known agents: {known}")
