"""LanguageModelAgent's messages, the scripted agent and the agent specs of the factory."""

from __future__ import annotations

import pytest

from lifelong_gym.agents import (
    AgentError,
    AgentSpecError,
    LanguageModelAgent,
    ScriptedAgent,
    make_agent,
    to_messages,
)
from lifelong_gym.session import Role, Session, SessionStatus

from .chat_server import ChatServer


def a_session(task_index: int = 0) -> Session:
    session = Session(task_index=task_index)
    session.add(Role.USER, "Instructions and the task.")
    session.add(Role.AGENT, "Action: Operation\n```sql\nSELECT 1;\n```")
    session.add(Role.USER, "[(1,)]")
    return session


def test_history_becomes_chat_messages():
    assert to_messages(a_session().chat_history, "Be careful.") == [
        {"role": "system", "content": "Be careful."},
        {"role": "user", "content": "Instructions and the task."},
        {"role": "assistant", "content": "Action: Operation\n```sql\nSELECT 1;\n```"},
        {"role": "user", "content": "[(1,)]"},
    ]
    assert to_messages(a_session().chat_history)[0]["role"] == "user"


def test_scripted_replies_follow_the_turns():
    agent = ScriptedAgent(["first", "second"])
    session = Session(task_index=0)
    session.add(Role.USER, "task")
    assert agent.act(session) == "first"
    session.add(Role.AGENT, "first")
    assert agent.act(session) == "second"
    session.add(Role.AGENT, "second")
    with pytest.raises(AgentError, match="2 replies"):
        agent.act(session)


def test_scripted_replies_per_task():
    agent = ScriptedAgent({3: ["for three"], 4: ["for four"]})
    assert agent.act_batch([Session(task_index=4), Session(task_index=3)]) == [
        "for four",
        "for three",
    ]
    with pytest.raises(AgentError) as caught:
        agent.act(Session(task_index=5))
    assert caught.value.status == SessionStatus.AGENT_UNKNOWN_ERROR


def test_an_openai_spec_talks_to_the_server(chat_server: ChatServer):
    agent = make_agent(f"openai:{chat_server.base_url}#served", tasks=None)  # type: ignore[arg-type]
    assert isinstance(agent, LanguageModelAgent)
    sessions = [a_session(i) for i in range(3)]
    assert agent.act_batch(sessions) == ["[(1,)]"] * 3
    assert {r["model"] for r in chat_server.requests} == {"served"}


def test_spec_options_reach_the_model(chat_server: ChatServer):
    spec = f"openai:{chat_server.base_url}#served?max_new_tokens=7&temperature=0.5"
    make_agent(spec, tasks=None).act(a_session())  # type: ignore[arg-type]
    request = chat_server.requests[0]
    assert (request["model"], request["max_tokens"], request["temperature"]) == ("served", 7, 0.5)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "gpt",
            r"unknown agent 'gpt'; known agents: oracle, planted\[:...\], hf:..., openai:..., "
            "model:..., or module:Class for your own",
        ),
        ("hf:", "unknown agent"),
        ("openai:http://127.0.0.1:8000/v1", "names no model"),
        ("openai:localhost:8000/v1#m", "must start with http"),
        ("hf:/nonexistent/model", "does not exist"),
        ("openai:http://h/v1#m?bogus=1", "bogus: Extra inputs are not permitted"),
        ("openai:http://h/v1#m?max_new_tokens=many", "max_new_tokens: Input should be a valid"),
        ("openai:http://h/v1#m?junk", "options must read"),
        ("openai:http://127.0.0.1:9/v1#m", "no server answers at http://127.0.0.1:9/v1"),
    ],
)
def test_bad_specs_are_one_clear_error(spec: str, message: str):
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec, tasks=None)  # type: ignore[arg-type]
