"""Every method on every environment, through the runner and in a plain loop, with a real model.

The agent replays the reference solution but first sends its history through the tiny
transformers model (so context overflows are real); the self-consistency votes use the
same model, whose random replies are outvoted by the agent's valid ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from lifelong_gym import ENV_IDS
from lifelong_gym.agents import Agent, ModelPool, OracleAgent, to_messages
from lifelong_gym.methods.budget import token_counter
from lifelong_gym.methods.experience import ExperienceMemory
from lifelong_gym.run import Runner, make_callback
from lifelong_gym.wrappers import ExperienceReplay, GroupSelfConsistency

TASKS = 4
METHODS = [
    "experience_replay:n=2",
    "relevant_replay:n=2",
    "group_self_consistency:groups=2,per_group=1",
]


class OracleThroughModel(Agent):
    """The oracle's replies, after the model has read the history (a real context check)."""

    def __init__(self, tasks, model):
        self.oracle = OracleAgent(tasks)
        self.model = model

    def act(self, session):
        self.model.generate([to_messages(session.chat_history)])
        return self.oracle.act(session)


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    config = {"name": "tiny", "backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 4}
    return ModelPool([config]).get("tiny")


@pytest.fixture(params=ENV_IDS)
def env(request):
    try:
        env = gym.make(request.param)
    except Exception as error:  # noqa: BLE001 - a service this machine lacks: skip, say which
        pytest.skip(f"{request.param} cannot start here: {type(error).__name__}: {error}")
    yield env
    env.close()


@pytest.mark.parametrize("method", METHODS)
def test_method_through_the_runner(env, tiny, method, tmp_path):
    agent = OracleThroughModel(env.unwrapped.tasks, tiny)
    Runner(
        env, agent, [make_callback(method)], output=tmp_path, max_tasks=TASKS, progress=False
    ).run()
    sessions = [json.loads(line) for line in (tmp_path / "sessions.jsonl").open()]
    assert [s["outcome"] for s in sessions] == ["correct"] * TASKS
    last = sessions[-1]["details"]
    if method.startswith("group"):
        assert last["self_consistency"][0]["chosen_by"] == "majority"
    else:
        assert len(last["replayed"]) == 2
        assert "Here are tasks you solved before" in sessions[-1]["chat_history"][0]["content"]


@pytest.mark.parametrize("wrapper", ["replay", "self_consistency"])
def test_method_as_a_wrapper_in_a_plain_loop(env, tiny, wrapper):
    wrapped = ExperienceReplay(env, n=2) if wrapper == "replay" else GroupSelfConsistency(env, tiny)
    agent = OracleThroughModel(env.unwrapped.tasks, tiny)
    for index in env.unwrapped.tasks.order[:TASKS]:
        obs, info = wrapped.reset(options={"task_index": index})
        while True:
            obs, reward, terminated, truncated, info = wrapped.step(
                agent.act(env.unwrapped.session)
            )
            if terminated or truncated:
                break
        assert reward == 1.0, info
    key = "replayed" if wrapper == "replay" else "self_consistency"
    assert info[key]


def _sessions(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "sessions.jsonl").open()]


def test_budget_keeps_replay_within_the_context_window(tiny_model_dir, tmp_path):
    window, reserve = 1500, 64
    config = {
        "name": "small-window",
        "backend": "hf",
        "path": str(tiny_model_dir),
        "max_new_tokens": 4,
        "max_context_tokens": window,
    }
    model = ModelPool([config]).get("small-window")
    env = gym.make("LifelongDB-v0")
    agent = OracleThroughModel(env.unwrapped.tasks, model)

    def run(spec: str, name: str) -> list[dict]:
        callback = make_callback(spec)
        Runner(
            env,
            agent,
            [callback],
            output=tmp_path / name,
            max_tasks=12,
            progress=False,
            max_consecutive_failures=100,
        ).run()
        return _sessions(tmp_path / name), callback

    plain, _ = run("experience_replay:n=8", "plain")
    assert "agent_context_limit" in {s["status"] for s in plain}  # the paper's failure
    budgeted, callback = run(f"experience_replay:n=8,budget=auto,reserve={reserve}", "budget")
    assert {s["status"] for s in budgeted} == {"completed"}

    count = token_counter(model)
    for session in budgeted:
        assert count(session["chat_history"][0]["content"]) + reserve <= window
    # the last task: its memory held every earlier experience; one more would overflow
    last = budgeted[-1]
    memory = ExperienceMemory(n=8)
    memory.load_state(callback.method.state())
    memory.experiences = [e for e in memory.experiences if e.task_index != last["task_index"]]
    opening, _ = env.reset(options={"task_index": last["task_index"]})
    task_start = env.unwrapped.session.task_start
    chosen = memory.select(last["skills"], opening[task_start:])
    kept = last["details"]["replayed"]
    assert [e.task_index for e in chosen[: len(kept)]] == kept
    assert len(kept) < len(chosen)  # the budget dropped some
    assert count(memory.compose(opening, task_start, chosen[: len(kept) + 1])) + reserve > window
    env.close()
