"""The settings of a lifelong run, from a YAML file or command-line flags, and what they build."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import yaml
from pydantic import Field, ValidationError, model_validator

from lifelong_gym.agents import Agent, ModelConfigError, ModelPool, make_agent
from lifelong_gym.agents.factory import agent_builder
from lifelong_gym.errors import LifelongGymError, RunConfigError
from lifelong_gym.orders import replicate_seeds
from lifelong_gym.registration import checked_env_kwargs, with_absolute_paths
from lifelong_gym.registration import make_env as make_checked_env
from lifelong_gym.results.content import CONTENT, run_content
from lifelong_gym.results.folder import RunDirectory, holds_run, replicate_folder
from lifelong_gym.results.gain import twin_folder
from lifelong_gym.run import method_callbacks  # noqa: F401 - registers the methods' names
from lifelong_gym.run.plugins import load_plugins
from lifelong_gym.run.probes import Probes
from lifelong_gym.run.registry import check_needs, make_callback
from lifelong_gym.run.runner import Runner
from lifelong_gym.run.settings import RunSettings, validation_problems
from lifelong_gym.tasks import absolute_source


class RunConfig(RunSettings):
    """Everything a run needs; a YAML file and the `run` command's flags both produce one.

    The runner's own settings (`RunSettings`) and what builds its environment, agent,
    callbacks and probes: `build_runner` hands the config to the runner as it is.
    """

    env: str = Field("LifelongDB-v0", description="registered environment id")
    agent: str = Field(
        "oracle",
        description="agent spec: oracle, planted[:k=2,...], hf:FOLDER, openai:MODEL, "
        "model:NAME, module:Class (docs/agents.md)",
    )
    models: list[dict[str, Any]] = Field(
        default_factory=list, description="the model pool: one config (a mapping) per model"
    )
    output: Path = Field(description="output folder of the run")
    tasks: str | None = Field(None, description="task file or shipped task-set name")
    env_args: dict[str, Any] = Field(
        default_factory=dict, description="the environment's keyword arguments"
    )
    callbacks: list[str] = Field(default_factory=list, description="NAME[:key=value,...]")
    plugins: list[str] = Field(
        default_factory=list,
        description="modules imported first: the agents and callbacks they define",
    )
    replicates: int = Field(
        1, ge=1, description="runs of the tasks in orders seeded seed, seed+1, ...: OUTPUT/seed-N"
    )
    ray: str | None = Field(
        None, description="run the environments in Ray actors: a cluster address, auto or local"
    )
    ray_resources: dict[str, float] = Field(
        default_factory=dict, description="Ray resources each environment's actor needs"
    )
    stateless_baseline: bool = Field(
        False, description="also run the stream with no callbacks into OUTPUT/stateless"
    )
    probe_every: int | None = Field(
        None, ge=1, description="play the probe set before the stream and every N tasks"
    )
    probes: str | None = Field(
        None, description="the probe set: a task file of the same environment (docs/metrics.md)"
    )

    @model_validator(mode="after")
    def _absolute_paths(self) -> RunConfig:
        """Paths made absolute, so that the run's config names the files it read from any
        working folder (a shipped set's name stays a name)."""
        self.tasks = absolute_source(self.tasks)
        self.probes = absolute_source(self.probes)
        self.env_args = with_absolute_paths(self.env, self.env_args)
        return self

    def identity(self) -> dict[str, Any]:
        """The settings that decide what is run (a resumed run must match them).

        Where the results go, how many tasks to run, when to give up and how to show
        progress may change between a run and its resumption.
        """
        return self.model_dump(
            mode="json",
            exclude={
                "output",
                "max_tasks",
                "overwrite",
                "retry_errors",  # plays errored sessions again, in the same run
                "progress",
                "max_consecutive_failures",
                "max_skipped_interactions",  # when to give up on a session
                "plots",
                "window",  # how the metrics are summed up, not what is run
                "metrics_every",
                "concurrency",  # the runner records it itself
                "ray",  # where the environments run does not change the run
                "ray_resources",
                "replicates",  # each replicate is a run of its own seed
                "stateless_baseline",  # a run of its own, in OUTPUT/stateless
                "price_per_mtok",  # prices the cost, does not change it
                "probe_every",  # the runner records the probes itself (their set's hash)
                "probes",
                "plugins",  # they make names known; the agent and callbacks name what runs
            },
        )

    def replicate_runs(self) -> list[RunConfig]:
        """The runs this config asks for: itself, or with `replicates` K > 1 one run per
        seed, seed..seed+K-1, each in OUTPUT/seed-N (the run `--seed N --output
        OUTPUT/seed-N` would be). The order and seed are checked here, before anything is
        built."""
        seeds = replicate_seeds(self.order, self.seed, self.replicates)
        if self.replicates == 1:
            return [self]
        return [
            self.model_copy(update={"seed": seed, "output": replicate_folder(self.output, seed)})
            for seed in seeds
        ]

    def stateless_twin(self) -> RunConfig:
        """The same stream (tasks, order, seed) with no callbacks: the agent alone, into
        OUTPUT/stateless (`--stateless-baseline`)."""
        return self.model_copy(
            update={
                "callbacks": [],
                "output": twin_folder(self.output),
                "stateless_baseline": False,
            }
        )

    def check(self) -> None:
        """Everything about the config that can be checked without making anything: the
        price, the probes, the order and seed, the kind of agent, the callbacks' specs, the
        environment's id and arguments, after the plugins are imported. A problem is one
        line."""
        load_plugins(self.plugins)
        self.price()
        if not self.agent.startswith("model:"):  # a pool's model is checked when it is made
            agent_builder(self.agent)
        self.check_probes()
        self.replicate_runs()
        for spec in self.callbacks:
            make_callback(spec, self.log_folder())
        env_kwargs(self)

    def log_folder(self) -> Path | None:
        """Where a failing callback's traceback goes before the run starts: the output
        folder's `run.log` when it holds a run, else a temp file (no folder is made)."""
        return self.output if holds_run(self.output) else None

    def check_probes(self) -> None:
        """`probe_every` and `probes` go together; alone, either is one line."""
        if (self.probe_every is None) != (self.probes is None):
            raise RunConfigError(
                "--probe-every N and --probes PATH go together: give both (or neither)"
            )


def load_run_config(path: str | Path | None, overrides: dict[str, Any]) -> RunConfig:
    """Read a YAML config (if given) and apply the flags that were set on top of it."""
    return run_config(read_config_file(path), overrides)


def read_config_file(path: str | Path | None) -> dict[str, Any]:
    """The settings of a YAML config file (none without a path), `-` in keys read as `_`."""
    if path is None:
        return {}
    try:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise RunConfigError(f"cannot read config {path}: {error}") from None
    except yaml.YAMLError as error:
        raise RunConfigError(f"config {path} is not YAML: {yaml_problem(error)}") from None
    if not isinstance(loaded, dict | None):
        raise RunConfigError(f"config {path} must be a mapping of settings")
    return setting_keys(loaded or {})


def setting_keys(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings with `-` in their keys read as `_` (`max-tasks` is `max_tasks`)."""
    return {str(key).replace("-", "_"): value for key, value in settings.items()}


def given_flags(overrides: dict[str, Any]) -> dict[str, Any]:
    """The command-line flags that were set (not None, not empty)."""
    return {key: value for key, value in overrides.items() if value not in (None, ())}


def run_config(settings: dict[str, Any], overrides: dict[str, Any]) -> RunConfig:
    """The config of `settings` with the flags that were set on top."""
    data = {**settings, **given_flags(overrides)}
    try:
        return RunConfig.model_validate(data)
    except ValidationError as error:
        raise RunConfigError(f"invalid run config: {validation_problems(error)}") from None


def yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's many-line message as one line: the problem and where it is."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None)
    if mark is None or problem is None:
        return " ".join(str(error).split())
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def build_runner(config: RunConfig, agent: Agent | None = None) -> Runner:
    """Make the environment, agent and callbacks a config names, and a runner over them.

    The cheap checks come first and the model last: a bad callback spec, a bad env
    argument, a busy output folder or a changed config is refused before any model loads.
    `agent`: one already made for this config (a stateless twin's: its model loads once).
    """
    load_plugins(config.plugins)
    config.price()  # a bad price is refused before anything is made
    config.check_probes()
    callbacks = [make_callback(spec, config.log_folder()) for spec in config.callbacks]
    check_needs(callbacks)
    make = make_env if config.ray is None else _actor_env_maker(config)
    env = make(config)
    folder = probes = None
    try:
        if config.probes is not None:  # the probe set in an environment like the stream's
            probe_config = config.model_copy(update={"tasks": config.probes})
            try:
                probe_env = make(probe_config)
            except LifelongGymError as error:
                raise RunConfigError(f"--probes {config.probes}: {error}") from None
            more = None if config.ray is None else partial(make, probe_config)
            probes = Probes(probe_env, config.probe_every, config.concurrency, more)
        folder = RunDirectory(config.output)
        if not config.overwrite:  # the model is not loaded yet
            probe_tasks = probes.env.unwrapped.tasks if probes is not None else None
            early = {"user": config.identity(), CONTENT: run_content(env, probe_tasks)}
            folder.refuse_other_config(early, keys=("user",))
        try:
            pool = ModelPool(config.models) if config.models else None
        except ModelConfigError as error:
            raise RunConfigError(f"models: {error}") from None
        tools = env.unwrapped.tools if env.unwrapped.action_format == "tools" else None
        if agent is None:
            agent = make_agent(config.agent, env.unwrapped.tasks, pool, tools)
    except BaseException:
        if folder is not None:
            folder.abandon()
        if probes is not None:
            probes.close()
        env.close()
        raise
    return Runner(
        env,
        agent,
        callbacks,
        config,
        folder=folder,
        make_env=None if config.ray is None else partial(make, config),
        probes=probes,
    )


def make_env(config: RunConfig) -> gym.Env:
    """The environment of a run, its arguments checked against its signature first."""
    return make_checked_env(config.env, env_kwargs(config))


def _actor_env_maker(config: RunConfig) -> Callable[[RunConfig], gym.Env]:
    """What makes the run's environments in Ray actors, once joined to the cluster."""
    from lifelong_gym.distributed import ActorEnv, connect

    connect(config.ray or "auto")
    return lambda config: ActorEnv(config.env, env_kwargs(config), config.ray_resources)


def env_kwargs(config: RunConfig) -> dict[str, Any]:
    """The environment's keyword arguments, checked against its signature."""
    kwargs = dict(config.env_args)
    if config.tasks is not None:
        kwargs["tasks"] = config.tasks
    return checked_env_kwargs(config.env, kwargs)
