"""Play an environment served over OpenEnv: several sessions at once, each its own environment.

Start a server, then play it (the oracle scores 100%; `--agent` takes any agent spec):

    lifelong-gym serve --env LifelongDB-v0 --port 8000
    python examples/openenv_sessions.py --url http://127.0.0.1:8000 --sessions 4 --episodes 8

Without `--url` the script starts `lifelong-gym serve` itself on a free port and stops it
at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the environment ids
from lifelong_gym.agents import make_agent
from lifelong_gym.integrations.openenv import LifelongEnvClient, play_episode


@dataclass
class Config:
    url: str | None = None
    env_id: str = "LifelongDB-v0"
    agent: str = "oracle"
    sessions: int = 4
    episodes: int = 8


async def play(config: Config, url: str) -> list[float]:
    """`episodes` episodes on the first task indices, `sessions` connections at a time."""
    tasks = gym.make(config.env_id).unwrapped.tasks  # the agent's copy of the task set
    agent = make_agent(config.agent, tasks)
    indices = list(tasks.indices[: config.episodes])
    rewards: list[float] = []
    for start in range(0, len(indices), config.sessions):

        async def one(task_index: int) -> float:
            async with LifelongEnvClient(base_url=url) as client:
                played = await play_episode(client, agent, task_index=task_index)
            print(f"task {task_index}: reward {played['reward']} ({played['info']['status']})")
            return played["reward"]

        batch = indices[start : start + config.sessions]
        rewards += await asyncio.gather(*(one(i) for i in batch))
    return rewards


def start_server(env_id: str) -> tuple[subprocess.Popen, str]:
    """`lifelong-gym serve` on a free loopback port, once it answers /health."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "lifelong_gym", "serve", "--env", env_id, "--port", str(port)]
    server = subprocess.Popen(command)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2).close()
            return server, url
        except OSError:
            if server.poll() is not None:
                raise SystemExit("the server did not start") from None
            time.sleep(1)
    server.terminate()
    raise SystemExit("the server did not answer within 300 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument("--env-id", default=Config.env_id, help="the id to serve")
    parser.add_argument("--agent", default=Config.agent, help="oracle, hf:PATH or openai:URL#MODEL")
    parser.add_argument("--sessions", type=int, default=Config.sessions, help="at once")
    parser.add_argument("--episodes", type=int, default=Config.episodes, help="in all")
    config = Config(**vars(parser.parse_args()))
    server, url = start_server(config.env_id) if config.url is None else (None, config.url)
    try:
        rewards = asyncio.run(play(config, url))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
    print(f"score {sum(rewards):g}/{len(rewards)}")


if __name__ == "__main__":
    main()
