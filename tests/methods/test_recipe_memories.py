"""Workflow memory and procedural memory as a user runs them: from the command line with the
planted learner and its stateless twin, killed (SIGKILL) and resumed, in a plain Gymnasium
loop, refused in one line when misconfigured, and costed: the model calls they learn with
are each task's method calls in `costs.jsonl` and `report`.

The planted learner has no model, so both learn by their rule; each keeps the tasks it
learnt from (a workflow's examples, a procedure's task), which the learner reads.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.agents.models import Usage
from lifelong_gym.cli import main
from lifelong_gym.methods import ProceduralMemoryMethod, WorkflowMemoryMethod
from tests.command_line import assert_one_line_error, planted_gain, run_cli
from tests.crash_support import kill_until_done

from .test_reasoning_memory import ScriptedModel, _run
from .test_workflow_memory import FailsSome

ROOT = Path(__file__).resolve().parents[2]
METHODS = {"workflow_memory": "workflow", "procedural_memory": "procedure"}  # name: item label
METHODS_LEARNING = {"workflow_memory": "induction", "procedural_memory": "update"}


def sessions(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "sessions.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("name", METHODS)
def test_the_planted_learner_gains_over_its_stateless_twin(tmp_path, name):
    gain = planted_gain(tmp_path, name, tasks=30)
    assert gain.low > 0, gain  # a positive gain whose interval excludes 0
    # the items given are named for report.html's table; the method's model calls are none
    named = [
        item
        for s in sessions(tmp_path)
        for r in s["details"].get("memory", ())
        for item in r["items"]
    ]
    assert named and {item.split()[0] for item in named} == {METHODS[name]}
    assert CliRunner().invoke(main, ["report", str(tmp_path)]).exit_code == 0
    table = (tmp_path / "report.html").read_text().split("id='retrieved-items'")[1]
    assert f"<td>{METHODS[name]} 1</td>" in table  # report.html's most-retrieved table
    costs = [json.loads(line) for line in (tmp_path / "costs.jsonl").read_text().splitlines()]
    assert {c["methods"]["calls"] for c in costs} == {0}
    assert sum(c["memory"] for c in costs) > 0


@pytest.mark.parametrize("name", METHODS)
def test_a_run_killed_again_and_again_ends_as_a_straight_run(tmp_path, name):
    def command(out: Path) -> list[str]:
        return [
            sys.executable, "-m", "lifelong_gym", "run", "--no-progress", "--output", str(out),
            "--max-tasks", "16", "--agent", "planted", "--callback", name,
            "--callback", "tests.crash_support.Pacer:delay=0.05",  # so that kills land mid-run
        ]  # fmt: skip

    straight = run_cli(*command(tmp_path / "straight")[3:], cwd=ROOT)
    assert straight.returncode == 0, straight.stderr
    killed = tmp_path / "killed"
    kills = kill_until_done(command(killed), ROOT, killed / "sessions.jsonl", 46, 0.5)
    assert kills >= 1  # killed at least once mid-run, and resumed
    reference = json.loads((tmp_path / "straight" / "state.json").read_text())
    state = json.loads((killed / "state.json").read_text())
    key = next(k for k in reference["callbacks"] if "Memory" in k)
    assert state["callbacks"][key] == reference["callbacks"][key]
    assert reference["callbacks"][key]["items"]
    assert sessions(killed) == sessions(tmp_path / "straight")


@pytest.mark.parametrize("method_class", [WorkflowMemoryMethod, ProceduralMemoryMethod])
def test_in_a_plain_gymnasium_loop(method_class):
    method = method_class(k=2)
    env = method.as_wrapper(gym.make("LifelongDB-v0"))
    oracle = OracleAgent(env.unwrapped.tasks)
    key, given = method.details_key, []
    for index in env.unwrapped.tasks.order[:4]:
        opening, info = env.reset(options={"task_index": index})
        assert env.observation_space.contains(opening)
        given.append([item for r in info.get("memory", ()) for item in r["items"]])
        assert given[-1] == [f"{method.label} {n}" for n in info[key]["retrieved"]]
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(oracle.act(env.unwrapped.session))
            done = terminated or truncated
        assert info[key][method.learning]["learnt_by"] == "rule"  # what it learnt, at the end
    assert given[0] == [] and len(given[-1]) == 2
    assert len(method.items) + method.totals.get("merged", 0) == 4
    env.close()


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("workflow_memory:examples=0", "examples must be at least 1"),
        ("procedural_memory:patience=0", "patience must be at least 1"),
        ("procedural_memory:k=0", "must be at least 1"),
        ("workflow_memory:budget=lots", "budget must be an integer"),
    ],
)
def test_the_command_line_refuses_in_one_line(tmp_path, spec, fragment):
    result = run_cli("run", "--output", str(tmp_path), "--max-tasks", "1", "--callback", spec)
    assert_one_line_error(result, fragment)


class MeteredModel(ScriptedModel):
    """The scripted model, logging each reply's usage as a served model does."""

    reports_usage = True

    def generate(self, batch, tools=None):
        replies = super().generate(batch, tools)
        prompts = [messages[-1]["content"] for messages in batch]
        self.usage.add(
            [Usage(len(p) // 4, len(r) // 4) for p, r in zip(prompts, replies, strict=True)]
        )
        return replies


@pytest.mark.parametrize("name", METHODS)
def test_the_model_calls_of_learning_are_the_tasks_method_cost(tmp_path, name):
    env = gym.make("LifelongDB-v0")
    order = env.unwrapped.tasks.order
    agent = FailsSome(env.unwrapped.tasks, MeteredModel(), failing={order[1], order[4]})
    records, _ = _run(env, agent, tmp_path, spec=f"{name}:k=2", tasks=6)
    env.close()
    costs = [json.loads(line) for line in (tmp_path / "costs.jsonl").read_text().splitlines()]
    learnt = [r["details"][name][METHODS_LEARNING[name]] for r in records]
    assert [c["methods"]["calls"] for c in costs] == [r["model_calls"] for r in learnt]
    # a call per solved task (4), and for procedures one per failed task given one (2)
    assert (
        sum(r["model_calls"] for r in learnt)
        == {"workflow_memory": 4, "procedural_memory": 6}[name]
    )
    assert [c["methods"]["prompt_tokens"] for c in costs if c["methods"]["calls"]] == [
        agent.model.usage.since(0)[i].prompt_tokens for i in range(len(agent.model.prompts))
    ]
    assert "method model calls" in CliRunner().invoke(main, ["report", str(tmp_path)]).output
