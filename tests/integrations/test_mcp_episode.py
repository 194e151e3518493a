"""The episode of an MCP session without MCP: tool calls to `step`, results, errors."""

from __future__ import annotations

import gymnasium as gym
import pytest

from lifelong_gym.agents import OracleAgent
from lifelong_gym.errors import EnvArgumentError
from lifelong_gym.integrations.mcp_episode import START_TASK, ToolEpisode, build_env, session_tools
from lifelong_gym.session import Role, Session
from lifelong_gym.tool_calls import parse_tool_call


@pytest.fixture
def episode():
    played = ToolEpisode("LifelongDB-v0", {})
    yield played
    played.close()


def play_oracle(episode: ToolEpisode, task_index: int):
    """The oracle's episode through `call`; every reply, and the in-process env's last step."""
    started = episode.call(START_TASK, {"task_index": task_index})
    tasks = episode.env.tasks
    session = Session(task_index=task_index, skills=started.structured["skills"])
    session.add(Role.USER, started.structured["prompt"])
    twin = gym.make("LifelongDB-v0", action_format="tools").unwrapped
    prompt, _ = twin.reset(options={"task_index": task_index})
    replies, stepped = [started], None
    while not replies[-1].structured.get("done"):
        reply = OracleAgent(tasks, "tools").act(session)
        call = parse_tool_call(reply)
        replies.append(episode.call(call.name, call.arguments))
        stepped = twin.step(reply)
        session.add(Role.AGENT, reply)
        session.add(Role.USER, replies[-1].structured["observation"])
    twin.close()
    return prompt, replies, stepped


def test_the_oracle_scores_1_with_the_same_steps_as_in_process(episode):
    prompt, replies, (observation, reward, terminated, truncated, info) = play_oracle(episode, 3)
    started, last = replies[0], replies[-1]
    assert started.texts == (prompt,) and not started.is_error
    assert (started.structured["task_index"], started.structured["status"]) == (3, "running")
    assert last.structured == {
        "observation": observation,
        "reward": 1.0,
        "done": True,
        "terminated": terminated,
        "truncated": truncated,
        "status": "completed",
        "info": info,
    }
    assert reward == 1.0 and not last.is_error
    assert last.texts[-1] == "The task has ended: status completed, reward 1."
    assert all(reply.structured["status"] == "running" for reply in replies[1:-1])


def test_calls_that_do_not_fit_the_session_change_nothing(episode):
    assert episode.call("execute_sql", {"sql": "SELECT 1"}).is_error
    assert episode.env is None  # nothing was built
    for arguments in ({"task_index": True}, {"seed": -1}, {"seed": 1.5}, {"task": 0}):
        assert episode.call(START_TASK, arguments).is_error
    out_of_range = episode.call(START_TASK, {"task_index": -7})
    assert out_of_range.is_error and "sample index -7" in out_of_range.texts[0]
    assert episode.call(START_TASK, {"seed": 5}).structured["status"] == "running"
    again = episode.call(START_TASK, {"task_index": 0})
    assert again.is_error and "has started" in again.texts[0]
    assert episode.env.session.agent_turns == 0  # the refused calls took no turn


def test_a_seed_draws_the_same_task_again():
    drawn = []
    for _ in range(2):
        played = ToolEpisode("LifelongDB-v0", {})
        drawn.append(played.call(START_TASK, {"seed": 11}).structured["task_index"])
        played.close()
    assert drawn[0] == drawn[1]


def test_a_call_the_environment_cannot_take_ends_the_task_unsolved(episode):
    episode.call(START_TASK, {"task_index": 0})
    bad = episode.call("execute_sql", {"statement": "SELECT 1"})
    assert bad.is_error and bad.structured["done"]
    assert (bad.structured["status"], bad.structured["reward"]) == ("agent_validation_failed", 0.0)
    assert bad.texts[0].startswith("Invalid reply: `execute_sql` takes sql")
    after = episode.call("commit_final_answer", {"answer": "x"})
    assert after.is_error and "has ended (agent_validation_failed, reward 0)" in after.texts[0]
    assert episode.call(START_TASK, {}).is_error


def test_the_session_tools_are_start_task_then_the_environments():
    env = build_env("LifelongDB-v0", {})
    tools = session_tools(env)
    env.close()
    names = [tool["function"]["name"] for tool in tools]
    assert names == [START_TASK, "execute_sql", "commit_final_answer"]
    start = tools[0]["function"]["parameters"]
    assert set(start["properties"]) == {"task_index", "seed"} and not start.get("required")
    assert "500 tasks (0 to 499)" in start["properties"]["task_index"]["description"]


def test_the_sessions_play_tool_calls_so_action_format_is_refused():
    with pytest.raises(EnvArgumentError, match="drop action_format"):
        build_env("LifelongDB-v0", {"action_format": "text"})
