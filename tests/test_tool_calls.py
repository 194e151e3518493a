"""Native tool calls (`action_format="tools"`): parsing, and the same scores as the text format."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.actions import InvalidReply
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.os.backends.oci.host import find_runtime
from lifelong_gym.errors import SandboxError
from lifelong_gym.tool_calls import ToolCall, parse_tool_call


def openai_message(name: str, arguments, *, as_text: bool = True) -> str:
    args = json.dumps(arguments) if as_text else arguments
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": args}}
    return json.dumps({"role": "assistant", "content": "thinking", "tool_calls": [call]})


@pytest.mark.parametrize(
    "reply",
    [
        openai_message("execute_sql", {"sql": "SELECT 1"}),
        openai_message("execute_sql", {"sql": "SELECT 1"}, as_text=False),
        'I will look.\n<tool_call>\n{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}\n'
        "</tool_call>",
        ToolCall("execute_sql", {"sql": "SELECT 1"}).reply(),
    ],
)
def test_both_shapes_give_the_same_call(reply):
    assert parse_tool_call(reply) == ToolCall("execute_sql", {"sql": "SELECT 1"})


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Action: Operation\n```sql\nSELECT 1\n```", "no tool call"),
        ("", "no tool call"),
        ("<tool_call>not json</tool_call>", "a JSON object with a `name`"),
        ('<tool_call>{"name": "a"}</tool_call><tool_call>{"name": "b"}</tool_call>', "2 tool"),
        ('{"role": "assistant", "tool_calls": [{"function": {"name": 3}}]}', "with a `name`"),
        ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', "must be a JSON object"),
        ("<tool_call>" + "[" * 100_000 + "</tool_call>", "a JSON object"),
        ("x" * 300_000, "longer than"),
    ],
)
def test_replies_without_one_valid_call(reply, reason):
    parsed = parse_tool_call(reply)
    assert isinstance(parsed, InvalidReply) and reason in parsed.reason


def play(env, agent, index: int) -> tuple[float, str, list[str]]:
    env.reset(options={"task_index": index})
    done, reward, info = False, 0.0, {}
    while not done:
        _, reward, terminated, truncated, info = env.step(agent.act(env.unwrapped.session))
        done = terminated or truncated
    observations = [m.content for m in env.unwrapped.session.chat_history[1:] if m.role == "user"]
    return reward, info["status"], observations


@pytest.mark.parametrize("env_id", ["LifelongDB-v0", "LifelongKG-v0"])
def test_the_oracle_scores_every_shipped_task_in_the_tools_format(env_id):
    if env_id == "LifelongKG-v0":
        pytest.importorskip("pyoxigraph")
    env = gym.make(env_id, action_format="tools")
    oracle = OracleAgent(env.unwrapped.tasks, action_format="tools")
    failed = [i for i in env.unwrapped.tasks.order if play(env, oracle, i)[0] != 1.0]
    env.close()
    assert failed == []


def test_the_oracle_scores_every_shipped_os_task_in_the_tools_format(docker_engine):
    # an OCI runtime's sandbox where one is installed, at about three times the Docker
    # sandbox's speed for the same 300 tasks: both sandboxes play the text format's oracle
    # in tests/envs/test_os.py, so this test is about the tool calls, not the sandbox
    try:
        find_runtime(None)
        sandbox = "oci"
    except SandboxError:
        sandbox = "docker"
    env = gym.make("LifelongOS-v0", action_format="tools", pool_size=2, sandbox=sandbox)
    oracle = OracleAgent(env.unwrapped.tasks, action_format="tools")
    failed = [i for i in env.unwrapped.tasks.order if play(env, oracle, i)[0] != 1.0]
    env.close()
    assert failed == []


class Translated:
    """Replies of a text-format agent, sent as tool calls (the same actions)."""

    def __init__(self, env, agent):
        self.env, self.agent = env, agent

    def act(self, session):
        reply = self.agent.act(session)
        parsed = self.env.unwrapped.parse_text_action(reply)
        return reply if isinstance(parsed, InvalidReply) else parsed.tool_call().reply()


class Wrong:
    """The oracle, except a wrong answer or a junk reply on some tasks."""

    def __init__(self, tasks, answer: str):
        self.oracle, self.answer = OracleAgent(tasks), answer

    def act(self, session):
        reply = self.oracle.act(session)
        if session.task_index % 3 == 0 and ("Answer" in reply):
            return self.answer
        if session.task_index % 3 == 1 and session.agent_turns == 0:
            return "I refuse to use the format."
        return reply


@pytest.mark.parametrize(
    ("env_id", "wrong_answer"),
    [
        ("LifelongDB-v0", "Action: Answer\nFinal Answer: [('nothing',)]"),
        ("LifelongKG-v0", "Final Answer: #0"),
    ],
)
def test_the_same_episodes_score_the_same_in_both_formats(env_id, wrong_answer):
    text_env, tool_env = gym.make(env_id), gym.make(env_id, action_format="tools")
    tasks = text_env.unwrapped.tasks
    agent = Wrong(tasks, wrong_answer)
    results = {"text": [], "tools": []}
    for index in tasks.order[:45]:
        results["text"].append(play(text_env, agent, index))
        results["tools"].append(play(tool_env, Translated(tool_env, agent), index))
    scores = {
        fmt: [(reward, status) for reward, status, _ in runs] for fmt, runs in results.items()
    }
    assert scores["text"] == scores["tools"]
    # what the agent was shown is the same too, but for the wording of a format error
    shown = {
        fmt: [obs for _, status, obs in runs if status != "agent_validation_failed"]
        for fmt, runs in results.items()
    }
    assert shown["text"] == shown["tools"]
    assert {"agent_validation_failed", "completed"} <= {status for _, status in scores["text"]}
    rewards = [reward for reward, _ in scores["text"]]
    assert 0 < sum(rewards) < len(rewards)  # some solved, some not: the check can fail
    text_env.close()
    tool_env.close()


@pytest.mark.parametrize("env_id", ["LifelongDB-v0", "LifelongKG-v0"])
def test_tools_are_listed_and_the_prompt_speaks_of_them(env_id):
    env = gym.make(env_id, action_format="tools")
    tools = env.unwrapped.tools
    names = [t["function"]["name"] for t in tools]
    assert all(t["type"] == "function" and t["function"]["parameters"] for t in tools)
    obs, _ = env.reset(options={"task_index": env.unwrapped.tasks.order[0]})
    assert "tool call" in obs and names[0] in obs
    assert "Action: Operation" not in obs and "Action: name(arguments)" not in obs
    env.close()


def test_a_bad_action_format_is_one_clear_error():
    with pytest.raises(lifelong_gym.errors.EnvArgumentError, match="action_format must be"):
        gym.make("LifelongDB-v0", action_format="xml")
