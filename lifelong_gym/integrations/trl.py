"""TRL: an environment of the suite as `GRPOTrainer(environment_factory=...)` takes it.

    from trl import GRPOConfig, GRPOTrainer
    from lifelong_gym.integrations.trl import environment_factory, task_dataset

    factory = environment_factory("LifelongDB-v0", max_turns=5)
    trainer = GRPOTrainer(
        model=model,
        args=GRPOConfig(max_steps=100, num_generations=8, seed=0, ...),
        train_dataset=task_dataset(factory, seed=0),
        environment_factory=factory,
    )

TRL makes one instance per rollout and finds the tools among its public methods: here
they are the environment's own (`execute_sql(sql)` and `commit_final_answer(answer)` on
the DB environment), each sending the call to `step` as a native tool call and returning
the observation as the tool result. `reset(**row)` starts the dataset row's task (its
`task_index` column) and returns its prompt. `get_reward()` is the environment's reward;
an episode the model left without ending is scored as it stands, with the text format's
status for a reply that calls no tool (`agent_validation_failed`).

One task per GRPO group: TRL's sampler hands all `num_generations` rollouts of a group
the same dataset row (with gradient accumulation, `steps_per_generation` and several
processes too), so a row's `task_index` makes the group play one task, and the seeds of
`task_dataset` and `GRPOConfig` fix which tasks a run plays. A row without `task_index`
(no `train_dataset`: TRL's placeholder rows) would let each rollout draw its own task, so
`reset` refuses it with `RolloutConfigError`.

Several environments in one run (TRL's mapping form, `environment_factory={name: factory}`,
each dataset row naming its environment in an `environment` column and its task in
`task_index`):

    factories = environment_factories({"LifelongDB-v0": {}, "LifelongOS-v0": {"pool_size": 1}})
    trainer = GRPOTrainer(
        model=model,
        args=GRPOConfig(...),
        train_dataset=environment_dataset(factories, tasks_per_environment=100),
        environment_factory=factories,
    )

TRL shows a row only its environment's tools and logs each environment's reward under its
class name (`rewards/LifelongDB/mean`, `rewards/LifelongOS/mean`, ...).
"""

from __future__ import annotations

import inspect
import re
import weakref
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from lifelong_gym.errors import EnvArgumentError, RolloutConfigError
from lifelong_gym.extras import import_extra
from lifelong_gym.session import Session, SessionStatus
from lifelong_gym.tool_calls import ToolCall

ENDED = "The task has ended; no tool can be called any more."


class ToolEnvironment:
    """One environment of the suite in the tools format, seen by TRL as an object with tools.

    Subclasses made by `environment_factory` add one public method per tool of the
    environment, and the id and keyword arguments to build it with.
    """

    env_id: ClassVar[str]
    env_kwargs: ClassVar[dict[str, Any]]

    def __init__(self) -> None:
        self._env = gym.make(self.env_id, action_format="tools", **self.env_kwargs)
        # TRL keeps its instances for the whole run and has no close(): free with the object
        self._closer = weakref.finalize(self, self._env.close)

    def reset(self, **row: Any) -> str:
        """Start the dataset row's task (its `task_index`); its prompt for the model."""
        # TRL hands every generation of a group the same row; without a task_index each
        # generation would draw its own task and the group's advantages compare strangers
        index = row.get("task_index")
        if index is None:
            raise RolloutConfigError(
                f"{self.env_id}: a TRL dataset row without task_index would let one GRPO group "
                f"play several tasks; pass GRPOTrainer(train_dataset=task_dataset(...)) "
                f"(several environments: environment_dataset(...))"
            )
        observation, _ = self._env.reset(options={"task_index": index})
        return observation

    def get_reward(self) -> float:
        """The episode's reward from the environment, ending it first if it still runs."""
        env = self._env.unwrapped
        if env.session is None:
            return 0.0
        if not env.session.finished:
            env.end_task(
                SessionStatus.AGENT_VALIDATION_FAILED,
                "the model's last turn called no tool before the task ended",
            )
        return env.session.reward

    @property
    def session(self) -> Session | None:
        """The current (or last) task's record: history, status, outcome and reward."""
        return self._env.unwrapped.session

    # Properties and underscored names: TRL takes every other public function for a tool.
    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The environment's OpenAI-style function tools."""
        return list(self._env.unwrapped.tools)

    @property
    def task_indices(self) -> list[int]:
        """The sample indices of the environment's task set."""
        return list(self._env.unwrapped.tasks.indices)

    def _close(self) -> None:
        self._closer()

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        session = self.session
        if session is None or session.finished:
            return ENDED
        observation, *_ = self._env.step(ToolCall(name, arguments).reply())
        return observation or ENDED


def environment_factory(env_id: str, **env_kwargs: Any) -> type[ToolEnvironment]:
    """The class TRL's `GRPOTrainer(environment_factory=...)` takes, for `env_id`.

    `env_kwargs` go to `gym.make` with `action_format="tools"`; each instance holds one
    environment, freed when TRL drops it.
    """
    import_extra("trl", "trl", "lifelong_gym.integrations.trl")
    if "action_format" in env_kwargs:
        raise EnvArgumentError("TRL's environments take tool calls: drop action_format")
    schemas = tool_schemas(env_id)
    methods: dict[str, Any] = {s["function"]["name"]: _tool_method(s) for s in schemas}
    clash = sorted(set(methods) & {"reset", "get_reward", "session"})
    if clash:
        raise EnvArgumentError(f"{env_id}: tools named {clash} would hide TRL's own methods")
    name = re.sub(r"\W", "_", env_id.split("-")[0])  # the name TRL logs the reward under
    attributes = {"env_id": env_id, "env_kwargs": dict(env_kwargs), **methods}
    attributes["__doc__"] = f"{env_id} for TRL: the tools are {', '.join(methods)}."
    return type(name, (ToolEnvironment,), attributes)


def environment_factories(
    envs: Iterable[str] | Mapping[str, Mapping[str, Any]],
) -> dict[str, type[ToolEnvironment]]:
    """TRL's mapping form of `environment_factory`: `{env_id: class}` for several environments.

    `envs` is a list of ids, or ids mapped to their keyword arguments; a dataset row picks
    its environment with an `environment` column holding the id (`environment_dataset`).
    """
    chosen = dict(envs) if isinstance(envs, Mapping) else dict.fromkeys(envs, {})
    if not chosen:
        raise EnvArgumentError("environment_factories needs at least one environment id")
    factories = {env_id: environment_factory(env_id, **kwargs) for env_id, kwargs in chosen.items()}
    names = [factory.__name__ for factory in factories.values()]
    if len(set(names)) != len(names):  # TRL keeps one reward column per class name
        raise EnvArgumentError(f"{list(chosen)}: two ids share the reward name of {names}")
    return factories


def task_dataset(
    env: str | type[ToolEnvironment], *, num_tasks: int | None = None, seed: int = 0
) -> Any:
    """A `datasets.Dataset` of one environment's tasks, the `train_dataset` TRL groups by.

    One row per task (`prompt`, empty: `reset` writes the task's, and `task_index`), in an
    order shuffled with `seed`; `num_tasks` draws that many tasks (with `seed`), by default
    every task is in. `env` is an env id or a class made by `environment_factory` (whose
    keyword arguments, such as `tasks`, choose the task set).
    """
    factory = environment_factory(env) if isinstance(env, str) else env
    if not (isinstance(factory, type) and issubclass(factory, ToolEnvironment)):
        raise TypeError(f"task_dataset takes an env id or environment_factory's class, not {env!r}")
    rng = np.random.default_rng(seed)
    indices = rng.permutation(_drawn_task_indices(factory, num_tasks, rng, "num_tasks"))
    rows = [{"prompt": [{"role": "user", "content": ""}], "task_index": int(i)} for i in indices]
    return _datasets().Dataset.from_list(rows)


def environment_dataset(
    factories: Mapping[str, type[ToolEnvironment]],
    *,
    tasks_per_environment: int | None = None,
    seed: int = 0,
) -> Any:
    """A `datasets.Dataset` mixing the environments' tasks for the mapping form.

    One row per task, shuffled with `seed`: `environment` (the factory's key) and
    `task_index`. `tasks_per_environment` draws that many tasks of each environment (with
    `seed`); by default every task is in.
    """
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for name, factory in factories.items():
        indices = _drawn_task_indices(factory, tasks_per_environment, rng, "tasks_per_environment")
        rows += [{"environment": name, "task_index": index} for index in indices]
    return _datasets().Dataset.from_list([rows[i] for i in rng.permutation(len(rows))])


def _drawn_task_indices(
    factory: type[ToolEnvironment], count: int | None, rng: np.random.Generator, setting: str
) -> list[int]:
    """`count` of the factory's task indices drawn with `rng` (in order), or all of them."""
    instance = factory()
    try:
        indices = instance.task_indices
    finally:
        instance._close()
    if count is None:
        return indices
    if not 1 <= count <= len(indices):
        raise EnvArgumentError(f"{setting}={count}: {factory.env_id} has {len(indices)} tasks")
    return sorted(int(i) for i in rng.choice(indices, count, replace=False))


def _datasets() -> Any:
    return import_extra("datasets", "trl", "lifelong_gym.integrations.trl")


def tool_schemas(env_id: str) -> tuple[dict[str, Any], ...]:
    """The function schemas of `env_id`'s environment class, without building one."""
    import lifelong_gym  # noqa: F401 - registers the suite's ids

    try:
        entry_point = gym.spec(env_id).entry_point
    except gym.error.Error as error:
        raise EnvArgumentError(str(error)) from None
    if isinstance(entry_point, str):
        entry_point = gym.envs.registration.load_env_creator(entry_point)
    schemas = getattr(entry_point, "tool_schemas", ())
    if not schemas:
        raise EnvArgumentError(f"{env_id} is not an environment of the suite with tools")
    return schemas


def _tool_method(schema: dict[str, Any]) -> Any:
    """A method calling one tool, with the signature and docstring TRL reads its schema from."""
    function = schema["function"]
    name = function["name"]
    properties: dict[str, Any] = function["parameters"]["properties"]

    def call(self: ToolEnvironment, **arguments: Any) -> str:
        return self._call(name, arguments)

    keyword = inspect.Parameter.KEYWORD_ONLY
    call.__name__ = call.__qualname__ = name
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(key, keyword, annotation=str) for key in properties],
        return_annotation=str,
    )
    call.__annotations__ = {**dict.fromkeys(properties, str), "return": str}
    arguments = [f"    {key}: {spec['description']}" for key, spec in properties.items()]
    lines = [function["description"], *(["", "Args:", *arguments] if arguments else [])]
    call.__doc__ = "\n".join([*lines, "", "Returns:", "    The environment's observation."])
    return call
