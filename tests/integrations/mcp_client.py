"""The MCP SDK's own client against a `lifelong-gym serve --mcp` server; run by the mcp venv.

`python mcp_client.py URL COMMAND JSON` prints one JSON line for tests/integrations/test_mcp.py
(the SDK, mcp 2.3, cannot share the test's environment: openenv pins mcp<2):

- `oracle {"env_id", "task_indices"}`: an oracle episode per task index, each in a session of
  its own, all at once; each episode's last result;
- `isolation {"task_index", "table"}`: two sessions on one task at once; one deletes the
  table's rows, the other then counts them;
- `calls {"calls": [[name, arguments], ...]}`: the calls in one session, each one's result;
- `modern {}`: a client pinned to the 2026-07-28 protocol, which has no sessions;
- `capacity {}`: a second session while the first is open;
- `vanish {"task_index"}`: start a task, print, then wait to be killed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import gymnasium as gym
from mcp.client import Client

from lifelong_gym.agents import OracleAgent
from lifelong_gym.session import Role, Session
from lifelong_gym.tool_calls import parse_tool_call


def result(reply: Any) -> dict[str, Any]:
    """A tool result as JSON: its texts, structured content and error flag."""
    return {
        "texts": [block.text for block in reply.content],
        "structured": reply.structured_content,
        "is_error": reply.is_error,
    }


async def play_oracle(url: str, agent: OracleAgent, task_index: int) -> dict[str, Any]:
    """One oracle episode in a session of its own; the last result and the turns taken."""
    async with Client(url) as client:
        started = result(await client.call_tool("start_task", {"task_index": task_index}))
        info = started["structured"]
        session = Session(task_index=info["task_index"], skills=info["skills"])
        session.add(Role.USER, info["prompt"])
        last, turns = started, 0
        while not (last["is_error"] or (last["structured"] or {}).get("done")):
            reply = agent.act(session)
            call = parse_tool_call(reply)  # the reference action as the tool call it makes
            last = result(await client.call_tool(call.name, call.arguments))
            session.add(Role.AGENT, reply)
            session.add(Role.USER, last["structured"]["observation"])
            turns += 1
        return {"task_index": task_index, "turns": turns, "started": started, **last}


async def oracle(url: str, env_id: str, task_indices: list[int]) -> list[dict[str, Any]]:
    env = gym.make(env_id)  # the default task set, the one the server plays
    agent = OracleAgent(env.unwrapped.tasks, "tools")
    env.close()
    results: dict[int, dict[str, Any]] = {}

    async def play(index: int) -> None:
        results[index] = await play_oracle(url, agent, index)

    async with anyio.create_task_group() as group:
        for index in task_indices:
            group.start_soon(play, index)
    return [results[index] for index in task_indices]


async def isolation(url: str, task_index: int, table: str) -> dict[str, Any]:
    count = f"SELECT COUNT(*) FROM `{table}`"
    async with Client(url) as writer, Client(url) as reader:
        for client in (writer, reader):
            await client.call_tool("start_task", {"task_index": task_index})
        before = await writer.call_tool("execute_sql", {"sql": count})
        deleted = await writer.call_tool("execute_sql", {"sql": f"DELETE FROM `{table}`"})
        after = await writer.call_tool("execute_sql", {"sql": count})
        other = await reader.call_tool("execute_sql", {"sql": count})
    replies = {"before": before, "deleted": deleted, "after": after, "other": other}
    return {key: result(reply) for key, reply in replies.items()}


async def calls(url: str, calls: list[list[Any]]) -> list[dict[str, Any]]:
    async with Client(url) as client:
        return [result(await client.call_tool(name, arguments)) for name, arguments in calls]


async def modern(url: str) -> dict[str, Any]:
    async with Client(url, mode="2026-07-28") as client:
        tools = await client.list_tools()
        started = await client.call_tool("start_task", {"task_index": 0})
    return {"tools": [tool.name for tool in tools.tools], "start_task": result(started)}


async def capacity(url: str) -> dict[str, Any]:
    async with Client(url) as first:
        await first.list_tools()
        try:
            async with Client(url) as second:
                await second.list_tools()
        except Exception as error:  # the SDK's error for the server's 503
            return {"refused": True, "error": f"{type(error).__name__}: {error}"}
    return {"refused": False}


async def vanish(url: str, task_index: int) -> None:
    async with Client(url) as client:
        started = await client.call_tool("start_task", {"task_index": task_index})
        print(json.dumps(result(started)), flush=True)
        await anyio.sleep_forever()  # until the test kills this process


COMMANDS = {
    "oracle": oracle,
    "isolation": isolation,
    "calls": calls,
    "modern": modern,
    "capacity": capacity,
    "vanish": vanish,
}

if __name__ == "__main__":
    url, command, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    output = anyio.run(lambda: COMMANDS[command](url, **arguments))
    print(json.dumps(output))
