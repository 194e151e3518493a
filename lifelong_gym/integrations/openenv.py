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
- At most `max_sessions` sessions at once: one more waits its turn (first come, first
  served) up to `session_wait` seconds, then is refused with OpenEnv's error reply of code
  `CAPACITY_REACHED` (the connection closes after it; nothing was started).
- `workers` processes (default 1) share the listening socket, each serving the sessions
  whose connections it accepted (the kernel hands each new connection to one of them):
  one Python process computes on one core at a time, so more sessions than one core can
  step need more workers. `max_sessions` and the queue are each worker's own, so the
  server holds at most `workers * max_sessions` sessions.

`LifelongEnvClient` is OpenEnv's `EnvClient` typed for these messages (async; `.sync()`
for a blocking one); it asks again, with backoff, for a session refused or not
answered in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
from collections import deque
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym

from lifelong_gym.errors import ConfigError, SessionLostError
from lifelong_gym.extras import import_extra
from lifelong_gym.integrations.serving import listen, plain_info, raise_open_files_limit
from lifelong_gym.registration import make_env

_PURPOSE = "lifelong_gym.integrations.openenv (LifelongEnvClient, and `lifelong-gym serve`)"
for _module in (
    "fastapi.responses",
    "openenv.core.client_types",
    "openenv.core.env_client",
    "openenv.core.env_server.exceptions",
    "openenv.core.env_server.http_server",
    "openenv.core.env_server.interfaces",
    "openenv.core.env_server.types",
    "websockets.exceptions",
    "websockets.protocol",
):
    import_extra(_module, "openenv", _PURPOSE)  # each module the names below come from

from fastapi import FastAPI, Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_client import EnvClient  # noqa: E402
from openenv.core.env_server.exceptions import SessionCapacityError  # noqa: E402
from openenv.core.env_server.http_server import HTTPEnvServer  # noqa: E402
from openenv.core.env_server.interfaces import Environment  # noqa: E402
from openenv.core.env_server.types import (  # noqa: E402
    Action,
    ConcurrencyConfig,
    Observation,
    State,
    WSErrorCode,
)
from pydantic import Field  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.protocol import State as ConnectionState  # noqa: E402

# The largest WebSocket message the server reads; a bigger one closes the connection
# with code 1009 (message too big). Replies the environment takes are far smaller.
MAX_MESSAGE_BYTES = 4 << 20
DEFAULT_MAX_SESSIONS = 8
# How long a session past `max_sessions` waits for one to end before it is refused: under
# the 60 s that OpenEnv's client waits for the reply to its first message by default.
DEFAULT_SESSION_WAIT = 30.0
# The error code of that refusal, and how long a waiting session sleeps before it looks
# again for a free place when no session's end woke it (a session closed over HTTP /mcp).
CAPACITY_REACHED = WSErrorCode.CAPACITY_REACHED.value
RECHECK_SECONDS = 1.0


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


class SessionServer(HTTPEnvServer):
    """OpenEnv's server, with the sessions on one shared thread pool and a queue for the
    sessions past `max_sessions`.

    OpenEnv gives every session a thread of its own; at hundreds of sessions waking a
    sleeping thread for each call costs several times the CPU of a shared pool whose busy
    threads take the next call (benchmarks/serve_load.py). The pool may grow to one thread
    per session, so a session whose call blocks (a long query, a shell command) never
    holds up another; each session makes one call at a time, its WebSocket waiting for
    the reply.
    """

    def __init__(
        self, env_id: str, env_kwargs: Mapping[str, Any], *, max_sessions: int, session_wait: float
    ):
        super().__init__(
            session_factory(env_id, env_kwargs),
            LifelongAction,
            LifelongObservation,
            concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions),
            env_name=env_id,
            state_cls=LifelongState,
        )
        self._shared_session_executor = ThreadPoolExecutor(
            max_workers=max_sessions, thread_name_prefix="lifelong-session"
        )
        self._session_wait = session_wait
        self._in_line: deque[asyncio.Event] = deque()

    async def _create_session(self) -> tuple[str, Environment]:
        await self._wait_for_a_place()
        try:
            # no await between the wait and OpenEnv's reservation of the place
            return await super()._create_session()
        finally:
            self._call_next()  # a build that failed gave its place back

    async def _destroy_session(self, session_id: str) -> None:
        await super()._destroy_session(session_id)
        self._call_next()

    async def _wait_for_a_place(self) -> None:
        """Return once this session is first in line and a place is free, or refuse it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._session_wait
        turn = asyncio.Event()
        self._in_line.append(turn)
        try:
            while self._in_line[0] is not turn or len(self._sessions) >= self.max_concurrent_envs:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise SessionCapacityError(
                        len(self._sessions),
                        self.max_concurrent_envs,
                        f"Server at capacity: {len(self._sessions)}/{self.max_concurrent_envs} "
                        f"sessions active, none ended within {self._session_wait:g} s; retry "
                        "later",
                    )
                turn.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(turn.wait(), min(remaining, RECHECK_SECONDS))
        finally:
            self._in_line.remove(turn)
            self._call_next()

    def _call_next(self) -> None:
        if self._in_line:
            self._in_line[0].set()


def create_app(
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_wait: float = DEFAULT_SESSION_WAIT,
) -> FastAPI:
    """The OpenEnv FastAPI app serving `env_id`: at most `max_sessions` sessions at once,
    one more waiting up to `session_wait` seconds for a place."""
    app = FastAPI(title=f"lifelong-gym {env_id}", description="OpenEnv's HTTP and WebSocket API")
    server = SessionServer(
        env_id, env_kwargs or {}, max_sessions=max_sessions, session_wait=session_wait
    )
    server.register_routes(app, mode="simulation")
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


# The environment variable that hands a worker process what it serves (`app_of_worker`).
WORKER_SPEC = "LIFELONG_GYM_SERVE_SPEC"


def serve(
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_wait: float = DEFAULT_SESSION_WAIT,
    workers: int = 1,
    log_level: str = "warning",
) -> None:
    """Serve `env_id` until interrupted; a bad id, argument or busy port raises first.

    Prints the address to stderr once it listens. With `workers` > 1, that many worker
    processes (uvicorn's) share the socket, each with its own `max_sessions` (see the
    module's doc); `env_kwargs` must then be JSON values, as from the command line.
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    if workers < 1:
        raise ConfigError(f"workers={workers}: pass 1 or more worker processes")
    make_env(env_id, env_kwargs or {}).close()  # a bad id or argument fails here, once
    # create_app's arguments, in this process or (as JSON) in each worker's
    spec = {
        "env_id": env_id,
        "env_kwargs": dict(env_kwargs or {}),
        "max_sessions": max_sessions,
        "session_wait": session_wait,
    }
    if workers > 1:
        try:
            os.environ[WORKER_SPEC] = json.dumps(spec)
        except TypeError as error:
            raise ConfigError(
                f"workers={workers} needs environment arguments that are JSON values: {error}"
            ) from None
    listener = listen(host, port)
    raise_open_files_limit(max_sessions * workers)
    settings = {"log_level": log_level, "ws_max_size": MAX_MESSAGE_BYTES}
    print(f"serving {env_id} on ws://{host}:{port}/ws (Ctrl-C stops)", file=sys.stderr)
    if workers == 1:
        uvicorn.Server(uvicorn.Config(create_app(**spec), **settings)).run(sockets=[listener])
        return
    app_path = f"{__name__}:app_of_worker"
    config = uvicorn.Config(app_path, factory=True, workers=workers, **settings)
    Multiprocess(config, sockets=[listener]).run()


def app_of_worker() -> FastAPI:
    """The app of one worker process of `serve(workers=N)`, from WORKER_SPEC."""
    return create_app(**json.loads(os.environ[WORKER_SPEC]))


class LifelongEnvClient(EnvClient[LifelongAction, LifelongObservation, LifelongState]):
    """OpenEnv's client for a `lifelong-gym serve` server: one session per connection.

    Asking for a session is retried where nothing was started: an opening handshake that
    timed out (a server busy with a burst of clients) and, at `reset`, a session the server
    refused (`CAPACITY_REACHED`: it waited its turn there for `--session-wait` seconds).
    The next try comes after 0.25 s, then twice as long each time up to 4 s (jittered), for
    up to `retry_s` seconds in all (default 600); then OpenEnv's error is raised. A server
    that is not there (connection refused) raises at once.

    A session the server closed (it stopped, was killed, restarted) raises
    `SessionLostError` at the call that finds it gone, and at every later `step` or
    `state`: OpenEnv's client would reconnect to a new session that knows nothing of the
    episode. `reset` opens a new session once the server is back.
    """

    def __init__(self, *args: Any, retry_s: float = 600.0, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._retry_s = retry_s

    async def _connect_async(self) -> LifelongEnvClient:
        return await self._retried(super()._connect_async, _handshake_timed_out)

    async def _reset_async(self, **kwargs: Any) -> StepResult[LifelongObservation]:
        reset = super()._reset_async
        return await self._retried(lambda: reset(**kwargs), _refused)

    async def _retried(self, attempt, retryable) -> Any:
        """`attempt()`, tried again with backoff while it fails in a way `retryable` accepts."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._retry_s
        backoff = 0.25
        while True:
            try:
                return await attempt()
            except Exception as error:
                if not retryable(error) or loop.time() > deadline:
                    raise
            await self._disconnect_async()  # the server closed a refused connection
            await asyncio.sleep(min(backoff * random.uniform(0.5, 1.0), deadline - loop.time()))
            backoff = min(backoff * 2, 4.0)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        starts = message.get("type") == "reset"
        if not starts and self._ws is not None and self._ws.state is not ConnectionState.OPEN:
            raise self._session_lost_error(starts)
        try:
            return await super()._send_and_receive(message)
        except ConnectionClosed:
            raise self._session_lost_error(starts) from None

    def _session_lost_error(self, starting: bool) -> SessionLostError:
        if starting:
            return SessionLostError(
                f"the server at {self.base_url} closed the session before it answered the "
                "reset (no episode started; reset to try again)"
            )
        return SessionLostError(
            f"the server at {self.base_url} closed the session mid-episode (the episode is "
            "lost; reset to start again)"
        )

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


def _refused(error: Exception) -> bool:
    return isinstance(error, RuntimeError) and f"(code: {CAPACITY_REACHED})" in str(error)


def _handshake_timed_out(error: Exception) -> bool:
    return isinstance(error, ConnectionError) and isinstance(error.__cause__, TimeoutError)


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
