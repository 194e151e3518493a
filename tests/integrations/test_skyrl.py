"""The suite's environments through `skyrl_gym`'s own registry and `BaseTextEnv` API."""

from __future__ import annotations

import pytest

from lifelong_gym.agents import OracleAgent
from lifelong_gym.registration import ENV_IDS

skyrl_gym = pytest.importorskip(
    "skyrl_gym", reason="the SkyRL adapter needs skyrl-gym: pip install 'lifelong-gym[skyrl]'"
)

from skyrl_gym.envs.base_text_env import BaseTextEnv  # noqa: E402

import lifelong_gym.integrations.skyrl  # noqa: E402,F401 - registers the ids with skyrl_gym


def test_every_id_is_registered():
    assert set(ENV_IDS) <= set(skyrl_gym.registry)


def play(env, oracle: OracleAgent, system: str = "Be brief.") -> tuple[list, list]:
    """One episode as SkyRL's generator drives it; the chat and the step outputs."""
    chat, _ = env.init([{"role": "system", "content": system}, {"role": "user", "content": ""}])
    outputs = []
    while not (outputs and outputs[-1]["done"]):
        reply = oracle.act(env.env.unwrapped.session)
        chat.append({"role": "assistant", "content": reply})
        outputs.append(env.step(reply))
        chat += outputs[-1]["observations"]
    return chat, outputs


@pytest.mark.parametrize("action_format", ["text", "tools"])
def test_oracle_episodes_score_like_the_environment(action_format):
    config = {"env_kwargs": {"action_format": action_format, "max_turns": 8}}
    probe = skyrl_gym.make("LifelongDB-v0", env_config=config, extras={})
    indices = probe.env.unwrapped.tasks.indices[:4]
    oracle = OracleAgent(probe.env.unwrapped.tasks, action_format)
    probe.close()
    role = "tool" if action_format == "tools" else "user"
    for index in indices:
        extras = {"extra_info": {"task_index": index}}
        env = skyrl_gym.make("LifelongDB-v0", env_config=config, extras=extras)
        assert isinstance(env, BaseTextEnv)
        chat, outputs = play(env, oracle)
        assert chat[0] == {"role": "system", "content": "Be brief."}
        assert chat[1]["role"] == "user" and "SQL" in chat[1]["content"]
        assert env.env.unwrapped.session.task_index == index
        assert [o["reward"] for o in outputs] == [0.0] * (len(outputs) - 1) + [1.0]
        assert all(m["role"] == role for o in outputs[:-1] for m in o["observations"])
        assert outputs[-1]["metadata"]["status"] == "completed"
        assert outputs[-1]["metadata"]["outcome"] == "correct"
        assert env.get_metrics() == {
            "turns": len(outputs),
            "status": "completed",
            "outcome": "correct",
            "correct": 1.0,
        }
        env.close()


def test_a_reply_in_no_format_ends_the_episode_unsolved():
    env = skyrl_gym.make("LifelongDB-v0", env_config={}, extras={"task_index": 0})
    env.init([])
    output = env.step("I have no idea.")
    assert output["done"] and output["reward"] == 0.0
    assert output["metadata"]["status"] == "agent_validation_failed"
    metrics = [env.get_metrics()]
    assert env.aggregate_metrics(metrics)["correct"] == 0.0
    env.close()
