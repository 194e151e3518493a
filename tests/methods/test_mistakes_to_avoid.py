"""The tutorial's method (examples/mistakes_to_avoid.py), run every way docs/methods.md shows:
the command line, the runner from Python with a resume, and a plain Gymnasium loop.

With one turn per task the oracle fails every DB task that needs a query before its
answer, so the method has notes to insert."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from examples.mistakes_to_avoid import HEADING, MistakesToAvoid
from lifelong_gym.agents import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.envs.db.prompt import INSTRUCTIONS
from lifelong_gym.results.gain import paired_gain, twin_folder
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run import Runner

TASKS = 6
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mistakes_to_avoid.py"
DOCS = ROOT / "docs" / "methods.md"


def records(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "sessions.jsonl").read_text().splitlines()]


def assert_memory_before_the_task(opening: str, memory: list[dict]) -> None:
    """The opening is the instructions, the notes inserted, then the task."""
    (inserted,) = memory
    assert inserted["title"] == "mistakes to avoid"
    assert inserted["text"].startswith(HEADING)
    assert inserted["chars"] == len(inserted["text"])
    instructions = INSTRUCTIONS.format(max_turns=1)
    assert opening.startswith(f"{instructions}\n\n{inserted['text']}\n\nTask: ")


def check_run(folder) -> list[dict]:
    """Every session after a failure sharing its skills got the notes, in place."""
    sessions = records(folder)
    assert len(sessions) == TASKS
    assert any(s["outcome"] != "correct" for s in sessions)
    with_notes = [s for s in sessions if "memory" in s["details"]]
    assert with_notes, "no task got a note"
    for session in with_notes:
        assert_memory_before_the_task(
            session["chat_history"][0]["content"], session["details"]["memory"]
        )
    return sessions


def test_from_the_command_line(tmp_path):
    spec = "examples.mistakes_to_avoid.MistakesToAvoidCallback:k=2"
    args = ["run", "--output", str(tmp_path), "--env-arg", "max_turns=1", "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--max-tasks", str(TASKS), "--callback", spec])
    assert result.exit_code == 0, result.output
    check_run(tmp_path)
    state = json.loads((tmp_path / "state.json").read_text())
    notes = state["callbacks"]["MistakesToAvoidCallback"]["notes"]
    assert len(notes) == sum(s["outcome"] != "correct" for s in records(tmp_path))


def test_from_python_with_a_resume_that_keeps_the_notes(tmp_path):
    env = gym.make("LifelongDB-v0", max_turns=1)
    oracle = OracleAgent(env.unwrapped.tasks)
    first = MistakesToAvoid(k=2)
    Runner(env, oracle, [first.as_callback()], output=tmp_path, max_tasks=3, progress=False).run()
    assert first.notes
    resumed = MistakesToAvoid(k=2)
    Runner(
        env, oracle, [resumed.as_callback()], output=tmp_path, max_tasks=TASKS, progress=False
    ).run()
    assert resumed.notes[: len(first.notes)] == first.notes  # taken back from the snapshot
    sessions = check_run(tmp_path)
    assert len(resumed.notes) == sum(s["outcome"] != "correct" for s in sessions)
    env.close()


def test_in_a_plain_gymnasium_loop(tmp_path):
    method = MistakesToAvoid(k=2)
    env = method.as_wrapper(gym.make("LifelongDB-v0", max_turns=1))
    oracle = OracleAgent(env.unwrapped.tasks)
    inserted = 0
    for index in env.unwrapped.tasks.order[:TASKS]:
        opening, info = env.reset(options={"task_index": index})
        if "memory" in info:
            inserted += 1
            assert_memory_before_the_task(opening, info["memory"])
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(oracle.act(env.unwrapped.session))
            done = terminated or truncated
    assert inserted and method.notes
    env.close()


def test_the_tutorial_shows_the_example_as_it_is():
    source = EXAMPLE.read_text()
    end = source.index('\n\nif __name__ == "__main__"')
    method = source[source.index("class MistakesToAvoid") : end]
    assert method in DOCS.read_text()


def test_with_the_planted_agent_it_beats_its_stateless_twin(tmp_path):
    # the planted learner solves a task once its prompt shows 2 earlier tasks sharing a skill
    # (docs/agents.md): the notes of failed tasks show them; its twin sees no note
    spec = "examples.mistakes_to_avoid.MistakesToAvoidCallback:k=3"
    args = ["run", "--output", str(tmp_path), "--no-progress", "--max-tasks", "60"]
    args += ["--agent", "planted:k=2,base=0.2", "--callback", spec, "--stateless-baseline"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    gain = paired_gain(load_run(tmp_path), load_run(twin_folder(tmp_path))).overall
    assert gain.tasks == 60
    assert gain.low > 0, gain  # a positive gain whose interval excludes 0
