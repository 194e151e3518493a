"""verifiers: an environment of the suite as a `verifiers.v1` environment, for `vf-eval`
and the trainers that load verifiers environments (prime-rl).

    from lifelong_gym.integrations.verifiers import load_environment

    env = load_environment("LifelongDB-v0", split="default", max_turns=5)

or, with verifiers' own evaluation entry point (the taskset id is the top-level module
`lifelong_gym_verifiers`, which re-exports this one):

    vf-eval lifelong-gym-verifiers --env.taskset.env-id LifelongKG-v0 \\
        --env.taskset.split default -m MODEL --client.base-url URL -n 5 --no-push

verifiers 0.4 has one multi-turn shape: an `Env` whose `run(task, agents)` holds an
agent's rollout open as an `Interaction` and sends it one user turn at a time (what
`MultiTurnEnv.env_response` was before 0.4). Here each turn is a step: the first user
turn is the task's prompt from `reset`, each later one the observation of the model's
last reply, in the text action format, so every reply the model writes is parsed and
scored as in `gym.make`. The episode ends when the task does, or when the agent's run
does (its `max_turns` or token limits: the task is then scored as it stands). The reward
is the environment's (`Task` reward `lifelong_reward`); status and outcome are metrics and
lie in the trace's `info`.

The taskset is the task set: `split` is a shipped task-set name (`default`) or a task
file (one `lifelong-gym generate --split train` wrote), given to the environment as its
`tasks` argument; each row is one task, its sample index in `task_index`, in the set's
lifelong order. Each rollout builds its own environment, on a thread of its own (the
environments are blocking and their connections thread-bound), and closes it when the
rollout ends, however it ends.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pydantic import model_validator

from lifelong_gym.core import LifelongEnv
from lifelong_gym.errors import EnvArgumentError
from lifelong_gym.extras import import_extra
from lifelong_gym.integrations.serving import plain_info
from lifelong_gym.registration import checked_env_kwargs, make_env
from lifelong_gym.session import SessionStatus

vf = import_extra("verifiers.v1", "verifiers", "lifelong_gym.integrations.verifiers")
_subprocess = import_extra(
    "verifiers.v1.runtimes.subprocess", "verifiers", "lifelong_gym.integrations.verifiers"
)

TASKSET_ID = "lifelong-gym-verifiers"  # imports the top-level module lifelong_gym_verifiers
RECORD = "lifelong_gym"  # the key of the episode's record in the trace's `info`
# the agent's stop conditions that end a task the environment had not ended, and the
# environment's status for them (any other: the agent failed)
AGENT_ENDS = {
    "max_turns": SessionStatus.TASK_LIMIT_REACHED,
    "max_input_tokens": SessionStatus.AGENT_CONTEXT_LIMIT,
    "max_total_tokens": SessionStatus.AGENT_CONTEXT_LIMIT,
    "max_output_tokens": SessionStatus.AGENT_CONTEXT_LIMIT,
}

T = TypeVar("T")


def episode_kwargs(env_id: str, split: str | None, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments a rollout builds `env_id` with: `env_kwargs` and the task set;
    a bad id, argument or split raises `EnvArgumentError` naming it."""
    if "tasks" in env_kwargs:
        raise EnvArgumentError("give the task set as split, not as env_kwargs['tasks']")
    if env_kwargs.get("action_format", "text") != "text":
        raise EnvArgumentError("verifiers episodes play the text format: drop action_format")
    kwargs = dict(env_kwargs) if split is None else {**env_kwargs, "tasks": split}
    return checked_env_kwargs(env_id, kwargs)


def task_order(env_id: str, split: str | None, env_kwargs: dict[str, Any]) -> tuple[int, ...]:
    """The sample indices, in lifelong order, of the task set `split` of `env_id`; a bad
    id, argument or split raises `EnvArgumentError` or `TaskFileError` naming it."""
    kwargs = episode_kwargs(env_id, split, env_kwargs)
    try:
        kwargs_json = json.dumps(kwargs, sort_keys=True)
    except TypeError as error:
        raise EnvArgumentError(f"env_kwargs must be JSON values: {error}") from None
    return _task_order(env_id, kwargs_json)


@functools.lru_cache(maxsize=8)
def _task_order(env_id: str, kwargs_json: str) -> tuple[int, ...]:
    """The sample indices of the task set a rollout's environment plays, in lifelong order
    (an environment built and closed once per process and arguments)."""
    env = make_env(env_id, json.loads(kwargs_json)).unwrapped
    try:
        return tuple(env.tasks.order)
    finally:
        env.close()


class LifelongTasksetConfig(vf.TasksetConfig):
    """`--env.taskset.*`: which environment, which task set, and its other arguments."""

    env_id: str = "LifelongDB-v0"
    """A registered id of the suite: LifelongDB-v0, LifelongOS-v0, LifelongKG-v0."""
    split: str | None = None
    """The task set: a shipped set's name or a task file; None = the environment's default."""
    env_kwargs: dict[str, Any] = {}
    """Further keyword arguments of `gym.make` (JSON values), e.g. {"max_turns": 5}."""

    @model_validator(mode="after")
    def _tasks_load(self) -> LifelongTasksetConfig:
        """A bad id, argument or split is one validation error naming it."""
        task_order(self.env_id, self.split, self.env_kwargs)
        return self


class LifelongTaskData(vf.TaskData):
    """One row: the environment to build and the task it plays."""

    env_id: str
    task_index: int
    env_kwargs: dict[str, Any] = {}


class LifelongTask(vf.Task[LifelongTaskData]):
    """A task of the suite, scored by the environment: its reward, status and outcome."""

    @vf.reward
    async def lifelong_reward(self, trace: Any) -> float:
        """The environment's reward for the episode."""
        return float(_record(trace)["reward"])

    @vf.metric
    async def lifelong_correct(self, trace: Any) -> float:
        """1 when the environment judged the task solved."""
        return float(_record(trace)["outcome"] == "correct")

    @vf.metric
    async def lifelong_steps(self, trace: Any) -> float:
        """The environment steps the episode took."""
        return float(_record(trace)["steps"])


def _record(trace: Any) -> dict[str, Any]:
    record = trace.info.get(RECORD)
    if record is None:
        raise vf.TaskError("the episode ended before the environment scored it")
    return record


class LifelongTaskset(vf.Taskset[LifelongTask, LifelongTasksetConfig]):
    """The rows of a task set: one `LifelongTask` per sample index, in lifelong order."""

    def load(self) -> Iterable[LifelongTask]:
        """One task per sample index; the prompt is the environment's, sent as the first turn."""
        config = self.config
        kwargs = episode_kwargs(config.env_id, config.split, config.env_kwargs)
        for index in task_order(config.env_id, config.split, config.env_kwargs):
            data = LifelongTaskData(
                id=str(index),
                name=f"{config.env_id} task {index}",
                env_id=config.env_id,
                task_index=index,
                env_kwargs=kwargs,
            )
            yield LifelongTask(data, config.task)


class LifelongEnvConfig(vf.EnvConfig):
    """The environment's one seat, `agent`: the tool-less chat harness, run here."""

    agent: vf.AgentConfig = vf.AgentConfig(
        harness={"id": "null"}, runtime=_subprocess.SubprocessConfig()
    )
    """The model under evaluation; `--env.agent.*` changes its harness, runtime, limits."""


class LifelongEpisodeEnv(vf.Env[LifelongEnvConfig]):
    """Each rollout one episode of a suite environment, its turns the environment's steps."""

    async def run(self, task: LifelongTask, agents: Any) -> None:
        """Play the row's task: the prompt, then each reply stepped and its observation sent."""
        with EpisodeThread() as thread:
            env = await thread.call(_build_env, task.data.env_id, task.data.env_kwargs)
            try:
                await self._play(thread, env, task, agents.agent)
            finally:
                await thread.call(env.close)

    async def _play(
        self, thread: EpisodeThread, env: LifelongEnv, task: LifelongTask, agent: Any
    ) -> None:
        observation, _ = await thread.call(env.reset, options={"task_index": task.data.task_index})
        steps = 0
        async with agent.interaction(task) as seat:
            while True:
                segment = await seat.turn(observation)
                if segment.terminated:
                    condition = seat.trace.stop_condition or "the agent's run ended"
                    status = AGENT_ENDS.get(condition, SessionStatus.AGENT_UNKNOWN_ERROR)
                    await thread.call(env.end_task, status, f"verifiers: {condition}")
                    break
                observation, _, terminated, truncated, _ = await thread.call(
                    env.step, _reply(segment)
                )
                steps += 1
                if terminated or truncated:
                    break
            session = env.session
            seat.trace.info[RECORD] = plain_info(
                {
                    "task_index": session.task_index,
                    "reward": session.reward,
                    "status": session.status.value,
                    "outcome": session.outcome.value,
                    "steps": steps,
                }
            )


def _build_env(env_id: str, env_kwargs: dict[str, Any]) -> LifelongEnv:
    """The environment itself, without Gymnasium's checker wrappers (as a server builds it)."""
    return make_env(env_id, env_kwargs).unwrapped


def _reply(segment: Any) -> str:
    """The model's last reply as it wrote it (`Segment.last_reply` strips it)."""
    for message in reversed(segment.messages):
        if isinstance(message, vf.AssistantMessage):
            content = message.content
            return content if isinstance(content, str) else segment.last_reply
    return ""


class EpisodeThread:
    """One thread for one episode's environment: its back-end connections are thread-bound."""

    def __enter__(self) -> EpisodeThread:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lifelong-episode")
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=False)

    async def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`function(*args, **kwargs)` on the episode's thread."""
        call = functools.partial(function, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)


def load_environment(
    env_id: str = "LifelongDB-v0", split: str | None = None, **env_kwargs: Any
) -> LifelongEpisodeEnv:
    """A verifiers environment playing `env_id`'s task set `split` (a shipped set's name or a
    task file; None = the default set), each environment built with `env_kwargs`."""
    taskset = {"id": TASKSET_ID, "env_id": env_id, "split": split, "env_kwargs": env_kwargs}
    task_order(env_id, split, env_kwargs)  # a bad id, argument or split: its own error
    return LifelongEpisodeEnv(LifelongEnvConfig(taskset=taskset))
