"""The suite over the Model Context Protocol: `lifelong-gym serve --mcp`.

`lifelong-gym serve --mcp --env LifelongDB-v0 --port 8000` (or `serve(...)`) serves one
environment id at `http://HOST:PORT/mcp` (Streamable HTTP) with the official `mcp` SDK
(`pip install 'lifelong-gym[mcp]'`, in an environment without openenv: see pyproject.toml):

- every MCP session plays one task on an environment of its own, in the tools action
  format: `start_task` (optional `task_index`, `seed`) returns the prompt, the environment's
  tools do the rest (`lifelong_gym.integrations.mcp_episode`); the call that ends the task
  carries the reward and status, in its text and its structured content;
- the environment is built at `start_task` and runs on the session's own thread, so a
  blocking call never holds up other sessions; it is closed when the session ends,
  however it ends: the client's DELETE, the idle timeout (a client that vanished), the
  server's shutdown;
- a session is the handshake era's (`initialize`, an `Mcp-Session-Id`). The 2026-07-28 era
  has no sessions, so `server/discover` offers the handshake versions only and an SDK
  client in its default `mode="auto"` falls back to `initialize`; a client pinned to
  2026-07-28 can list the tools, and each of its calls is an error saying so.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from lifelong_gym.errors import MissingExtraError
from lifelong_gym.integrations.mcp_episode import ToolEpisode, ToolReply, build_env, session_tools
from lifelong_gym.integrations.serving import listen, raise_open_files_limit

MIN_SDK = (2, 3)


def _sdk_version() -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version("mcp").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return ()


if _sdk_version() < MIN_SDK:  # mcp 1.x (openenv's) has none of the 2.x server used here
    raise MissingExtraError(
        "lifelong_gym.integrations.mcp (`lifelong-gym serve --mcp`) needs the mcp package "
        f"2.3 or newer (found: {'.'.join(map(str, _sdk_version())) or 'none'}): pip install "
        "'lifelong-gym[mcp]' in an environment without openenv, which pins mcp<2"
    )

import mcp_types as types  # noqa: E402
import uvicorn  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS  # noqa: E402

DEFAULT_MAX_SESSIONS = 8
# A session with no request in flight and no open event stream for this long is closed:
# the SDK's client keeps its GET stream open while it lives, so this reaps vanished clients.
DEFAULT_SESSION_IDLE_TIMEOUT = 300.0
PATH = "/mcp"
INSTRUCTIONS = (
    "Each session plays one task: call start_task, then the task's tools until a result "
    "says the task has ended; that result holds the reward and status."
)
SESSIONLESS = (
    "this server plays one task per MCP session, and the 2026-07-28 protocol has none: "
    "connect with the initialize handshake (the SDK's Client(url, mode='auto' or 'legacy'))"
)
_EPISODE = "lifelong_gym.episode"  # the key of a connection's episode in its `state`


class SessionEpisode:
    """A session's `ToolEpisode` on a thread of its own: the environment's blocking calls
    leave the event loop free, and run one at a time in the order they came."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any]):
        self._episode = ToolEpisode(env_id, env_kwargs)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-session")

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        """The result of the call, made on the session's thread."""
        return await self._run(self._episode.call, name, arguments)

    async def close(self) -> None:
        """Close the environment, after any call still running."""
        try:
            await self._run(self._episode.close)
        finally:
            self._thread.shutdown(wait=False)

    async def _run(self, function: Any, *args: Any) -> Any:
        # uvicorn runs the SDK's anyio code on asyncio; the future is the session thread's
        return await asyncio.wrap_future(self._thread.submit(function, *args))


def create_server(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> Server:
    """The MCP server of `env_id`'s sessions; a bad id or argument raises here, once."""
    kwargs = dict(env_kwargs or {})
    probe = build_env(env_id, kwargs)
    try:
        tools = [_mcp_tool(schema["function"]) for schema in session_tools(probe)]
    finally:
        probe.close()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return _result(ToolReply.error(SESSIONLESS))
        episode = _session_episode(ctx, env_id, kwargs)
        return _result(await episode.call(params.name, params.arguments or {}))

    server = Server(
        f"lifelong-gym {env_id}",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )

    async def discover(ctx: Any, params: Any) -> types.DiscoverResult:
        return types.DiscoverResult(
            supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS),
            capabilities=server.get_capabilities(),
            instructions=INSTRUCTIONS,
        )

    server.add_request_handler("server/discover", types.RequestParams, discover)
    return server


def _session_episode(ctx: Any, env_id: str, env_kwargs: Mapping[str, Any]) -> SessionEpisode:
    """The episode of the request's session, begun at its first call and closed with it."""
    # The SDK keeps per-connection `state` and an `exit_stack` it unwinds when the connection
    # ends (DELETE, idle timeout, crash, shutdown), and documents them for handlers; 2.3
    # hands a lowlevel handler the connection only through its request's ServerSession.
    connection = ctx.session._connection
    episode = connection.state.get(_EPISODE)
    if episode is None:  # no await since the lookup: two first calls cannot both begin one
        episode = connection.state[_EPISODE] = SessionEpisode(env_id, env_kwargs)
        connection.exit_stack.push_async_callback(episode.close)
    return episode


def _mcp_tool(function: Mapping[str, Any]) -> types.Tool:
    return types.Tool(
        name=function["name"],
        description=function["description"],
        input_schema=function["parameters"],
    )


def _result(reply: ToolReply) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=text) for text in reply.texts],
        structured_content=reply.structured,
        is_error=reply.is_error,
    )


def serve(
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
    log_level: str = "warning",
) -> None:
    """Serve `env_id` over MCP until interrupted; a bad id, argument or busy port raises first.

    At most `max_sessions` sessions at once (the SDK answers 503 to one more); a session
    idle for `session_idle_timeout` seconds is closed. Prints the address to stderr once it
    listens.
    """
    server = create_server(env_id, env_kwargs)
    listener = listen(host, port)
    raise_open_files_limit(max_sessions)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        session_idle_timeout=session_idle_timeout,
        max_sessions=max_sessions,
        host=host,
    )
    # open event streams would hold a graceful shutdown forever; the sessions close anyway
    config = uvicorn.Config(app, log_level=log_level, timeout_graceful_shutdown=5)
    print(
        f"serving {env_id} over MCP on http://{host}:{port}{PATH} (Ctrl-C stops)", file=sys.stderr
    )
    uvicorn.Server(config).run(sockets=[listener])
