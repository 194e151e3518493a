"""Reasoning memory's rule distiller: items made from oracle sessions on DB, KG and OS (the
strategy stated without the task's own values), pitfalls from failed sessions, opt-in only."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent, ScriptedAgent
from lifelong_gym.envs.db.actions import operation_reply
from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.methods import ReasoningMemoryMethod
from lifelong_gym.methods.memory_items import parse_memory_item
from lifelong_gym.methods.reasoning_memory import HEADING
from lifelong_gym.run import Runner
from lifelong_gym.wrappers import ReasoningMemory
from tests.command_line import assert_one_line_error, run_cli

from .test_reasoning_memory import WRONG, ScriptedModel, _run

QUOTED = re.compile(r"'([^']*)'")
WORD = re.compile(r"[A-Za-z_][\w.]*")


def oracle_items(env_id: str, indices, action_format="text", **env_kwargs):
    """Each task played by the oracle through the rule distiller: (session, item fields)."""
    env = gym.make(env_id, action_format=action_format, **env_kwargs)
    wrapped = ReasoningMemory(env, distiller="rule", k=1)
    tasks = env.unwrapped.tasks
    played = []
    try:
        for index in indices:
            wrapped.reset(options={"task_index": index})
            session = env.unwrapped.session
            done, info = False, {}
            while not done:
                reply = tasks[index].oracle_reply(session.chat_history, action_format)
                _, _, terminated, truncated, info = wrapped.step(reply)
                done = terminated or truncated
            assert info["reasoning_memory"]["distillation"]["learnt_by"] == "rule"
            prompt, reply = wrapped.method.exchange
            fields, problem = parse_memory_item(reply)
            assert problem == "" and reply.count("\n") == 2, reply
            assert "strategy that worked" in prompt
            item = wrapped.method.items[-1]
            assert (item.title, item.description, item.content) == tuple(fields.values())
            played.append((session, fields))
    finally:
        wrapped.close()
    return played


def replies(session) -> str:
    return "\n".join(m.content for m in session.chat_history[1:] if m.role == "agent")


@pytest.mark.parametrize("action_format", ["text", "tools"])
def test_db_items_state_the_statement_without_the_tasks_values(action_format):
    played = oracle_items("LifelongDB-v0", [0, 1, 2, 3, 50, 120], action_format)
    for session, fields in played:
        content, sql = fields["content"], replies(session)
        assert session.skills[0].replace("_", " ") in fields["title"].lower()
        assert 2 <= content.count(". ") + 1 <= 4  # two to four sentences
        verb = session.skills[0].upper()
        assert f"{verb} with" in content
        table = re.search(r"^Table: (\w+) \((.*)\)$", session.task_text, re.MULTILINE)
        columns = [c.split()[0] for c in table.group(2).split(", ")]
        leaked = {table.group(1), *columns, *QUOTED.findall(sql.replace("\\'", ""))}
        leaked |= set(re.findall(r"\b\d+(?:\.\d+)?\b", sql))
        words = set(WORD.findall(content)) | set(re.findall(r"\d+(?:\.\d+)?", content))
        assert not leaked & words, (leaked & words, content)
    by_task = dict((s.task_index, f["content"]) for s, f in played)
    assert "GROUP BY" in by_task[2] and "HAVING" in by_task[50] and "OFFSET" in by_task[120]
    assert "exactly as it was returned" in by_task[0]
    assert "changed table itself is checked" in by_task[3]  # an UPDATE: any answer


def test_kg_items_name_the_calls_not_the_entities_or_relations():
    for session, fields in oracle_items("LifelongKG-v0", [0, 100, 300]):
        content = fields["content"]
        calls = re.findall(r"(\w+)\(([^)]*)\)", replies(session))
        assert all(name in content for name, _ in calls)
        values = {v.strip() for _, arguments in calls for v in arguments.split(",")}
        assert values and not any(value in content for value in values), content
        assert "variable that holds the result" in content


def test_os_items_name_commands_and_options_not_paths(os_image):
    played = oracle_items("LifelongOS-v0", [0, 2, 7, 13], image=os_image, pool_size=1)
    for session, fields in played:
        content = fields["content"]
        assert session.skills[0] in content and "finish" in content
        assert "/" not in content and "'" not in content, content
    contents = [fields["content"] for _, fields in played]
    assert "usermod -aG" in contents[1] and "redirecting output into a file" in contents[2]


def test_failures_give_pitfalls_from_the_final_status(tmp_path):
    env = gym.make("LifelongDB-v0")
    first, second = env.unwrapped.tasks.order[:2]
    agent = ScriptedAgent({first: [operation_reply("SELECT 1;"), WRONG], second: ["no action"]})
    try:
        sessions, callback = _run(env, agent, tmp_path, "reasoning_memory:distiller=rule", 2)
    finally:
        env.close()
    assert [s["status"] for s in sessions] == ["completed", "agent_validation_failed"]
    items = callback.method.items
    assert [item.source for item in items] == ["failure", "failure"]
    assert items[0].title.startswith("Pitfall in select tasks")
    assert items[0].content.startswith("The failed attempt ran one SQL statement: a plain SELECT")
    assert "judge found the answer wrong" in items[0].content
    assert "agent_validation_failed" in items[1].description
    assert "action format" in items[1].content


def test_the_oracle_runs_with_the_rule_and_later_prompts_hold_its_items(tmp_path):
    env = gym.make("LifelongDB-v0")
    try:
        sessions, callback = _run(
            env, OracleAgent(env.unwrapped.tasks), tmp_path, "reasoning_memory:distiller=rule"
        )
    finally:
        env.close()
    records = [s["details"]["reasoning_memory"]["distillation"] for s in sessions]
    assert [r["learnt_by"] for r in records] == ["rule"] * 6
    assert callback.method.totals["items"] == 6 and callback.method.totals["model_calls"] == 0
    assert sum(HEADING in s["chat_history"][0]["content"] for s in sessions) >= 4


def test_a_model_that_is_there_distills_unless_the_rule_is_asked_for():
    env = gym.make("LifelongDB-v0")
    try:
        for distiller, calls in (("model", 1), ("rule", 0)):
            model = ScriptedModel()
            wrapped = ReasoningMemory(env, model, k=1, distiller=distiller)
            wrapped.reset(options={"task_index": 0})
            session = env.unwrapped.session
            reply = env.unwrapped.tasks[0].oracle_reply(session.chat_history, "text")
            while not wrapped.step(reply)[2]:
                reply = env.unwrapped.tasks[0].oracle_reply(session.chat_history, "text")
            assert len(model.prompts) == calls
    finally:
        env.close()


def test_without_a_model_or_the_rule_the_refusal_names_the_rule(tmp_path):
    with pytest.raises(CallbackSpecError, match="has none.*reasoning_memory:distiller=rule"):
        ReasoningMemoryMethod().setup(OracleAgent([]), None)
    with pytest.raises(ValueError, match="or distiller='rule'"):
        ReasoningMemory(gym.make("LifelongDB-v0"))
    result = run_cli("run", "--output", str(tmp_path), "--max-tasks", "1", "--callback",
                     "reasoning_memory")  # fmt: skip
    assert_one_line_error(result, "distiller=rule")
    result = run_cli("run", "--output", str(tmp_path / "b"), "--max-tasks", "1", "--callback",
                     "reasoning_memory:distiller=rules")  # fmt: skip
    assert_one_line_error(result, "distiller must be")


assert Runner  # the runner drives `_run`
