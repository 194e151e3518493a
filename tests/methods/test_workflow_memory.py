"""Workflow memory (AWM): the recipe parser and the rule's abstraction, induction by a
scripted model and by the rule, what is inserted and recorded, merging, junk replies.

The model is scripted (`ScriptedModel` of the reasoning memory tests); the agent acts with
the oracle or a wrong answer.
"""

from __future__ import annotations

import itertools

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import AgentError, OracleAgent
from lifelong_gym.methods import WorkflowMemoryMethod
from lifelong_gym.methods.steps import abstract, parse_steps
from lifelong_gym.methods.workflow_memory import HEADING
from lifelong_gym.session import EvaluationOutcome, Session

from .test_reasoning_memory import WRONG, ScriptedModel, _play, _run

RECIPE = (
    "**Title:** Count the paid invoices\n"
    "**Steps:**\n"
    "1. Read the {table} columns.\n"
    "2) Count its rows where {column} is {value}.\n"
    "- Answer with the count."
)


class FailsSome(OracleAgent):
    """The oracle, but a wrong answer on the tasks of `failing`; `model` learns."""

    def __init__(self, tasks, model=None, failing=()):
        super().__init__(tasks)
        self.model, self.failing = model, set(failing)

    def act(self, session):
        return WRONG if session.task_index in self.failing else super().act(session)


@pytest.fixture
def env():
    env = gym.make("LifelongDB-v0")
    yield env
    env.close()


def numbered_recipes():
    """A scripted model's reply function: a new workflow each call."""
    count = itertools.count(1)

    def reply(_prompt: str) -> str:
        n = next(count)
        return f"Title: Workflow {n}\nSteps:\n1. Query the {{table}} as in case {n}.\n2. Answer."

    return reply


# -- parsing and abstraction ---------------------------------------------------------------


def test_a_recipe_is_parsed_from_labels_with_markdown_numbers_and_bullets():
    recipe, problem = parse_steps(RECIPE)
    assert problem == ""
    assert recipe == (
        "Count the paid invoices",
        [
            "Read the {table} columns.",
            "Count its rows where {column} is {value}.",
            "Answer with the count.",
        ],
    )


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "SELECT * FROM t;",
        "Title: a title and no steps",
        "Steps:\n1. a step and no title",
        "Title: <the goal, in a few words>\nSteps:\n1. <the first step>\n2. <the next step>",
        "\x00\ufffd Steps Title",
    ],
)
def test_junk_is_no_recipe_and_a_reason(junk):
    recipe, problem = parse_steps(junk)
    assert recipe is None
    assert problem.startswith("no ")


def test_the_rule_abstracts_literals_into_placeholders():
    action = "Action: Operation\n```sql\nSELECT a FROM t1 WHERE r = 'South' OR q < 5.5\n```"
    assert abstract(action) == "Action: Operation SELECT a FROM t1 WHERE r = {text} OR q < {number}"


# -- induction ----------------------------------------------------------------------------


def test_workflows_are_induced_from_solved_tasks_by_the_model_and_inserted(env, tmp_path):
    model = ScriptedModel(numbered_recipes())
    order = env.unwrapped.tasks.order
    agent = FailsSome(env.unwrapped.tasks, model, failing={order[1], order[4]})
    sessions, callback = _run(env, agent, tmp_path, spec="workflow_memory:k=2", tasks=6)
    inductions = [s["details"]["workflow_memory"]["induction"] for s in sessions]
    solved = [s["outcome"] == "correct" for s in sessions]
    assert solved == [True, False, True, True, False, True]
    for induction, ok in zip(inductions, solved, strict=True):
        if ok:
            assert induction["learnt_by"] == "model" and induction["model_calls"] == 1
            assert induction["prompt_tokens"] > 0 and induction["merged"] is False
        else:
            assert induction == {"model_calls": 0, "workflow": None, "rejected": "not solved"}
    assert [i["workflow"] for i in inductions if i["workflow"]] == [1, 2, 3, 4]
    # one call per solved task, asking for the workflow of that task
    assert len(model.prompts) == 4
    assert "workflow you followed" in model.prompts[0]
    workflows = callback.method.items
    assert [w.examples[0].task_index for w in workflows] == [
        s["task_index"] for s, ok in zip(sessions, solved, strict=True) if ok
    ]
    assert workflows[0].examples[0].task.startswith("Task: ")  # the task alone, verbatim
    assert workflows[0].examples[0].task in model.prompts[0]
    totals = callback.method.totals
    assert (totals["induced"], totals["rejected"], totals["model_calls"]) == (4, 2, 4)
    # a later task is given the relevant workflows, with the tasks they came from
    last = sessions[-1]
    record = last["details"]["workflow_memory"]
    assert len(record["retrieved"]) == 2
    opening = last["chat_history"][0]["content"]
    assert HEADING in opening
    (inserted,) = Session.model_validate(last).inserted_memory()
    assert inserted["title"] == "workflow memory"
    assert inserted["items"] == [f"workflow {n}" for n in record["retrieved"]]
    for number in record["retrieved"]:
        workflow = next(w for w in workflows if w.number == number)
        assert f"### Workflow {number}: {workflow.title}" in inserted["text"]
        assert workflow.examples[0].task in inserted["text"]


def test_without_a_model_the_rule_induces_from_the_actions(env, tmp_path):
    sessions, callback = _run(
        env, OracleAgent(env.unwrapped.tasks), tmp_path, spec="workflow_memory", tasks=3
    )
    inductions = [s["details"]["workflow_memory"]["induction"] for s in sessions]
    assert {i["learnt_by"] for i in inductions} == {"rule"}
    assert {i["model_calls"] for i in inductions} == {0}
    first, session = callback.method.items[0], sessions[0]
    replies = [m["content"] for m in session["chat_history"] if m["role"] == "agent"]
    assert first.steps == [abstract(reply) for reply in replies]
    task = first.examples[0].task
    assert task.startswith("Task: ") and session["chat_history"][0]["content"].endswith(task)
    assert callback.method.totals["model_calls"] == 0


def test_a_task_solved_by_the_same_steps_joins_the_workflow_as_its_newest_example():
    method = WorkflowMemoryMethod(examples=2)
    tasks = [
        "Which invoices were paid in March?",
        "Which invoices were paid in May?",
        "Which invoices were paid in June?",
    ]
    for index, (task, value) in enumerate(zip(tasks, ["March", "May", "June"], strict=True)):
        _play(
            method,
            index,
            task,
            f"SELECT id FROM invoices WHERE month = '{value}';",
            EvaluationOutcome.CORRECT,
        )
    (workflow,) = method.items
    assert [example.task_index for example in workflow.examples] == [2, 1]  # newest, at most 2
    assert workflow.steps == ["SELECT id FROM invoices WHERE month = {text};"]
    assert (method.totals["induced"], method.totals["merged"]) == (1, 2)


def test_junk_or_a_failing_model_induces_nothing_and_says_why(env, tmp_path):
    replies = iter(
        ["", "gibberish", "Title: <the goal, in a few words>\nSteps:\n1. <the first step>", RECIPE]
    )

    def reply(_prompt: str) -> str:
        answer = next(replies, None)
        if answer is None:
            raise AgentError("the server went away")
        return answer

    agent = FailsSome(env.unwrapped.tasks, ScriptedModel(reply))
    sessions, callback = _run(env, agent, tmp_path, spec="workflow_memory", tasks=5)
    inductions = [s["details"]["workflow_memory"]["induction"] for s in sessions]
    assert [i["workflow"] for i in inductions] == [None, None, None, 1, None]
    assert all(inductions[i]["rejected"].startswith("no ") for i in range(3))
    assert "the server went away" in inductions[4]["rejected"]
    totals = callback.method.totals
    assert (totals["induced"], totals["rejected"], totals["model_calls"]) == (1, 4, 5)
    assert {s["status"] for s in sessions} == {"completed"}
