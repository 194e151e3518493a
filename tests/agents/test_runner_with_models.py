"""The runner with model agents: a failing model ends its session with a status, the run goes on."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import LanguageModelAgent, ModelPool, make_agent
from lifelong_gym.run import Runner

from ..envs.db_fixtures import task_file
from .chat_server import ChatServer, Reply
from .episodes import serve_the_oracle


@pytest.fixture
def env(tmp_path: Path):
    made = gym.make("LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="sqlite")
    yield made
    made.close()


def run(env: gym.Env, agent) -> list:
    runner = Runner(env, agent, progress=False, plots=False)
    runner.run()
    return runner.history


def test_server_failures_are_statuses_and_the_run_goes_on(env, chat_server: ChatServer):
    chat_server.push(*[Reply(status=500, content="model crashed")] * 2)  # task 1: 500, 500
    chat_server.push(*[Reply(hang=4.0)] * 2)  # task 2: hangs twice
    chat_server.default = serve_the_oracle(env, [])  # task 3: a good reply
    spec = f"openai:{chat_server.base_url}#served?max_retries=1&retry_backoff=0&timeout=1"
    history = run(env, make_agent(spec, tasks=None))  # type: ignore[arg-type]
    statuses = [session.status.value for session in history]
    assert statuses == ["agent_unknown_error", "agent_unknown_error", "completed"]
    assert "model crashed" in history[0].error
    assert "Timeout" in history[1].error
    assert [session.reward for session in history] == [0.0, 0.0, 1.0]


def test_a_context_overflow_ends_each_session_and_the_run_goes_on(env, tiny_model_dir: Path):
    config = {"name": "short", "backend": "hf", "path": str(tiny_model_dir)}
    pool = ModelPool([{**config, "max_context_tokens": 64}])
    history = run(env, LanguageModelAgent(pool.get("short")))
    assert [session.status.value for session in history] == ["agent_context_limit"] * 3
    assert all("context window" in session.error for session in history)
