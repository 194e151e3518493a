"""Agents by spec string, as the command line names them (`--agent oracle`, `--agent hf:PATH`,
`--agent my_module:MyAgent?key=value`)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl

from lifelong_gym.arguments import (
    assignments,
    check_arguments,
    keyword_dict,
    text_value,
    user_class,
)
from lifelong_gym.errors import AgentSpecError, ConfigError
from lifelong_gym.tasks import TaskSet

from .base import Agent
from .language_model import LanguageModelAgent
from .models import ModelConfigError
from .oracle import OracleAgent
from .planted import PlantedAgent
from .pool import ModelPool, create_model, parse_model_config

Tools = Sequence[dict[str, Any]] | None
# (argument after the prefix, tasks, the environment's tools when it takes tool calls)
AgentBuilder = Callable[[str, TaskSet, Tools], Agent]


def _query_options(name: str, options: str) -> dict[str, str]:
    """The `?key=value&...` options of agent `name`, as text."""
    try:
        pairs = parse_qsl(options, strict_parsing=True) if options else []
    except ValueError:
        raise AgentSpecError(f"agent {name}: options must read ?key=value&key=value") from None
    try:
        return keyword_dict(pairs)
    except ValueError as error:
        raise AgentSpecError(f"agent {name}: {error}") from None


def _model_agent(name: str, fields: dict[str, str], options: str, tools: Tools) -> Agent:
    """A LanguageModelAgent over the model of `fields` plus `?key=value&...` options."""
    config = parse_model_config({**_query_options(name, options), "name": name, **fields})
    return LanguageModelAgent(create_model(config), tools=tools)


# module:Class or module.Class (a module path of dotted names), options after "?"
_USER_AGENT = re.compile(r"(?P<module>\w+(?:\.\w+)*)[:.](?P<cls>\w+)(?:\?(?P<options>.*))?")


def _user_agent_builder(spec: str) -> AgentBuilder | None:
    """What builds a user's `Agent` subclass named `module:Class[?key=value&...]` (or
    `module.Class`), its options read as YAML values and checked against its signature
    now; a class with a `tasks` parameter gets the run's task set. None for another spec."""
    match = _USER_AGENT.fullmatch(spec)
    if match is None:
        return None
    name = f"{match['module']}.{match['cls']}"
    cls = user_class(match["module"], match["cls"], Agent, AgentSpecError, f"agent {name}")
    options = _query_options(name, match["options"] or "")
    if "tasks" in options:
        raise AgentSpecError(f"agent {name}: tasks is the run's task set; do not give it")
    try:
        kwargs = {key: text_value(value) for key, value in options.items()}
        check_arguments(cls, kwargs, f"agent {name}")
    except (ValueError, ConfigError) as error:
        raise AgentSpecError(f"agent {name}: {error}") from None
    takes_tasks = "tasks" in inspect.signature(cls).parameters
    try:
        inspect.signature(cls).bind(**kwargs, **({"tasks": None} if takes_tasks else {}))
    except TypeError as error:
        raise AgentSpecError(f"agent {name}: {error}") from None
    if inspect.isabstract(cls):
        raise AgentSpecError(f"agent {name}: the class is abstract (it does not define act)")

    def build(_argument: str, tasks: TaskSet, _tools: Tools) -> Agent:
        return cls(**kwargs, **({"tasks": tasks} if takes_tasks else {}))

    return build


def _hf_agent(argument: str, _tasks: TaskSet, tools: Tools) -> Agent:
    path, _, options = argument.partition("?")
    return _model_agent(f"hf:{argument}", {"backend": "hf", "path": path}, options, tools)


def _openai_agent(argument: str, _tasks: TaskSet, tools: Tools) -> Agent:
    base_url, _, model = argument.partition("#")
    model, _, options = model.partition("?")
    if not model:
        raise AgentSpecError(
            f"agent openai:{argument} names no model; add it after '#', "
            "e.g. openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct"
        )
    fields = {"backend": "openai", "base_url": base_url, "model": model}
    return _model_agent(f"openai:{argument}", fields, options, tools)


def _planted_agent(argument: str, tasks: TaskSet, tools: Tools) -> Agent:
    """`planted[:k=2,m=10,base=0.2,seed=0]`: the planted learner (agents/planted.py)."""
    try:
        kwargs = assignments(argument)
        check_arguments(PlantedAgent, kwargs, "agent planted")
    except (ValueError, ConfigError) as error:
        raise AgentSpecError(f"agent planted:{argument}: {error}") from None
    return PlantedAgent(tasks, **kwargs, action_format="tools" if tools else "text")


# spec prefix -> builder(argument after the prefix, tasks, tools). A prefix ending in ":"
# takes an argument ("hf:MODEL"); one without must match the whole spec.
AGENT_SPECS: dict[str, AgentBuilder] = {
    "oracle": lambda _argument, tasks, tools: OracleAgent(tasks, "tools" if tools else "text"),
    "planted": _planted_agent,
    "planted:": _planted_agent,
    "hf:": _hf_agent,
    "openai:": _openai_agent,
}


def make_agent(
    spec: str, tasks: TaskSet, pool: ModelPool | None = None, tools: Tools = None
) -> Agent:
    """Build the agent a spec names: oracle, hf:/path/to/model, openai:URL#model-name,
    or model:NAME for a model of `pool` (the run's configured models).

    Model options follow a `?`: `hf:/models/qwen?max_new_tokens=256&temperature=0.7`.
    `tools`: the environment's tools when it takes tool calls (`action_format="tools"`);
    the agent then replies with tool calls.
    """
    if spec.startswith("model:"):
        name = spec.removeprefix("model:")
        if pool is None:
            raise AgentSpecError(f"agent {spec!r} needs models configured in the run's YAML")
        try:
            return LanguageModelAgent(pool.get(name), tools=tools)
        except ModelConfigError as error:
            raise AgentSpecError(str(error)) from None
    build, argument = agent_builder(spec)
    try:
        return build(argument, tasks, tools)
    except ModelConfigError as error:
        raise AgentSpecError(str(error)) from None


def agent_builder(spec: str) -> tuple[AgentBuilder, str]:
    """The builder of an agent spec (not `model:NAME`) and its argument, without building
    anything (a user's class is imported and its options checked); an unknown spec is one
    `AgentSpecError` listing the known ones."""
    for prefix, build in AGENT_SPECS.items():
        argument = spec.removeprefix(prefix)
        takes_argument = prefix.endswith(":")
        if (spec.startswith(prefix) and bool(argument)) if takes_argument else spec == prefix:
            return build, argument
    if (user_build := _user_agent_builder(spec)) is not None:
        return user_build, ""
    raise AgentSpecError(
        f"unknown agent {spec!r}; known agents: {_known_specs()}, or module:Class for your own"
    )


def _known_specs() -> str:
    """The kinds of agent spec, as an error lists them (`planted[:...]` for one that takes an
    argument or none)."""
    shown: list[str] = []
    for prefix in [*AGENT_SPECS, "model:"]:
        bare = prefix.removesuffix(":")
        if prefix.endswith(":") and bare in shown:
            shown[shown.index(bare)] = f"{bare}[:...]"
        else:
            shown.append(prefix + ("..." if prefix.endswith(":") else ""))
    return ", ".join(shown)
