"""Reasoning memory: distillation, parsing, retrieval, budget, cap, snapshot, refusals.

The model that distills is scripted (its distillation replies are fixed strings, chosen
by what the prompt asks for); the agent acts with the oracle or a wrong answer. The end
to end run uses the tiny random transformers model, whose replies are junk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import (
    Agent,
    AgentError,
    LanguageModel,
    LanguageModelAgent,
    ModelPool,
    OracleAgent,
    ScriptedAgent,
)
from lifelong_gym.envs.db.actions import answer_reply
from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.methods import ReasoningMemoryMethod
from lifelong_gym.methods.budget import token_counter
from lifelong_gym.methods.memory_items import parse_memory_item
from lifelong_gym.methods.reasoning_memory import HEADING
from lifelong_gym.run import Runner, make_callback
from lifelong_gym.session import (
    EvaluationOutcome,
    Role,
    Session,
    SessionStatus,
    with_memory,
)
from lifelong_gym.wrappers import ReasoningMemory
from tests.command_line import assert_one_line_error, run_cli

WRONG = answer_reply("I do not know")
STRATEGY = (
    "Title: Count with GROUP BY\n"
    "Description: Group the rows before counting them.\n"
    "Content: Read the table's columns first. Then count per group with GROUP BY."
)
PITFALL = (
    "**Title:** Check the columns\n"
    "**Description:** A wrong column gives a wrong answer.\n"
    "**Content:** The answer used a column the table lacks.\n"
    "Describe the table before querying it."
)


RECIPE = "Title: Query then answer\nSteps:\n1. Query the {table}.\n2. Answer with the rows."


def item_for(prompt: str) -> str:
    """The scripted reply: a recipe when asked for steps (workflow and procedural memory),
    else a strategy when asked for one, else a pitfall."""
    if "\nSteps:\n" in prompt:
        return RECIPE
    return STRATEGY if "strategy that worked" in prompt else PITFALL


class ScriptedModel(LanguageModel):
    """A model whose replies are `reply(prompt)`; counts tokens with `counter` if given."""

    def __init__(
        self, reply: Callable[[str], str] = item_for, counter: LanguageModel | None = None
    ):
        self.reply, self.counter, self.prompts = reply, counter, []

    def generate(self, batch: Sequence[Sequence[dict[str, str]]], tools=None) -> list[str]:
        self.prompts.extend(messages[-1]["content"] for messages in batch)
        return [self.reply(messages[-1]["content"]) for messages in batch]

    def count_tokens(self, messages):
        return None if self.counter is None else self.counter.count_tokens(messages)


class SolvesEvenTasks(Agent):
    """The oracle's reply on even task indices, a wrong answer on odd ones; `model` distills."""

    def __init__(self, tasks, model: LanguageModel):
        self.oracle, self.model = OracleAgent(tasks), model

    def act(self, session):
        return self.oracle.act(session) if session.task_index % 2 == 0 else WRONG


@pytest.fixture
def env():
    env = gym.make("LifelongDB-v0")
    yield env
    env.close()


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    config = {"name": "tiny", "backend": "hf", "path": str(tiny_model_dir), "max_new_tokens": 8}
    return ModelPool([config]).get("tiny")


def _sessions(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "sessions.jsonl").open()]


def _run(env, agent, folder, spec="reasoning_memory:k=2", tasks=6, **kwargs):
    callback = make_callback(spec)
    Runner(env, agent, [callback], output=folder, max_tasks=tasks, progress=False, **kwargs).run()
    return _sessions(folder), callback


# -- parsing ----------------------------------------------------------------------------


def test_an_item_is_parsed_from_labels_with_markdown_and_content_over_lines():
    fields, problem = parse_memory_item(PITFALL)
    assert problem == ""
    assert fields == {
        "title": "Check the columns",
        "description": "A wrong column gives a wrong answer.",
        "content": (
            "The answer used a column the table lacks. Describe the table before querying it."
        ),
    }


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "SELECT * FROM t;",
        "Title: only a title",
        "Title: t\nDescription: d\nContent:",
        "Title: <a few words>\nDescription: <one sentence>\nContent: <two to four sentences>",
        "\x00\ufffd Content Title Description",
    ],
)
def test_junk_distillation_output_is_no_item(junk):
    fields, problem = parse_memory_item(junk)
    assert fields is None
    assert problem.startswith("no ")


# -- distillation through the runner ------------------------------------------------------


def test_items_are_distilled_from_successes_and_failures_and_retrieved_later(env, tmp_path):
    model = ScriptedModel()
    sessions, callback = _run(env, SolvesEvenTasks(env.unwrapped.tasks, model), tmp_path)
    outcomes = [s["outcome"] for s in sessions]
    assert set(outcomes) == {"correct", "incorrect"}
    items = callback.method.items
    expected = ["success" if o == "correct" else "failure" for o in outcomes]
    assert [item.source for item in items] == expected
    assert [item.task_index for item in items] == [s["task_index"] for s in sessions]
    titles = {"success": "Count with GROUP BY", "failure": "Check the columns"}
    assert all(item.title == titles[item.source] for item in items)
    # the failure's prompt asked for the pitfall, with the wrong reply in it
    failure = next(p for p, o in zip(model.prompts, outcomes, strict=True) if o == "incorrect")
    assert "pitfall" in failure and "I do not know" in failure
    for session in sessions:
        record = session["details"]["reasoning_memory"]
        assert record["distillation"]["model_calls"] == 1
        assert record["distillation"]["item"] is not None
    assert sessions[0]["details"]["reasoning_memory"]["retrieved"] == []
    later = sessions[-1]
    retrieved = later["details"]["reasoning_memory"]["retrieved"]
    assert len(retrieved) == 2
    opening = later["chat_history"][0]["content"]
    assert HEADING in opening
    for number in retrieved:
        assert next(i for i in items if i.number == number).content in opening
    assert {s["status"] for s in sessions} <= {"completed", "agent_validation_failed"}


def _opening(index: int, task: str) -> Session:
    """A session whose opening prompt is the instructions, then `task` (as an env writes it)."""
    session = Session(task_index=index, task_start=len(INSTRUCTIONS) + 2)
    session.add(Role.USER, f"{INSTRUCTIONS}\n\n{task}")
    return session


def _play(method, index: int, task: str, reply: str, outcome: EvaluationOutcome) -> Session:
    """One task through `method`: started, answered with `reply`, judged, finished."""
    session = _opening(index, task)
    method.start(session)
    session.add(Role.AGENT, reply)
    session.status, session.outcome = SessionStatus.COMPLETED, outcome
    method.finish(session)
    return session


INSTRUCTIONS = "You work on a database. Reply with one SQL statement."
TASKS = {  # no two share a word
    0: "How many invoices were paid in March?",
    1: "List employees hired after 2020.",
    2: "Which customer placed most orders?",
}


def _filled_memory(**kwargs) -> ReasoningMemoryMethod:
    """A memory with one item per task of TASKS, each item naming its task's subject."""
    subjects = iter(["invoices paid", "employees hired", "customer orders", "payroll runs"])

    def reply(_prompt: str) -> str:
        subject = next(subjects)
        return (
            f"Title: {subject}\nDescription: About {subject}.\nContent: Query {subject} directly."
        )

    method = ReasoningMemoryMethod(model=ScriptedModel(reply), **kwargs)
    for index, task in TASKS.items():
        _play(method, index, task, "SELECT 1;", EvaluationOutcome.CORRECT)
    return method


def test_retrieval_ranks_items_by_relevance_to_the_new_task():
    method = _filled_memory(k=3)
    for words, first in [("invoices were paid", 1), ("employees", 2), ("orders", 3)]:
        ranked = method.retrieve(f"Show the {words} today.", skills=[])
        assert ranked[0].number == first
    # an item that shares no word and no skill is never retrieved
    assert method.retrieve("zebra quokka", skills=[]) == []


def test_the_items_are_kept_within_the_token_budget_counted_with_the_tokenizer(tiny):
    counting = ScriptedModel(counter=tiny)
    method = _filled_memory(k=3)
    method.bind(counting)
    assert method.token_counting == "tokenizer"
    count = token_counter(tiny)
    task = "How many invoices and employees and customer orders?"
    opening = f"{INSTRUCTIONS}\n\n{task}"
    all_three = method.retrieve(task, [])
    assert len(all_three) == 3

    def added(items):
        return count(with_memory(opening, len(INSTRUCTIONS) + 2, method.memory_text(items))[0])

    two = added(all_three[:2]) - count(opening)
    method.budget = two  # room for the best two, not the third
    assert added(all_three) - count(opening) > two
    session = _opening(9, task)
    method.start(session)
    record = session.details["reasoning_memory"]
    assert record["retrieved"] == [item.number for item in all_three[:2]]
    assert record["memory_tokens"] == count(session.chat_history[0].content) - count(opening)
    assert record["memory_tokens"] <= method.budget
    method.budget = 1  # no item fits: the prompt is left as it was
    session = _opening(10, task)
    method.start(session)
    assert session.chat_history[0].content == opening
    assert session.details["reasoning_memory"]["retrieved"] == []


def test_the_memory_keeps_at_most_max_items_dropping_the_least_used_oldest():
    method = _filled_memory(k=1, max_items=2)
    # items 1 (invoices) and 2 (employees) were stored; the third dropped the least used, the oldest
    assert [item.number for item in method.items] == [2, 3]
    # item 2 is retrieved (used once); item 4 comes in, and item 3, used never, goes
    _play(method, 5, "The employees hired?", "x", EvaluationOutcome.CORRECT)
    assert [item.number for item in method.items] == [2, 4]


def test_junk_or_failing_distillation_makes_no_item_and_is_counted(env, tmp_path):
    replies = iter(["", "gibberish", STRATEGY])

    def reply(_prompt: str) -> str:
        answer = next(replies, None)
        if answer is None:
            raise AgentError("the server went away")
        return answer

    agent = SolvesEvenTasks(env.unwrapped.tasks, ScriptedModel(reply))
    sessions, callback = _run(env, agent, tmp_path, tasks=4)
    records = [s["details"]["reasoning_memory"]["distillation"] for s in sessions]
    assert [r["item"] for r in records] == [None, None, 1, None]
    assert "the server went away" in records[3]["rejected"]
    totals = callback.method.totals
    assert (totals["items"], totals["rejected"], totals["model_calls"]) == (1, 3, 4)
    assert "task_unknown_error" not in {s["status"] for s in sessions}


def test_a_resumed_run_continues_with_the_same_items(env, tmp_path):
    agent = SolvesEvenTasks(env.unwrapped.tasks, ScriptedModel())
    straight, whole = _run(env, agent, tmp_path / "straight")
    _run(env, agent, tmp_path / "resumed", tasks=3)
    resumed, second = _run(env, agent, tmp_path / "resumed")
    assert len(second.method.items) == 6
    assert second.state() == whole.state()
    assert [s["chat_history"][0] for s in resumed] == [s["chat_history"][0] for s in straight]
    assert resumed[3]["details"]["reasoning_memory"]["retrieved"]  # items from before the stop


# -- refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "agent", [lambda tasks: OracleAgent(tasks), lambda _tasks: ScriptedAgent(["x"])]
)
def test_an_agent_that_cannot_generate_is_refused_at_setup(env, tmp_path, agent):
    runner = Runner(
        env, agent(env.unwrapped.tasks), [make_callback("reasoning_memory")], output=tmp_path
    )
    with pytest.raises(
        CallbackSpecError, match="distills memories with the agent's model.*has none"
    ):
        runner.run()
    assert not (tmp_path / "sessions.jsonl").exists()


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("reasoning_memory", "has none"),  # the oracle
        ("reasoning_memory:k=0", "must be at least 1"),
        ("reasoning_memory:budget=lots", "budget must be an integer"),
    ],
)
def test_the_command_line_refuses_in_one_line(tmp_path, spec, fragment):
    result = run_cli("run", "--output", str(tmp_path), "--max-tasks", "1", "--callback", spec)
    assert_one_line_error(result, fragment)


# -- the wrapper and a real model ---------------------------------------------------------


def test_the_wrapper_distills_and_retrieves_in_a_plain_loop(env):
    model = ScriptedModel()
    wrapped = ReasoningMemory(env, model, k=1)
    agent = SolvesEvenTasks(env.unwrapped.tasks, model)
    infos = []
    for index in env.unwrapped.tasks.order[:3]:
        obs, info = wrapped.reset(options={"task_index": index})
        infos.append(info)
        assert wrapped.observation_space.contains(obs)
        while True:
            *_, terminated, truncated, info = wrapped.step(agent.act(env.unwrapped.session))
            if terminated or truncated:
                break
        assert info["reasoning_memory"]["distillation"]["item"] == len(wrapped.method.items)
    assert infos[0]["reasoning_memory"]["retrieved"] == []
    assert infos[2]["reasoning_memory"]["retrieved"]
    assert HEADING in env.unwrapped.session.chat_history[0].content


def test_a_run_with_the_tiny_model_counts_its_distillation_with_the_tokenizer(env, tiny, tmp_path):
    agent = LanguageModelAgent(tiny)
    sessions, callback = _run(env, agent, tmp_path, tasks=3, max_consecutive_failures=None)
    count = token_counter(tiny)
    totals = callback.method.totals
    assert totals["model_calls"] == 3
    assert totals["items"] + totals["rejected"] == 3
    for session in sessions:
        record = session["details"]["reasoning_memory"]
        assert record["token_counting"] == "tokenizer"
        distillation = record["distillation"]
        assert distillation["prompt_tokens"] > count("")
        assert distillation["generated_tokens"] >= 0
    assert totals["prompt_tokens"] == sum(
        s["details"]["reasoning_memory"]["distillation"]["prompt_tokens"] for s in sessions
    )
    assert "task_unknown_error" not in {s["status"] for s in sessions}
