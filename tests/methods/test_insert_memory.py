"""`session.insert_memory`: text between an environment's instructions and its task, on every
environment and action format, with the oracle still solving the tasks."""

from __future__ import annotations

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.db.prompt import INSTRUCTIONS as DB_TEXT
from lifelong_gym.envs.db.prompt import TOOL_INSTRUCTIONS as DB_TOOLS
from lifelong_gym.envs.kg.prompt import INSTRUCTIONS as KG_TEXT
from lifelong_gym.envs.kg.prompt import TOOL_INSTRUCTIONS as KG_TOOLS
from lifelong_gym.envs.os.prompt import INSTRUCTIONS as OS_TEXT
from lifelong_gym.envs.os.prompt import TOOL_INSTRUCTIONS as OS_TOOLS
from lifelong_gym.session import Session

NOTE = "Remember: the answer is checked exactly."
SECOND = "And a second note."

# Each environment's instructions, and how its task begins (KG's has no `Task:`).
LAYOUTS = {
    "LifelongDB-v0": ({"text": DB_TEXT, "tools": DB_TOOLS}, "Task: "),
    "LifelongOS-v0": ({"text": OS_TEXT, "tools": OS_TOOLS}, "Task: "),
    "LifelongKG-v0": ({"text": KG_TEXT, "tools": KG_TOOLS}, "Question: "),
}


@pytest.fixture(params=list(LAYOUTS))
def env_id(request):
    if request.param == "LifelongOS-v0":
        request.getfixturevalue("docker_engine")
    if request.param == "LifelongKG-v0":
        pytest.importorskip("pyoxigraph")
    return request.param


def make(env_id: str, action_format: str) -> gym.Env:
    kwargs = {"pool_size": 1} if env_id == "LifelongOS-v0" else {}
    return gym.make(env_id, action_format=action_format, **kwargs)


@pytest.mark.parametrize("action_format", ["text", "tools"])
def test_memory_sits_between_instructions_and_task_and_the_oracle_still_solves(
    env_id, action_format
):
    env = make(env_id, action_format)
    texts, task_mark = LAYOUTS[env_id]
    instructions = texts[action_format]
    if env_id != "LifelongOS-v0":  # the shell's instructions name no turn limit
        instructions = instructions.format(max_turns=env.unwrapped.max_turns)
    oracle = OracleAgent(env.unwrapped.tasks, action_format=action_format)
    for index in env.unwrapped.tasks.order[:3]:
        plain, _ = env.reset(options={"task_index": index})
        session = env.unwrapped.session
        task = session.task_text
        assert task.startswith(task_mark) and plain.endswith(task)
        session.insert_memory(NOTE, title="note")
        session.insert_memory(SECOND, title="second")
        prompt = session.chat_history[0].content
        assert prompt == f"{instructions}\n\n{NOTE}\n\n{SECOND}\n\n{task}"
        assert session.task_text == task
        second_start = len(instructions) + 2 + len(NOTE) + 2
        assert session.details["memory"] == [
            {"title": "note", "start": len(instructions) + 2, "chars": len(NOTE)},
            {"title": "second", "start": second_start, "chars": len(SECOND)},
        ]
        assert [r["text"] for r in session.inserted_memory()] == [NOTE, SECOND]
        done = False
        while not done:
            _, reward, terminated, truncated, info = env.step(oracle.act(session))
            done = terminated or truncated
        assert reward == 1.0
    env.close()


def test_a_prompt_without_instructions_gets_memory_first():
    session = Session(task_index=0)
    session.add("user", "Add 2 and 3.")
    session.insert_memory(NOTE)
    assert session.chat_history[0].content == f"{NOTE}\n\nAdd 2 and 3."
    assert session.details["memory"] == [{"title": "memory", "start": 0, "chars": len(NOTE)}]
    assert session.inserted_memory() == [
        {"text": NOTE, "title": "memory", "start": 0, "chars": len(NOTE)}
    ]


def test_the_items_a_method_names_are_recorded_with_its_text():
    session = Session(task_index=0)
    session.add("user", "Add 2 and 3.")
    session.insert_memory(NOTE, title="replay", items=["task 4", "task 1"])
    session.insert_memory("")  # nothing to insert: no record
    (record,) = session.inserted_memory()
    assert record["items"] == ["task 4", "task 1"] and record["text"] == NOTE


def test_a_record_of_an_earlier_version_keeps_its_own_text():
    session = Session(task_index=0)
    session.add("user", f"{NOTE}\n\nAdd 2 and 3.")
    session.details["memory"] = [{"title": "memory", "text": NOTE, "chars": len(NOTE)}]
    assert session.inserted_memory() == session.details["memory"]


def test_memory_after_the_agent_replied_is_refused():
    session = Session(task_index=0)
    session.add("user", "Add 2 and 3.")
    session.add("agent", "5")
    with pytest.raises(ValueError, match="no reply yet"):
        session.insert_memory(NOTE)
