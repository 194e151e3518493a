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

from lifelong_gym.extras import import_extra
from lifelong_gym.tool_calls import ToolCall

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


class ServedSession(_harness.ResourceSession):
    """One rollout's WebSocket session on a `lifelong-gym serve` server.

    Every call goes to the environment as the assistant message it takes, a name outside
    the tools included: the environment scores it as the agent's (`agent_validation_failed`),
    as an in-process session does, where OpenEnv's `StepEnvSessionAdapter` would raise.
    """

    def __init__(self, client: Any, tools: list[Any], reset_kwargs: dict[str, Any]):
        from .openenv import LifelongAction

        self._action = LifelongAction
        self._client = client
        self._tools = tools
        self._closed = False
        try:
            self._last = client.reset(**reset_kwargs)
        except BaseException:
            self.close()
            raise

    def initial_messages(self) -> list[dict[str, Any]]:
        """The task's prompt, as the first user message."""
        return [{"role": "user", "content": self._last.observation.text}]

    def list_tools(self) -> list[Any]:
        """The environment's tools as MCP tool specifications."""
        return list(self._tools)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Send the call; the environment's observation, and whether the task ended."""
        self._last = self._client.step(self._action(reply=ToolCall(name, arguments).reply()))
        info = self._last.observation.info
        metadata = {"status": info.get("status")} if self._last.done else {}
        return _harness.ToolResult(
            data=self._last.observation.text, done=bool(self._last.done), metadata=metadata
        )

    def verify(self, transcript: list[dict[str, Any]], final_state: Any | None = None) -> Any:
        """The environment's reward; a task still running is ended unsolved first."""
        if not self._last.done:  # the model stopped calling tools: a reply with no call
            self._last = self._client.step(self._action(reply=""))
        info = self._last.observation.info
        metrics = {key: info.get(key) for key in ("status", "outcome", "task_index")}
        return _harness.VerifyResult(
            env_reward=float(self._last.reward or 0.0), done=True, metrics=metrics
        )

    def close(self) -> None:
        """End the WebSocket session (the server closes its environment)."""
        if not self._closed:
            self._closed = True
            self._client.close()


class ServedSessionFactory(_harness.ResourceSessionFactory):
    """Sessions on a `lifelong-gym serve` server, one WebSocket session per rollout.

    The server must run the tools format: `lifelong-gym serve --env ID --env-arg
    action_format=tools`. The task is the row's `task_index`, else the one the rollout's
    `seed` draws there.
    """

    def __init__(self, base_url: str, env_id: str):
        self._base_url = base_url
        self._tools = mcp_tools(tool_schemas(env_id))

    def create(
        self, task: Any = None, seed: int | None = None, episode_id: str | None = None
    ) -> ServedSession:
        """A session over a fresh client connection to the server."""
        from .openenv import LifelongEnvClient

        index = row_task_index(task)
        reset_kwargs = {
            key: value
            for key, value in (("task_index", index), ("seed", seed), ("episode_id", episode_id))
            if value is not None
        }
        client = LifelongEnvClient(base_url=self._base_url).sync()
        return ServedSession(client, self._tools, reset_kwargs)


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
