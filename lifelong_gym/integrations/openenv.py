"""The suite as an OpenEnv server, and a typed OpenEnv client for it.

`lifelong-gym serve --env LifelongDB-v0 --port 8000` (or `serve(...)`) serves one
environment id over OpenEnv's protocol (the `openenv` package, `pip install
'lifelong-gym[openenv]'`):

- WebSocket `/ws`: one session per connection, each with its own environment built from
  the id and keyword arguments; `reset` (with `seed`, `task_index`), `step` (an
  `LifelongAction`), `state`, `close`. A connection that ends, cleanly or not, closes its
  environment, so its task database or container goes with it.
- HTTP: `/health`, `/schema`, `/metadata`, and OpenEnv's stateless `/reset` (a fresh
  environment per request, closed after it: the first observation of a task). Episodes
  need a session, so HTTP `/step` answers 409 and names the WebSocket.

`LifelongEnvClient` is OpenEnv's `EnvClient` typed for these messages (async; `.sync()`
for a blocking one).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from lifelong_gym.errors import MissingExtraError
from lifelong_gym.integrations.serving import listen, plain_info
from lifelong_gym.registration import make_env

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, ConcurrencyConfig, Observation, State
    from pydantic import Field
except ImportError as error:  # pragma: no cover - the message is the point
    raise MissingExtraError(
        f"lifelong_gym.integrations.openenv (LifelongEnvClient, and the server of "
        f"`lifelong-gym serve`) needs the openenv package ({error.name} is missing): "
        "pip install 'lifelong-gym[openenv]'"
    ) from None

# The largest WebSocket message the server reads; a bigger one closes the connection
# with code 1009 (message too big). Replies the environment takes are far smaller.
MAX_MESSAGE_BYTES = 4 << 20
DEFAULT_MAX_SESSIONS = 8


class LifelongAction(Action):
    """One assistant turn: the reply as the environment's `step` takes it."""

    reply: str = Field(
        description="The model's reply: the benchmark's text format, or with "
        "action_format='tools' an OpenAI assistant message in JSON or <tool_call> markup"
    )


class LifelongObservation(Observation):
    """What the environment returned: the text the agent reads, the step's info."""

    text: str = Field(default="", description="The task prompt at reset, then each result")
    truncated: bool = Field(default=False, description="The episode ended at the turn limit")
    info: dict[str, Any] = Field(
        default_factory=dict,
        description="The environment's info: task_index, skills, turn; status and outcome "
        "once the task ended",
    )
    tools: list[dict[str, Any]] = Field(
        default_factory=list,
        description="At reset with action_format='tools': the OpenAI-style function tools",
    )


class LifelongState(State):
    """A session's state: which environment, which task, how it stands."""

    env_id: str = ""
    task_index: int | None = None
    status: str = ""


class GymnasiumSession(Environment[LifelongAction, LifelongObservation, LifelongState]):
    """One session's environment: `gym.make(env_id, **env_kwargs)` behind OpenEnv's API.

    The server builds one per session with `session_factory`, calls it from that session's
    own thread, and closes it when the session ends.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any]):
        super().__init__()
        self.env_id = env_id
        # the environment itself, without Gymnasium's checker wrappers: a first reset that
        # fails (a task index out of range) leaves PassiveEnvChecker unable to step again
        self.env = make_env(env_id, env_kwargs).unwrapped
        self._state = LifelongState(env_id=env_id)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_index: int | None = None,
    ) -> LifelongObservation:
        """Start a task (`task_index`: a sample index of the task set; else one drawn)."""
        options = None if task_index is None else {"task_index": task_index}
        text, info = self.env.reset(seed=seed, options=options)
        self._state = LifelongState(
            env_id=self.env_id,
            episode_id=episode_id,
            task_index=info.get("task_index"),
            status="running",
        )
        tools = self.env.tools if getattr(self.env, "action_format", "") == "tools" else []
        return LifelongObservation(text=text, info=plain_info(info), tools=tools)

    def step(
        self, action: LifelongAction, timeout_s: float | None = None, **kwargs: Any
    ) -> LifelongObservation:
        """Send the reply to the environment; reward and done as `step` returned them."""
        text, reward, terminated, truncated, info = self.env.step(action.reply)
        self._state.step_count += 1
        if terminated or truncated:
            self._state.status = str(info.get("status", "finished"))
        return LifelongObservation(
            text=text,
            reward=float(reward),
            done=bool(terminated or truncated),
            truncated=bool(truncated),
            info=plain_info(info),
        )

    @property
    def state(self) -> LifelongState:
        """The session's environment, task and status."""
        return self._state

    def close(self) -> None:
        """Close the environment: its task database, container or store goes with it."""
        self.env.close()


def session_factory(env_id: str, env_kwargs: Mapping[str, Any]):
    """The callable the server calls to build each session's environment."""
    kwargs = dict(env_kwargs)

    def build() -> GymnasiumSession:
        return GymnasiumSession(env_id, kwargs)

    build.__name__ = f"{env_id} session"
    return build


def create_app(
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
) -> FastAPI:
    """The OpenEnv FastAPI app serving `env_id`, at most `max_sessions` sessions at once."""
    app = create_fastapi_app(
        session_factory(env_id, env_kwargs or {}),
        LifelongAction,
        LifelongObservation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions),
        env_name=env_id,
        state_cls=LifelongState,
        mode="simulation",
    )
    app.add_exception_handler(gym.error.ResetNeeded, _needs_session)
    return app


async def _needs_session(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse(
        status_code=409,
        content={
            "detail": f"{error}. HTTP /reset and /step each use a fresh environment; play "
            "episodes in a session over the WebSocket /ws (OpenEnv's EnvClient)"
        },
    )


def serve(
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    log_level: str = "warning",
) -> None:
    """Serve `env_id` until interrupted; a bad id, argument or busy port raises first.

    Prints the address to stderr once it listens.
    """
    import uvicorn

    make_env(env_id, env_kwargs or {}).close()  # a bad id or argument fails here, once
    listener = listen(host, port)
    config = uvicorn.Config(
        create_app(env_id, env_kwargs, max_sessions=max_sessions),
        log_level=log_level,
        ws_max_size=MAX_MESSAGE_BYTES,
    )
    print(f"serving {env_id} on ws://{host}:{port}/ws (Ctrl-C stops)", file=sys.stderr)
    uvicorn.Server(config).run(sockets=[listener])


class LifelongEnvClient(EnvClient[LifelongAction, LifelongObservation, LifelongState]):
    """OpenEnv's client for a `lifelong-gym serve` server: one session per connection."""

    def _step_payload(self, action: LifelongAction) -> dict[str, Any]:
        return {"reply": action.reply}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[LifelongObservation]:
        fields = dict(payload.get("observation", {}))
        fields.update(reward=payload.get("reward"), done=bool(payload.get("done", False)))
        return StepResult(
            observation=LifelongObservation(**fields),
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )

    def _parse_state(self, payload: dict[str, Any]) -> LifelongState:
        return LifelongState(**payload)


async def play_episode(client: LifelongEnvClient, agent: Any, **reset_kwargs: Any) -> dict:
    """Play one episode in `client`'s session with a lifelong-gym agent (`act(session)`).

    Returns the last step's `reward`, `info` and the session as the agent saw it.
    """
    from lifelong_gym.session import Role, Session

    result = await client.reset(**reset_kwargs)
    info = result.observation.info
    session = Session(task_index=info["task_index"], skills=info.get("skills", []))
    session.add(Role.USER, result.observation.text)
    while not result.done:
        reply = agent.act(session)
        session.add(Role.AGENT, reply)
        result = await client.step(LifelongAction(reply=reply))
        if result.observation.text:
            session.add(Role.USER, result.observation.text)
    return {"reward": result.reward, "info": result.observation.info, "session": session}
