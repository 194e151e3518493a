"""Agents with native tool calls: the tools go to the model, its calls to the environment."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import HFModelConfig, LanguageModelAgent, OpenAIModelConfig, OracleAgent
from lifelong_gym.agents.models.openai_chat import OpenAIChatModel
from lifelong_gym.session import Role, Session, to_messages
from lifelong_gym.tool_calls import ToolCall, parse_tool_call

from .chat_server import ChatServer, Reply

MARKUP = (
    'I look first.\n<tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}'
    "</tool_call>"
)


def tools_session() -> Session:
    session = Session(task_index=0)
    session.add(Role.USER, "The task.")
    session.add(Role.AGENT, MARKUP)
    session.add(Role.USER, "[(1,)]")
    session.add(Role.AGENT, ToolCall("execute_sql", {"sql": "SELECT 2"}).reply())
    session.add(Role.USER, "[(2,)]")
    session.add(Role.AGENT, "no call at all")
    session.add(Role.USER, "The reply holds no tool call.")
    return session


def test_calls_and_results_become_tool_messages():
    sql = json.dumps({"sql": "SELECT 1"})
    assert to_messages(tools_session().chat_history, "Sys.", tool_calls=True) == [
        {"role": "system", "content": "Sys."},
        {"role": "user", "content": "The task."},
        {
            "role": "assistant",
            "content": "I look first.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "execute_sql", "arguments": sql},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "[(1,)]"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [ToolCall("execute_sql", {"sql": "SELECT 2"}).openai("call_0")],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "[(2,)]"},
        {"role": "assistant", "content": "no call at all"},
        {"role": "user", "content": "The reply holds no tool call."},
    ]


def test_the_text_format_is_unchanged():
    history = tools_session().chat_history
    plain = [
        {"role": "user" if m.role == Role.USER else "assistant", "content": m.content}
        for m in history
    ]
    assert to_messages(history) == plain


def test_an_openai_agent_plays_the_db_environment_with_tools(chat_server: ChatServer):
    env = gym.make("LifelongDB-v0", action_format="tools", max_turns=8)
    oracle = OracleAgent(env.unwrapped.tasks, "tools")
    config = OpenAIModelConfig(name="remote", base_url=chat_server.base_url, model="served")
    agent = LanguageModelAgent(OpenAIChatModel(config), tools=env.unwrapped.tools)
    rewards = []
    for index in env.unwrapped.tasks.indices[:3]:
        env.reset(options={"task_index": index})
        done, reward, turn = False, 0.0, 0
        while not done:
            call = parse_tool_call(oracle.act(env.unwrapped.session))
            # the server answers as OpenAI does: no content, the call with its own id
            chat_server.push(Reply(content=None, tool_calls=[call.openai(f"srv_{turn}")]))
            reply = agent.act(env.unwrapped.session)
            request = chat_server.requests[-1]
            assert request["tools"] == env.unwrapped.tools
            assert request["tool_choice"] == "auto"
            assert request["messages"] == to_messages(
                env.unwrapped.session.chat_history, tool_calls=True
            )
            if turn:  # the last call and its result, as the server named the call
                assert request["messages"][-2]["tool_calls"][0]["id"] == f"srv_{turn - 1}"
                assert request["messages"][-1]["role"] == "tool"
                assert request["messages"][-1]["tool_call_id"] == f"srv_{turn - 1}"
            assert json.loads(reply)["tool_calls"][0]["id"] == f"srv_{turn}"
            _, reward, terminated, truncated, _ = env.step(reply)
            done, turn = terminated or truncated, turn + 1
        rewards.append(reward)
    assert rewards == [1.0, 1.0, 1.0]
    env.close()


def test_a_text_reply_to_a_tools_request_is_the_models_text(chat_server: ChatServer):
    chat_server.push(Reply(content=MARKUP))
    config = OpenAIModelConfig(name="remote", base_url=chat_server.base_url, model="served")
    model = OpenAIChatModel(config)
    tools = gym.make("LifelongDB-v0", action_format="tools").unwrapped.tools
    assert model.generate([[{"role": "user", "content": "go"}]], tools=tools) == [MARKUP]
    chat_server.push(Reply(content="plain"))
    model.generate([[{"role": "user", "content": "go"}]])
    assert "tools" not in chat_server.requests[-1]  # the text format sends none


def test_the_transformers_back_end_renders_tools_with_the_chat_template(tiny_model_dir: Path):
    from lifelong_gym.agents.models.hf import TransformersModel

    model = TransformersModel(
        HFModelConfig(name="tiny", path=str(tiny_model_dir), max_new_tokens=8)
    )
    env = gym.make("LifelongDB-v0", action_format="tools")
    tools = env.unwrapped.tools
    messages = to_messages(tools_session().chat_history, tool_calls=True)
    prompt = model.prompt(messages, tools)
    assert prompt.startswith("<|tools|>\n" + json.dumps(tools[0]))
    # the past call as the template writes calls, its result as a tool turn
    assert (
        '<tool_call>{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}</tool_call>' in prompt
    )
    assert "<|tool|>\n[(1,)]<|end|>" in prompt
    # without tools, the prompt of the text format as before
    assert model.prompt(messages[:1]) == "<|user|>\nThe task.<|end|>\n<|assistant|>\n"
    # the generated text goes to the environment as it is
    agent = LanguageModelAgent(model, tools=tools)
    env.reset(options={"task_index": env.unwrapped.tasks.indices[0]})
    (reply,) = agent.act_batch([env.unwrapped.session])
    assert isinstance(reply, str)
    env.step(reply)
    assert env.unwrapped.session.chat_history[1].content == reply
    env.close()


def recorded_replies(output: Path) -> list[list[str]]:
    lines = (output / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    sessions = [Session.model_validate(json.loads(line)) for line in lines]
    assert [s.reward for s in sessions] == [1.0] * len(sessions)
    return [[m.content for m in s.chat_history if m.role == Role.AGENT] for s in sessions]


def test_a_run_in_the_tools_format_gives_its_agents_the_tools(
    chat_server: ChatServer, tmp_path: Path
):
    from click.testing import CliRunner

    from lifelong_gym.cli import main

    def run(agent: str, output: Path) -> list[list[str]]:
        arguments = ["run", "--env", "LifelongDB-v0", "--env-arg", "action_format=tools"]
        arguments += ["--agent", agent, "--output", str(output), "--max-tasks", "2"]
        result = CliRunner().invoke(main, [*arguments, "--no-progress"])
        assert result.exit_code == 0, result.output
        return recorded_replies(output)

    oracle_replies = run("oracle", tmp_path / "oracle")  # the oracle replies with tool calls
    assert all(isinstance(parse_tool_call(r), ToolCall) for s in oracle_replies for r in s)
    # a model agent replaying them: the run sent it the environment's tools
    for reply in (r for session in oracle_replies for r in session):
        call = parse_tool_call(reply)
        chat_server.push(Reply(content=None, tool_calls=[call.openai("srv")]))
    assert run(f"openai:{chat_server.base_url}#served", tmp_path / "model")
    tools = gym.make("LifelongDB-v0", action_format="tools").unwrapped.tools
    assert all(request["tools"] == tools for request in chat_server.requests)
