"""Running an agent through environments the way a user's loop does (reset, then step)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from lifelong_gym.agents import Agent


def run_task(env: gym.Env, agent: Agent, task_index: int) -> tuple[float, dict[str, Any]]:
    """One episode: the agent answers until the environment ends the task."""
    env.reset(options={"task_index": task_index})
    while True:
        reply = agent.act(env.unwrapped.session)
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return reward, info


def play_stream(env: gym.Env, agent: Agent, count: int | None = None) -> list[dict[str, Any]]:
    """The stream's tasks in order (the first `count` of them), one episode each; each
    task's last info. `env` may be wrapped: its wrappers see every reset and step."""
    return [run_task(env, agent, index)[1] for index in env.unwrapped.tasks.order[:count]]


def run_batch(envs: list[gym.Env], agent: Agent, task_indices: list[int]) -> list[dict[str, Any]]:
    """One episode per environment, the agent answering all running sessions as one batch."""
    for env, index in zip(envs, task_indices, strict=True):
        env.reset(options={"task_index": index})
    infos: dict[int, dict[str, Any]] = {}
    running = list(range(len(envs)))
    while running:
        replies = agent.act_batch([envs[i].unwrapped.session for i in running])
        for i, reply in zip(list(running), replies, strict=True):
            _, _, terminated, truncated, info = envs[i].step(reply)
            if terminated or truncated:
                running.remove(i)
                infos[i] = info
    return [infos[i] for i in range(len(envs))]


def serve_the_oracle(env: gym.Env, sent: list[bool]):
    """A server reply function giving the oracle's reply for `env`'s running task.

    It also records whether each request carried exactly the session's history.
    """
    from lifelong_gym.agents import to_messages

    def reply(request: dict[str, Any]) -> str:
        session = env.unwrapped.session
        sent.append(request["messages"] == to_messages(session.chat_history))
        return env.unwrapped.tasks[session.task_index].oracle_reply(session.chat_history)

    return reply
