"""`export sft --method reasoning_memory:distiller=rule`: task rows whose prompts are a run's,
and distillation rows holding the exact request the method sends and a reply that parses."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.methods.item_memory import request_messages
from lifelong_gym.methods.memory_items import distillation_prompt, parse_memory_item
from lifelong_gym.methods.reasoning_memory import HEADING
from lifelong_gym.run import Runner, make_callback
from lifelong_gym.session import ChatMessage, Role, Session

from .test_demonstrations import ROOT, export

pytest.importorskip(
    "datasets", reason="the SFT export needs datasets: pip install 'lifelong-gym[train]'"
)

SPEC = "reasoning_memory:distiller=rule"
TASKS = 6


@pytest.fixture(scope="module")
def few_tasks(tmp_path_factory) -> Path:
    shipped = ROOT / "lifelong_gym" / "data" / "db" / "default.jsonl"
    path = tmp_path_factory.mktemp("tasks") / "few.jsonl"
    path.write_text("".join(shipped.read_text().splitlines(keepends=True)[:TASKS]))
    return path


@pytest.fixture(scope="module")
def exported(few_tasks, tmp_path_factory):
    from datasets import load_dataset

    folder = tmp_path_factory.mktemp("export") / "rm"
    code, out = export("--tasks", str(few_tasks), "--out", str(folder), "--method", SPEC)
    assert code == 0, out
    assert (
        out.strip()
        == f"wrote {2 * TASKS} demonstrations ({TASKS} task, {TASKS} distillation) to {folder}"
    )
    metadata = json.loads((folder / "metadata.json").read_text())
    return list(load_dataset(str(folder), split="train")), metadata


def test_rows_of_both_kinds_are_counted_in_the_metadata(exported):
    rows, metadata = exported
    assert metadata["method"] == SPEC and metadata["tasks_played"] == TASKS
    assert metadata["rows"] == 2 * TASKS
    assert metadata["rows_by_kind"] == {"task": TASKS, "distillation": TASKS}
    assert [row["kind"] for row in rows] == ["task", "distillation"] * TASKS
    pairs = zip(rows[::2], rows[1::2], strict=True)
    assert all(task["task_index"] == request["task_index"] for task, request in pairs)


def test_every_distillation_row_is_the_methods_request_and_a_reply_that_parses(exported, few_tasks):
    rows, _ = exported
    env = gym.make("LifelongDB-v0", tasks=str(few_tasks))
    try:
        for task, request in zip(rows[::2], rows[1::2], strict=True):
            user, reply = request["messages"]
            assert reply["role"] == "assistant"
            fields, problem = parse_memory_item(reply["content"])
            assert problem == "" and set(fields) == {"title", "description", "content"}
            env.reset(options={"task_index": task["task_index"]})
            text = env.unwrapped.session.task_text  # the task, without any memory
            turns = [
                ChatMessage(role=Role.AGENT if m["role"] == "assistant" else Role.USER,
                            content=m["content"])
                for m in task["messages"][1:]
            ]  # fmt: skip
            prompt = distillation_prompt(text, turns, "success", "completed")
            assert [user] == request_messages(prompt)
    finally:
        env.close()


def test_an_exported_task_prompt_is_what_a_run_of_the_method_shows(exported, few_tasks, tmp_path):
    rows, _ = exported
    env = gym.make("LifelongDB-v0", tasks=str(few_tasks))
    try:
        Runner(env, OracleAgent(env.unwrapped.tasks), [make_callback(SPEC)],
               output=tmp_path, progress=False, plots=False).run()  # fmt: skip
    finally:
        env.close()
    lines = (tmp_path / "sessions.jsonl").read_bytes().splitlines()
    sessions = [Session.model_validate_json(line) for line in lines]
    tasks = [row for row in rows if row["kind"] == "task"]
    assert [row["task_index"] for row in tasks] == [s.task_index for s in sessions]
    openings = [row["messages"][0]["content"] for row in tasks]
    assert openings == [s.chat_history[0].content for s in sessions]
    assert sum(HEADING in opening for opening in openings) >= TASKS - 2  # items retrieved


def test_distillation_rows_can_be_left_out_and_without_the_rule_it_refuses(few_tasks, tmp_path):
    code, out = export("--tasks", str(few_tasks), "--out", str(tmp_path / "t"),
                       "--method", SPEC, "--no-learning-requests")  # fmt: skip
    assert code == 0 and out.strip() == f"wrote {TASKS} demonstrations to {tmp_path / 't'}"
    metadata = json.loads((tmp_path / "t" / "metadata.json").read_text())
    assert metadata["rows_by_kind"] == {"task": TASKS}
    code, out = export("--tasks", str(few_tasks), "--out", str(tmp_path / "r"),
                       "--method", "reasoning_memory")  # fmt: skip
    assert code == 1 and out.count("\n") == 1
    assert "no agent plays here: use reasoning_memory:distiller=rule" in out
