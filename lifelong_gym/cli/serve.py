"""`lifelong-gym serve`: an environment over OpenEnv's protocol, or over MCP."""

from __future__ import annotations

import click

from lifelong_gym.arguments import parse_flag_assignments


@click.command()
@click.option("--env", "env_id", default="LifelongDB-v0", show_default=True, help="Env id.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on.")
@click.option("--env-arg", "env_args", multiple=True, help="Environment argument key=value.")
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Sessions at once.",
)
@click.option(
    "--session-wait",
    type=click.FloatRange(min=0),
    help="A session past --max-sessions waits this many seconds for a place, then is "
    "refused with CAPACITY_REACHED (default 30; not with --mcp).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="OpenEnv: worker processes sharing the port, each with --max-sessions of its own "
    "(one Python process steps on one core at a time).",
)
@click.option("--mcp", is_flag=True, help="Serve over MCP (Streamable HTTP at /mcp) instead.")
@click.option(
    "--session-idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="With --mcp: close a session idle this many seconds (default 300).",
)
def serve(
    env_id: str,
    host: str,
    port: int,
    env_args: tuple[str, ...],
    max_sessions: int,
    session_wait: float | None,
    workers: int,
    mcp: bool,
    session_idle_timeout: float | None,
) -> None:
    """Serve an environment over OpenEnv's protocol: one environment per WebSocket session.

    Needs the openenv extra: pip install 'lifelong-gym[openenv]'. Clients connect with
    `lifelong_gym.integrations.openenv.LifelongEnvClient` (the same extra). A session past
    --max-sessions waits its turn up to --session-wait seconds, then is refused with the
    error code CAPACITY_REACHED; LifelongEnvClient asks again with backoff.

    With --mcp, over the Model Context Protocol instead: each MCP session plays one task
    with the tools `start_task` and the environment's own. Needs the mcp extra (mcp 2.3,
    in an environment without openenv): pip install 'lifelong-gym[mcp]'.
    """
    kwargs = parse_flag_assignments("--env-arg", env_args)
    if not mcp:
        if session_idle_timeout is not None:
            raise click.UsageError("--session-idle-timeout goes with --mcp")
        from lifelong_gym.integrations.openenv import DEFAULT_SESSION_WAIT
        from lifelong_gym.integrations.openenv import serve as serve_openenv

        serve_openenv(
            env_id,
            kwargs,
            host=host,
            port=port,
            max_sessions=max_sessions,
            session_wait=DEFAULT_SESSION_WAIT if session_wait is None else session_wait,
            workers=workers,
        )
        return
    if workers != 1:
        raise click.UsageError("--workers goes with OpenEnv (MCP serves from one process)")
    if session_wait is not None:
        raise click.UsageError("--session-wait goes with OpenEnv (the MCP SDK refuses at once)")
    from lifelong_gym.integrations.mcp import DEFAULT_SESSION_IDLE_TIMEOUT
    from lifelong_gym.integrations.mcp import serve as serve_mcp

    serve_mcp(
        env_id,
        kwargs,
        host=host,
        port=port,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_timeout or DEFAULT_SESSION_IDLE_TIMEOUT,
    )
