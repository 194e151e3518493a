"""OpenEnv's harness sessions over the suite: TRL's OpenEnv path (`trl.experimental.async_grpo`).

TRL's `HarnessRolloutWorker` (and OpenEnv's own `build_harness_rollout_func`) take a
`ResourceSessionFactory`: each rollout gets a session with the task's first messages, its
tools, a way to call them, and `verify` for the reward the environment gave.

    from openenv.core.harness import MCPHarnessAdapter
    from trl.experimental.async_grpo.openenv_harness import HarnessRolloutWorker
    from lifelong_gym.integrations.openenv_harness import HarnessSessionFactory

    worker = HarnessRolloutWorker(
        ...,
        harness_session_factory=lambda: HarnessSessionFactory("LifelongDB-v0"),
        harness_adapter=MCPHarnessAdapter(),
    )

A session holds one environment of the suite in the tools format, built where the
rollout runs (the same object as TRL's `environment_factory` instances). The task is the
dataset row's `task_index` when the row is a mapping holding one; otherwise the rollout's
`seed` picks it (TRL gives every rollout of a group the same seed, so a group plays one
task). `verify` forwards the environment's reward; a rollout whose model stopped calling
tools before the task ended is scored as it stands, as `agent_validation_failed`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lifelong_gym.tool_calls import ToolCall

from .extras import import_extra
from .trl import ToolEnvironment, environment_factory, tool_schemas

_harness = import_extra("openenv.core.harness", "openenv", "lifelong_gym.integrations.openenv")
_mcp = import_extra(
    "openenv.core.env_server.mcp_types", "openenv", "lifelong_gym.integrations.openenv"
)


class HarnessSession(_harness.ResourceSession):
    """One rollout's environment, as OpenEnv's harnesses drive it."""

    def __init__(self, environment: ToolEnvironment, task_index: int | None):
        self._environment = environment
        self._prompt = environment.reset(task_index=task_index)

    @property
    def environment(self) -> ToolEnvironment:
        """The suite's environment behind the session (its `session` is the task's record)."""
        return self._environment

    def initial_messages(self) -> list[dict[str, Any]]:
        """The task's prompt, as the first user message."""
        return [{"role": "user", "content": self._prompt}]

    def list_tools(self) -> list[Any]:
        """The environment's tools as MCP tool specifications."""
        return mcp_tools(self._environment.tool_schemas)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Send the call to the environment; its observation, and whether the task ended."""
        observation = self._environment._call(name, arguments)
        record = self._environment.session
        done = record is None or record.finished
        metadata = {"status": record.status.value} if done and record is not None else {}
        return _harness.ToolResult(data=observation, done=done, metadata=metadata)

    def verify(self, transcript: list[dict[str, Any]], final_state: Any | None = None) -> Any:
        """The environment's reward for the rollout, the task ended first if it still runs."""
        reward = self._environment.get_reward()
        record = self._environment.session
        metrics: dict[str, Any] = {}
        if record is not None:
            metrics = {
                "status": record.status.value,
                "outcome": record.outcome.value,
                "task_index": record.task_index,
                "turns": record.agent_turns,
            }
        return _harness.VerifyResult(env_reward=reward, done=True, metrics=metrics)

    def close(self) -> None:
        """Close the environment (its database, container or store goes with it)."""
        self._environment._close()


class HarnessSessionFactory(_harness.ResourceSessionFactory):
    """Sessions of `env_id` (with `env_kwargs`, in the tools format), one per rollout."""

    def __init__(self, env_id: str, **env_kwargs: Any):
        self._environment_class = environment_factory(env_id, **env_kwargs)

    def create(
        self, task: Any = None, seed: int | None = None, episode_id: str | None = None
    ) -> HarnessSession:
        """A fresh session on the row's `task_index`, else on the task `seed` picks."""
        environment = self._environment_class()
        try:
            index = row_task_index(task)
            if index is None and seed is not None:
                indices = environment.task_indices
                index = indices[seed % len(indices)]
            return HarnessSession(environment, index)
        except BaseException:
            environment._close()
            raise


class ServedSessionFactory(_harness.ResourceSessionFactory):
    """Sessions on a `lifelong-gym serve` server, one WebSocket session per rollout.

    The server must run the tools format: `lifelong-gym serve --env ID --env-arg
    action_format=tools`. A call is sent as the assistant message the environment takes;
    the task is the row's `task_index`, else the one the rollout's `seed` draws there.
    """

    def __init__(self, base_url: str, env_id: str):
        self._base_url = base_url
        self._tools = mcp_tools(tool_schemas(env_id))

    def create(self, task: Any = None, seed: int | None = None, episode_id: str | None = None):
        """An OpenEnv session adapter over a fresh client session of the server."""
        from .openenv import LifelongAction, LifelongEnvClient

        client = LifelongEnvClient(base_url=self._base_url).sync()
        index = row_task_index(task)

        def verify(transcript: Any, final_state: Any, last: Any, state: Any) -> Any:
            if last is None or not last.done:  # a reply with no call ends the task unsolved
                last = client.step(LifelongAction(reply=""))
            info = last.observation.info
            metrics = {key: info.get(key) for key in ("status", "outcome", "task_index")}
            return _harness.VerifyResult(
                env_reward=float(last.reward or 0.0), done=True, metrics=metrics
            )

        return _harness.StepEnvSessionAdapter(
            client,
            task=task,
            seed=seed,
            episode_id=episode_id,
            tool_specs=self._tools,
            action_builder=lambda name, arguments: LifelongAction(
                reply=ToolCall(name, arguments).reply()
            ),
            initial_messages_builder=lambda result, _: [
                {"role": "user", "content": result.observation.text}
            ],
            verify_builder=verify,
            reset_kwargs={} if index is None else {"task_index": index},
        )


def mcp_tools(schemas: Any) -> list[Any]:
    """OpenAI-style function tools as MCP tool specifications."""
    return [
        _mcp.Tool(
            name=schema["function"]["name"],
            description=schema["function"]["description"],
            input_schema=schema["function"]["parameters"],
        )
        for schema in schemas
    ]


def row_task_index(task: Any) -> int | None:
    """The `task_index` of a dataset row that is a mapping holding one."""
    return task.get("task_index") if isinstance(task, Mapping) else None
