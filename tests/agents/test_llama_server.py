"""The OpenAI back-end against a real server: llama-cpp-python serving SmolLM2 (GGUF)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.session import Role, Session, SessionStatus

from .llama_server import MODEL_NAME, LlamaServer

# what an episode with a working model and server can end as (a long KG observation may
# outgrow the server's 4,096-token context: the session then says so)
PLAYED = {
    SessionStatus.COMPLETED,
    SessionStatus.AGENT_VALIDATION_FAILED,
    SessionStatus.TASK_LIMIT_REACHED,
    SessionStatus.AGENT_CONTEXT_LIMIT,
}


def run(server: LlamaServer, output: Path, env: str, tasks: int, *env_args: str) -> list[Session]:
    """`lifelong-gym run` of `tasks` tasks through the server; the recorded sessions."""
    agent = f"openai:{server.base_url}#{MODEL_NAME}?max_new_tokens=64"
    arguments = ["run", "--env", env, "--agent", agent, "--output", str(output)]
    arguments += ["--max-tasks", str(tasks), "--no-progress"]
    for env_arg in env_args:
        arguments += ["--env-arg", env_arg]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, f"{result.output}\n{server.output()}"
    lines = (output / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return [Session.model_validate(json.loads(line)) for line in lines]


def check_sessions(sessions: list[Session], count: int) -> None:
    """Every session ended as a played episode, with the model's own (non-empty) replies."""
    assert len(sessions) == count
    for session in sessions:
        assert session.status in PLAYED, (session.status, session.error)
        assert session.outcome in {"correct", "incorrect"}, session
        replies = [m.content for m in session.chat_history if m.role == Role.AGENT]
        assert replies and all(reply.strip() for reply in replies), session.chat_history
    assert len({m.content for s in sessions for m in s.chat_history if m.role == Role.AGENT}) > 1


@pytest.mark.parametrize(
    ("env", "tasks", "env_args"),
    [("LifelongDB-v0", 3, ()), ("LifelongKG-v0", 2, ("max_turns=3",))],
)
def test_a_real_server_runs_tasks_end_to_end(
    llama_server: LlamaServer, tmp_path: Path, env: str, tasks: int, env_args: tuple[str, ...]
):
    check_sessions(run(llama_server, tmp_path / "run", env, tasks, *env_args), tasks)


def test_a_real_server_answers_with_a_native_tool_call(llama_tools_server: LlamaServer):
    """SmolLM2 behind llama.cpp's function-calling chat format answers with `tool_calls`.

    The server's call comes back as the assistant message the environment takes; whether
    SmolLM2 (135M parameters) fills the arguments well is the environment's to judge.
    """
    import gymnasium as gym

    from lifelong_gym.agents import LanguageModelAgent, OpenAIModelConfig
    from lifelong_gym.agents.models.openai_chat import OpenAIChatModel

    tools = gym.make("LifelongDB-v0", action_format="tools").unwrapped.tools
    config = OpenAIModelConfig(
        name="smollm2", base_url=llama_tools_server.base_url, model=MODEL_NAME, max_new_tokens=40
    )
    agent = LanguageModelAgent(OpenAIChatModel(config), tools=tools)
    session = Session(task_index=0)
    session.add(Role.USER, "Run SELECT 1 with the execute_sql tool.")
    reply = agent.act(session)
    try:
        message = json.loads(reply)
    except ValueError:
        pytest.fail(f"no tool call: {reply!r}\n{llama_tools_server.output()}")
    assert message["role"] == "assistant"
    (call,) = message["tool_calls"]
    assert call["function"]["name"] in {tool["function"]["name"] for tool in tools}
