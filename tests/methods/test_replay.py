"""Experience replay, in a plain Gymnasium loop and through the runner, on a predictable agent."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.methods.experience import ExperienceMemory, split_instructions
from lifelong_gym.run import ExperienceReplayCallback, RelevantReplayCallback, Runner
from lifelong_gym.session import EvaluationOutcome, Session, SessionStatus, with_memory
from lifelong_gym.wrappers import ExperienceReplay
from tests.agents.episodes import play_stream

from .skill_recall import SkillRecallAgent, labelled_task_file, predict, seeds_of

# Interleaved labels: a recency window of one mostly holds the wrong label.
INTERLEAVED = ["alpha", "beta", "gamma"] * 8
# Runs of one label: recency works as well as relevance.
RUNS = ["alpha"] * 6 + ["beta"] * 6 + ["gamma"] * 6


def plain_loop(env, agent) -> int:
    """Solve every task of the stream once in order; return how many were correct."""
    return sum(info["outcome"] == "correct" for info in play_stream(env, agent))


@pytest.mark.parametrize("order", [INTERLEAVED, RUNS], ids=["interleaved", "runs"])
@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("strategy", ["recent", "relevant"])
def test_wrapper_in_a_plain_loop_scores_as_predicted(tmp_path, order, n, strategy):
    env = ExperienceReplay(
        gym.make("LifelongDB-v0", tasks=str(labelled_task_file(tmp_path, order))), n, strategy
    )
    agent = SkillRecallAgent(env.unwrapped.tasks, seeds_of(order))
    assert plain_loop(env, agent) == predict(order, n, strategy)
    env.close()


def test_replay_beats_no_replay_and_relevance_beats_recency():
    assert predict(INTERLEAVED, 1, "recent") > predict(INTERLEAVED, 0, "recent")
    assert predict(INTERLEAVED, 1, "relevant") > predict(INTERLEAVED, 1, "recent")


@pytest.mark.parametrize(
    "callback, n, strategy",
    [
        (ExperienceReplayCallback, 1, "recent"),
        (RelevantReplayCallback, 1, "relevant"),
        (ExperienceReplayCallback, 0, "recent"),
    ],
)
def test_callbacks_through_the_runner_score_as_predicted(tmp_path, callback, n, strategy):
    env = gym.make("LifelongDB-v0", tasks=str(labelled_task_file(tmp_path, INTERLEAVED)))
    agent = SkillRecallAgent(env.unwrapped.tasks, seeds_of(INTERLEAVED))
    runner = Runner(
        env, agent, [callback(n=n)], output=tmp_path / "run", progress=False, plots=False
    )
    runner.run()
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["correct"] == predict(INTERLEAVED, n, strategy)
    env.close()


def test_replay_memory_survives_a_resume(tmp_path):
    tasks = str(labelled_task_file(tmp_path, INTERLEAVED))
    env = gym.make("LifelongDB-v0", tasks=tasks)
    agent = SkillRecallAgent(env.unwrapped.tasks, seeds_of(INTERLEAVED))
    output = tmp_path / "run"
    Runner(
        env, agent, [RelevantReplayCallback(n=1)], output=output, max_tasks=10, progress=False
    ).run()
    Runner(
        env, agent, [RelevantReplayCallback(n=1)], output=output, progress=False, plots=False
    ).run()
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["sessions"] == len(INTERLEAVED)
    assert metrics["correct"] == predict(INTERLEAVED, 1, "relevant")
    env.close()


def _solved(index: int, opening: str, reply: str = "ok") -> Session:
    session = Session(task_index=index, skills=["x"], status=SessionStatus.COMPLETED)
    session.outcome = EvaluationOutcome.CORRECT
    session.add("user", opening)
    session.add("agent", reply)
    return session


def prompt_with_experiences(memory, opening, skills, **options):
    """`opening` with the memory's chosen experiences before its `Task:`, and their indices."""
    task_start = opening.rindex("Task:")
    text, replayed = memory.memory_text(opening, task_start, skills, **options)
    return with_memory(opening, task_start, text)[0] if text else opening, replayed


def test_instructions_appear_once_and_experiences_sit_before_the_task():
    memory = ExperienceMemory(n=2)
    for i in range(3):
        opening = f"Rules.\n\nMore rules.\n\nTask: number {i}"
        memory.remember(_solved(i, opening, f"reply {i}"), opening)
    prompt, replayed = prompt_with_experiences(memory, "Rules.\n\nMore rules.\n\nTask: new", ["x"])
    assert replayed == [2, 1]
    assert prompt.count("More rules.") == 1
    assert (
        prompt.index("Task: number 2") < prompt.index("Task: number 1") < prompt.index("Task: new")
    )
    assert prompt.endswith("Task: new")


def test_empty_memory_leaves_the_prompt_alone():
    memory = ExperienceMemory(n=4)
    assert memory.memory_text("Rules.\n\nTask: a", 7, []) == ("", [])


def test_unsolved_sessions_are_not_remembered():
    memory = ExperienceMemory(n=4)
    session = _solved(0, "Rules.\n\nTask: a")
    session.outcome = EvaluationOutcome.INCORRECT
    assert not memory.remember(session, "Rules.\n\nTask: a")
    session.outcome = EvaluationOutcome.CORRECT
    session.status = SessionStatus.TASK_LIMIT_REACHED
    assert not memory.remember(session, "Rules.\n\nTask: a")


def _words(text: str) -> int:
    return len(text.split())


def test_budget_drops_experiences_exactly_when_the_next_would_overflow():
    def memory(n, budget=None):
        made = ExperienceMemory(n=n, budget=budget, count_tokens=_words if budget else None)
        for i in range(3):
            opening = f"Rules here.\n\nTask: number {i}"
            made.remember(_solved(i, opening, "word " * 10), opening)
        return made

    new_task = "Rules here.\n\nTask: new"
    prompt, replayed = prompt_with_experiences(memory(3, budget=60), new_task, ["x"], reserve=5)
    assert 0 < len(replayed) < 3
    assert _words(prompt) + 5 <= 60
    bigger, _ = prompt_with_experiences(memory(len(replayed) + 1), new_task, ["x"])
    assert _words(bigger) + 5 > 60
    assert replayed == [2, 1][: len(replayed)]  # the most recent are kept


@pytest.mark.parametrize("strategy", ["recent", "relevant"])
def test_a_larger_n_changes_no_prompt_where_the_budget_holds_fewer(strategy):
    """replay-32 and replay-64 with budget=auto: at a task where fewer than 32 experiences
    fit the window, both cells build the same prompt (docs/results.md)."""

    def memory(n):
        made = ExperienceMemory(n=n, strategy=strategy, budget=60, count_tokens=_words)
        for i in range(8):
            opening = f"Rules here.\n\nTask: number {i}"
            made.remember(_solved(i, opening, "word " * 10), opening)
        return made

    new_task = "Rules here.\n\nTask: number 9"
    fewer = prompt_with_experiences(memory(3), new_task, ["x"], reserve=5)
    more = prompt_with_experiences(memory(8), new_task, ["x"], reserve=5)
    assert 0 < len(fewer[1]) < 3
    assert more == fewer


def test_split_instructions_cuts_at_a_paragraph():
    assert split_instructions("A.\n\nB.\n\nTask: one", "A.\n\nB.\n\nTask: two") == (
        "A.\n\nB.",
        "Task: one",
    )


def test_an_unusable_budget_stops_the_run_before_any_task(tmp_path):
    args = ["run", "--agent", "oracle", "--output", str(tmp_path), "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--callback", "experience_replay:n=2,budget=auto"])
    assert result.exit_code == 1
    assert "needs an agent whose model counts tokens" in result.output
    assert not (tmp_path / "sessions.jsonl").exists()


def test_with_tasks_in_flight_each_experience_keeps_its_own_opening(tmp_path):
    env = gym.make("LifelongDB-v0")
    agent = OracleAgent(env.unwrapped.tasks)
    callback = ExperienceReplayCallback(n=0)  # remembers all, replays none: openings as given
    Runner(
        env, agent, [callback], output=tmp_path, max_tasks=6, concurrency=3, progress=False
    ).run()
    env.close()
    experiences = callback.method.memory.experiences
    assert len(experiences) == 6
    for experience in experiences:
        instruction = env.unwrapped.tasks[experience.task_index].instruction
        assert instruction in experience.opening


def test_on_kg_the_replayed_tasks_and_the_new_one_are_split_where_the_env_marks():
    pytest.importorskip("pyoxigraph")
    env = ExperienceReplay(gym.make("LifelongKG-v0"), n=2)
    oracle = OracleAgent(env.unwrapped.tasks)
    play_stream(env, oracle, count=2)
    opening, info = env.reset(options={"task_index": env.unwrapped.tasks.order[2]})
    session = env.unwrapped.session
    (memory,) = info["memory"]
    assert info["replayed"] and memory["title"] == "experience replay"
    assert opening.endswith(f"\n\n{memory['text']}\n\n{session.task_text}")
    assert session.task_text.startswith("Question: ")
    # each earlier task is its question alone: the instructions appear once
    assert memory["text"].count("### Earlier task") == 2
    assert memory["text"].count("\n\n### Earlier task 1\n\nQuestion: ") == 1
    assert opening.count("Now your task.") == 1
    env.close()
