"""`make_agent`: an agent from a short spec string (the CLI's `--agent`)."""

from __future__ import annotations

from lifelong_gym.tasks import TaskSet

from .base import Agent
from .language_model import LanguageModelAgent
from .models import ModelConfigError
from .oracle import OracleAgent
from .pool import ModelPool, create_model, parse_model_config

AGENT_SPECS = (
    "oracle",
    "hf:/path/to/model",
    "openai:http://host:port/v1#model-name",
    "pool:NAME (a model of the run's pool)",
)


def make_agent(spec: str, tasks: TaskSet, pool: ModelPool | None = None) -> Agent:
    """The agent `spec` names; a spec that cannot be used is one ModelConfigError."""
    kind, _, rest = spec.partition(":")
    if spec == "oracle":
        return OracleAgent(tasks)
    if kind == "hf" and rest:
        config = parse_model_config({"name": spec, "backend": "hf", "path": rest})
        return LanguageModelAgent(create_model(config))
    if kind == "openai" and rest:
        base_url, _, model = rest.partition("#")
        if not model:
            raise ModelConfigError(
                f"agent spec {spec!r} names no model; add it after '#', "
                "e.g. openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct"
            )
        config = parse_model_config(
            {"name": spec, "backend": "openai", "base_url": base_url, "model": model}
        )
        return LanguageModelAgent(create_model(config))
    if kind == "pool" and rest:
        if pool is None:
            raise ModelConfigError(
                f"agent spec {spec!r} needs a model pool (`models:` in the config)"
            )
        return LanguageModelAgent(pool.get(rest))
    raise ModelConfigError(f"unknown agent spec {spec!r}; use one of: {', '.join(AGENT_SPECS)}")
