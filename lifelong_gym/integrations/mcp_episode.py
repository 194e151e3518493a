"""One episode played through tool calls, as an MCP session of `lifelong-gym serve --mcp`
plays it; free of the MCP package, so it is tested without a server.

A session calls `start_task` first (optionally `task_index`, `seed`), which builds the
session's environment in the tools format and returns the task's prompt; then the
environment's own tools (`execute_sql`, `bash`, ...). Each of those calls goes to `step` as
the OpenAI assistant message making that one call, so it is parsed and scored exactly as in
process: a call the environment cannot take (an unknown tool, wrong arguments) ends the task
as `agent_validation_failed`. The call that ends the task returns the reward and status.
Calls that do not fit the session (before `start_task`, a second `start_task`, any call
after the end) are errors that change nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lifelong_gym.core import LifelongEnv
from lifelong_gym.errors import EnvArgumentError, LifelongGymError
from lifelong_gym.integrations.serving import plain_info
from lifelong_gym.registration import make_env
from lifelong_gym.session import SessionStatus
from lifelong_gym.tasks import TaskSet
from lifelong_gym.tool_calls import ToolCall

START_TASK = "start_task"
# the ends at which the call itself failed: the environment could not take it, or broke
FAILED = (SessionStatus.AGENT_VALIDATION_FAILED.value, SessionStatus.TASK_ENVIRONMENT_ERROR.value)


@dataclass(frozen=True)
class ToolReply:
    """A tool call's result: the texts the agent reads, the structured result, and whether
    the call failed."""

    texts: tuple[str, ...]
    structured: dict[str, Any] | None = None
    is_error: bool = False

    @classmethod
    def error(cls, message: str) -> ToolReply:
        """A failed call that changed nothing, saying why."""
        return cls((message,), None, True)


def tools_env_kwargs(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """`env_kwargs` with the tools action format, which the sessions play in."""
    if "action_format" in env_kwargs:
        raise EnvArgumentError("the MCP server's sessions play with tool calls: drop action_format")
    return {**env_kwargs, "action_format": "tools"}


def build_env(env_id: str, env_kwargs: Mapping[str, Any]) -> LifelongEnv:
    """The environment itself (no checker wrappers: a failed first reset must not stop it
    from playing), in the tools format; a bad id or argument raises `EnvArgumentError`."""
    return make_env(env_id, tools_env_kwargs(env_kwargs)).unwrapped


def session_tools(env: LifelongEnv) -> list[dict[str, Any]]:
    """What a session can call, as OpenAI-style functions: `start_task`, then `env`'s tools."""
    return [start_task_schema(env.tasks), *env.tools]


def start_task_schema(tasks: TaskSet) -> dict[str, Any]:
    """The `start_task` function for a task set."""
    indices = tasks.indices
    return {
        "type": "function",
        "function": {
            "name": START_TASK,
            "description": "Start this session's one task and return its instructions. Call "
            "it first; then solve the task with the other tools.",
            "parameters": {
                "type": "object",
                "properties": {
                    "task_index": {
                        "type": "integer",
                        "description": f"the sample index of one of the {len(tasks)} tasks "
                        f"({indices[0]} to {indices[-1]}); without it one is drawn",
                    },
                    "seed": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "seeds the environment (the draw of the task)",
                    },
                },
                "additionalProperties": False,
            },
        },
    }


class ToolEpisode:
    """One session's episode on an environment of its own, built at `start_task`.

    Blocking and not thread-safe: the server calls it from the session's own thread.
    """

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any]):
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs)
        self.env: LifelongEnv | None = None

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        """The result of calling tool `name` with `arguments` in this session."""
        session = self.env.session if self.env is not None else None
        if session is not None and session.finished:
            return ToolReply.error(
                f"the task has ended ({session.status.value}, reward {session.reward:g}); a "
                "session plays one task: open a new MCP session for another"
            )
        if name == START_TASK:
            if session is not None:
                return ToolReply.error(
                    f"this session's task ({session.task_index}) has started; a session plays "
                    "one task: open a new MCP session for another"
                )
            return self._start(arguments)
        if session is None:
            return ToolReply.error(f"no task is running: call {START_TASK} first")
        return self._step(name, arguments)

    def close(self) -> None:
        """Close the environment: its task database, container or store goes with it."""
        if self.env is not None:
            self.env.close()

    def _start(self, arguments: Mapping[str, Any]) -> ToolReply:
        unknown = sorted(set(arguments) - {"task_index", "seed"})
        if unknown:
            return ToolReply.error(f"{START_TASK} takes task_index and seed; got {unknown}")
        for key, value in arguments.items():
            if value is not None and (type(value) is not int or (key == "seed" and value < 0)):
                kind = "a non-negative integer" if key == "seed" else "an integer"
                return ToolReply.error(f"{key} must be {kind}; got {value!r}")
        try:
            if self.env is None:
                self.env = build_env(self.env_id, self.env_kwargs)
            index = arguments.get("task_index")
            prompt, info = self.env.reset(
                seed=arguments.get("seed"),
                options=None if index is None else {"task_index": index},
            )
        except KeyError as error:  # no task of that index: the message names the range
            return ToolReply.error(str(error.args[0]))
        except LifelongGymError as error:  # a back-end that cannot serve the task
            self.close()  # the next start_task begins afresh
            self.env = None
            return ToolReply.error(f"the task could not start: {error}")
        structured = {"prompt": prompt, "status": SessionStatus.RUNNING.value, **plain_info(info)}
        return ToolReply((prompt,), structured)

    def _step(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        assert self.env is not None
        reply = ToolCall(name, dict(arguments)).reply()
        observation, reward, terminated, truncated, info = self.env.step(reply)
        info = plain_info(info)
        done = bool(terminated or truncated)
        status = str(info.get("status", SessionStatus.RUNNING.value))
        structured = {
            "observation": observation,
            "reward": float(reward),
            "done": done,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "status": status,
            "info": info,
        }
        texts = (observation,) if observation else ()
        if done:
            texts += (f"The task has ended: status {status}, reward {float(reward):g}.",)
        return ToolReply(texts, structured, is_error=done and status in FAILED)
