"""SkyRL: the suite's environments through `skyrl_gym`, played as SkyRL's generator plays them.

Importing `lifelong_gym.integrations.skyrl` registers LifelongDB-v0, LifelongOS-v0 and
LifelongKG-v0 with `skyrl_gym`; in a SkyRL run the dataset's `env_class` names one of them
and `environment.skyrl_gym.<id>.env_kwargs` configures it. Here the oracle stands in for
the model, so every episode scores 1.

    python examples/skyrl_episodes.py --episodes 5 --action-format tools
"""

from __future__ import annotations

import argparse

import skyrl_gym

import lifelong_gym.integrations.skyrl  # noqa: F401 - registers the ids with skyrl_gym
from lifelong_gym.agents import OracleAgent


def play(env_id: str, task_index: int, action_format: str) -> tuple[float, dict]:
    """One episode: `init` gives the chat, each `step` the observations and the reward."""
    env = skyrl_gym.make(
        env_id,
        env_config={"env_kwargs": {"action_format": action_format, "max_turns": 8}},
        extras={"extra_info": {"task_index": task_index}},
    )
    oracle = OracleAgent(env.env.unwrapped.tasks, action_format)
    chat, _ = env.init([{"role": "system", "content": "You are a careful database agent."}])
    reward, done = 0.0, False
    while not done:
        reply = oracle.act(env.env.unwrapped.session)  # SkyRL: the model's generation
        chat.append({"role": "assistant", "content": reply})
        output = env.step(reply)
        chat += output["observations"]
        reward, done = output["reward"], output["done"]
    metrics = env.get_metrics()
    env.close()
    return reward, metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="LifelongDB-v0")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--action-format", choices=["text", "tools"], default="tools")
    args = parser.parse_args()
    metrics = []
    for task_index in range(args.episodes):
        reward, episode = play(args.env, task_index, args.action_format)
        metrics.append(episode)
        print(f"task {task_index}: reward {reward} {episode['status']} {episode['outcome']}")
    summary = lifelong_gym.integrations.skyrl.LifelongTextEnv.aggregate_metrics(metrics)
    print(f"mean correct {summary['correct']:.2f} over {len(metrics)} episodes")


if __name__ == "__main__":
    main()
