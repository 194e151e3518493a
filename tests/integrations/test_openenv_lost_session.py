"""A `lifelong-gym serve` server killed mid-episode: each client of it is told in one line
that its session is lost (`SessionLostError`), and plays again on the same client once the
server is back.

Real parts: the CLI in its own process on loopback (killed with SIGKILL, then started again
on the same port), OpenEnv's client, SQLite.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("openenv", reason="the OpenEnv server needs the openenv extra")

from lifelong_gym.agents import OracleAgent  # noqa: E402
from lifelong_gym.envs.db.tasks import load_db_tasks  # noqa: E402
from lifelong_gym.errors import SessionLostError  # noqa: E402
from lifelong_gym.integrations.openenv import (  # noqa: E402
    LifelongAction,
    LifelongEnvClient,
    play_episode,
)

from .openenv_server import free_port, served  # noqa: E402

# a statement that runs until the server is killed (its time limit is raised to 600 s)
ENDLESS = (
    "Action: Operation\n```sql\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
    "FROM c WHERE x < 1000000000000) SELECT COUNT(*) FROM c\n```"
)
HARMLESS = LifelongAction(reply="Action: Operation\n```sql\nSELECT 1\n```")
MID_EPISODE = "closed the session mid-episode (the episode is lost; reset to start again)"
BEFORE_RESET = "closed the session before it answered the reset (no episode started"


def one_line(error: pytest.ExceptionInfo, *fragments: str) -> None:
    message = str(error.value)
    assert "\n" not in message and all(f in message for f in fragments), message


async def play_and_close(client: LifelongEnvClient, tasks, index: int) -> float:
    """The oracle's reward for one episode in the client's session, then the session closed
    (its place goes to the next in line)."""
    played = await play_episode(client, OracleAgent(tasks), task_index=index)
    await client.close()
    return played["reward"]


def test_a_killed_server_loses_each_session_in_one_line_and_reset_plays_again():
    tasks = load_db_tasks()
    index = tasks.indices[0]
    port = free_port()
    # two places: one session steps, one is between steps, a third waits for a place
    flags = ("--max-sessions", "2", "--session-wait", "600")

    async def scenario() -> list[float]:
        with served("LifelongDB-v0", "statement_timeout=600", flags=flags, port=port) as started:
            process, url = started
            stepping, between, waiting = clients = [LifelongEnvClient(base_url=url) for _ in "abc"]
            for client in (stepping, between):
                await client.reset(task_index=index)
            await between.step(HARMLESS)
            step = asyncio.create_task(stepping.step(LifelongAction(reply=ENDLESS)))
            await waiting.connect()  # accepted: its session waits in line for a place
            queued = asyncio.create_task(waiting.reset(task_index=index))
            await asyncio.sleep(1)  # both requests on their way
            process.kill()
            process.wait()
            with pytest.raises(SessionLostError) as lost:
                await step
            one_line(lost, url, MID_EPISODE)
            with pytest.raises(SessionLostError) as lost:
                await queued
            one_line(lost, url, BEFORE_RESET)
            with pytest.raises(SessionLostError) as lost:
                await between.step(HARMLESS)
            one_line(lost, url, MID_EPISODE)
        with served("LifelongDB-v0", flags=flags, port=port):
            with pytest.raises(SessionLostError) as lost:  # not a step in a new, empty session
                await between.step(HARMLESS)
            one_line(lost, MID_EPISODE)
            return await asyncio.gather(*(play_and_close(c, tasks, index) for c in clients))

    assert asyncio.run(scenario()) == [1.0, 1.0, 1.0]
