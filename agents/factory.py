"""Agents by spec string, as the command line names them (`--agent oracle`, `--agent hf:PATH`)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl

from lifelong_gym.errors import AgentSpecError
from lifelong_gym.tasks import TaskSet

from .base import Agent
from .language_model import LanguageModelAgent
from .models import ModelConfigError
from .oracle import OracleAgent
from .pool import ModelPool, create_model, parse_model_config

AgentBuilder = Callable[[str, TaskSet], Agent]


def _model_agent(name: str, fields: dict[str, str], options: str) -> Agent:
    """A LanguageModelAgent over the model of `fields` plus `?key=value&...` options."""
    try:
        pairs = parse_qsl(options, strict_parsing=True) if options else []
    except ValueError:
        raise AgentSpecError(f"agent {name}: options must read ?key=value&key=value") from None
    config = parse_model_config({**dict(pairs), "name": name, **fields})
    return LanguageModelAgent(create_model(config))


def _hf_agent(argument: str, _tasks: TaskSet) -> Agent:
    path, _, options = argument.partition("?")
    return _model_agent(f"hf:{argument}", {"backend": "hf", "path": path}, options)


def _openai_agent(argument: str, _tasks: TaskSet) -> Agent:
    base_url, _, model = argument.partition("#")
    model, _, options = model.partition("?")
    if not model:
        raise AgentSpecError(
            f"agent openai:{argument} names no model; add it after '#', "
            "e.g. openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct"
        )
    fields = {"backend": "openai", "base_url": base_url, "model": model}
    return _model_agent(f"openai:{argument}", fields, options)


# spec prefix -> builder(argument after the prefix, tasks). A prefix ending in ":" takes an
# argument ("hf:MODEL"); one without must match the whole spec.
AGENT_SPECS: dict[str, AgentBuilder] = {
    "oracle": lambda _argument, tasks: OracleAgent(tasks),
    "hf:": _hf_agent,
    "openai:": _openai_agent,
}


def make_agent(spec: str, tasks: TaskSet, pool: ModelPool | None = None) -> Agent:
    """Build the agent a spec names: oracle, hf:/path/to/model, openai:URL#model-name,
    or model:NAME for a model of `pool` (the run's configured models).

    Model options follow a `?`: `hf:/models/qwen?max_new_tokens=256&temperature=0.7`.
    """
    if spec.startswith("model:"):
        name = spec.removeprefix("model:")
        if pool is None:
            raise AgentSpecError(f"agent {spec!r} needs models configured in the run's YAML")
        try:
            return LanguageModelAgent(pool.get(name))
        except ModelConfigError as error:
            raise AgentSpecError(str(error)) from None
    for prefix, build in AGENT_SPECS.items():
        argument = spec.removeprefix(prefix)
        takes_argument = prefix.endswith(":")
        if (spec.startswith(prefix) and bool(argument)) if takes_argument else spec == prefix:
            try:
                return build(argument, tasks)
            except ModelConfigError as error:
                raise AgentSpecError(str(error)) from None
    known = ", ".join(p + ("..." if p.endswith(":") else "") for p in [*AGENT_SPECS, "model:"])
    raise AgentSpecError(f"unknown agent {spec!r}; known agents: {known}")
