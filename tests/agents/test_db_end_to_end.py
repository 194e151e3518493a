"""Both back-ends drive LifelongDB-v0 through env.reset / env.step (embedded SQLite)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import (
    AgentContextLimitError,
    LanguageModelAgent,
    ModelPool,
    make_agent,
)
from lifelong_gym.session import SessionStatus

from ..envs.db_fixtures import task_file, task_records
from .chat_server import ChatServer, Reply
from .episodes import run_batch, run_task, serve_the_oracle

TASKS = [record["sample_index"] for record in task_records()]


@pytest.fixture
def make_env(tmp_path: Path):
    made: list[gym.Env] = []

    def make() -> gym.Env:
        env = gym.make("LifelongDB-v0", tasks=str(task_file(tmp_path)), backend="sqlite")
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


def test_a_served_model_solves_every_task(make_env, chat_server: ChatServer):
    env = make_env()
    sent: list[bool] = []
    chat_server.default = serve_the_oracle(env, sent)
    agent = make_agent(f"openai:{chat_server.base_url}#served", tasks=None)  # type: ignore[arg-type]
    for index in TASKS:
        reward, info = run_task(env, agent, index)
        assert (reward, info["status"]) == (1.0, "completed"), info
    assert sent and all(sent)


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("I would rather not.", "agent_validation_failed"),
        ("", "agent_validation_failed"),
        ("Action: Operation\n```sql\n" + "x" * 100_000 + "\n```", None),
    ],
)
def test_a_bad_served_reply_is_the_envs_status(
    make_env, chat_server: ChatServer, reply: str, status: str | None
):
    chat_server.default = lambda request: reply
    agent = make_agent(f"openai:{chat_server.base_url}#served", tasks=None)  # type: ignore[arg-type]
    reward, info = run_task(make_env(), agent, TASKS[0])
    assert reward == 0.0
    assert info["status"] == status or (status is None and info["status"] == "task_limit_reached")


def test_invalid_utf8_from_the_server_is_a_reply_not_a_crash(make_env, chat_server: ChatServer):
    body = b'{"choices": [{"message": {"content": "Action: Answer\\nFinal Answer: \xff"}}]}'
    chat_server.push(Reply(body=body))
    agent = make_agent(f"openai:{chat_server.base_url}#m", tasks=None)  # type: ignore[arg-type]
    reward, info = run_task(make_env(), agent, TASKS[0])
    assert (reward, info["status"], info["outcome"]) == (0.0, "completed", "incorrect")


@pytest.fixture(scope="module")
def pool(tiny_model_dir: Path) -> ModelPool:
    common = {"backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 16}
    return ModelPool(
        [{"name": "tiny", **common}, {"name": "tiny-short", "max_context_tokens": 64, **common}]
    )


def test_the_tiny_model_runs_tasks_in_a_batch(make_env, pool: ModelPool):
    agent = LanguageModelAgent(pool.get("tiny"))
    infos = run_batch([make_env() for _ in TASKS], agent, TASKS)
    for info in infos:
        assert info["status"] in {"agent_validation_failed", "task_limit_reached"}
        assert info["outcome"] == "incorrect"  # random weights do not solve tasks


def test_a_history_too_long_for_the_model_is_the_context_limit_status(make_env, pool):
    env = make_env()
    env.reset(options={"task_index": TASKS[0]})
    with pytest.raises(AgentContextLimitError) as caught:
        LanguageModelAgent(pool.get("tiny-short")).act(env.unwrapped.session)
    assert caught.value.status == SessionStatus.AGENT_CONTEXT_LIMIT
