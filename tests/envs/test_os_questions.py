"""`lifelong-gym generate os --kind question|mixed`: tasks that ask a question about the
system, answered with `Act: answer(VALUE)`; verified in containers, solved by the oracle,
exported as demonstrations. The default kind writes what it wrote before questions existed."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the environments
from lifelong_gym.agents import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.envs.os.backends.docker import ContainerPool
from lifelong_gym.envs.os.generator import QUESTIONS, generate_tasks, verify_task, wrong_answers
from lifelong_gym.envs.os.skills import SKILLS
from lifelong_gym.envs.os.tasks import AnswerCheck, load_os_tasks
from tests.command_line import assert_one_line_error, run_cli


def generate(*args: str) -> None:
    result = CliRunner().invoke(main, ["generate", "os", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_the_default_kind_writes_byte_for_byte_what_it_wrote_before(tmp_path: Path):
    generate("--count", "20", "--seed", "5", "--no-verify", "--output", str(tmp_path))
    digests = {
        p.name: hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(tmp_path.iterdir())
    }  # computed on the generator before `--kind` existed; one task's reference sleeps a
    # second past its bound since (the touch-and-sleep template: the only difference)
    assert digests == {
        "default.jsonl": "35444cbc8c37d9c3bc6d1e07ccbb1b00",
        "default.order.json": "fd17a2a3a7db248b4cce59ebaab98800",
    }


def test_a_question_set_draws_each_of_its_dozens_of_templates_in_turn():
    assert len(QUESTIONS) >= 12
    assert len({s for skills, _ in QUESTIONS.values() for s in skills}) >= 10
    tasks = generate_tasks(len(QUESTIONS), 0, kind="question")
    drawn = Counter(t.skills for t in tasks)
    assert drawn == Counter(skills for skills, _ in QUESTIONS.values())


def test_mixed_sets_hold_change_and_question_tasks_about_half_and_half():
    tasks = generate_tasks(300, 4, kind="mixed")
    asks = [t for t in tasks if t.answer_check is not None]
    assert 120 <= len(asks) <= 180  # a coin flip a task, not the share of question skills
    changes = [t for t in tasks if t.answer_check is None]
    assert {s for t in changes for s in t.skills} == set(SKILLS)  # each half balanced alone
    assert Counter(t.skills for t in asks).keys() == {sk for sk, _ in QUESTIONS.values()}
    assert all(t.evaluation is None and t.answer_check.match for t in asks)
    assert all(t.evaluation is not None for t in tasks if t.answer_check is None)


def test_a_bad_kind_is_one_line():
    result = run_cli("generate", "os", "--kind", "questions", "--no-verify")
    assert_one_line_error(result, "'--kind'", "'change', 'question', 'mixed'")
    with pytest.raises(ValueError, match="kind must be one of change, question, mixed"):
        generate_tasks(3, 0, kind="questions")


@pytest.fixture(scope="module")
def question_set(os_image: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 question tasks, each verified in a container by the command that wrote them."""
    folder = tmp_path_factory.mktemp("questions")
    generate("--kind", "question", "--count", "12", "--seed", "3", "--output", str(folder))
    return folder / "default.jsonl"


def play(env: gym.Env, index: int, replies: list[str]) -> float:
    env.reset(options={"task_index": index})
    reward = 0.0
    for reply in replies:
        _, reward, terminated, truncated, _ = env.step(reply)
        if terminated or truncated:
            break
    return float(reward)


def test_question_tasks_are_answer_tasks_the_oracle_solves_and_a_wrong_answer_fails(
    question_set: Path, os_image: str
):
    tasks = load_os_tasks(question_set)
    assert len(tasks) == 12
    assert all(t.evaluation is None and t.answer_check.match for t in tasks)
    env = gym.make("LifelongOS-v0", tasks=str(question_set), image=os_image, pool_size=1)
    try:
        for task in tasks:
            agent = OracleAgent(env.unwrapped.tasks)
            env.reset(options={"task_index": task.index})
            done, reward = False, 0.0
            while not done:
                _, reward, terminated, truncated, _ = env.step(agent.act(env.unwrapped.session))
                done = terminated or truncated
            assert reward == 1.0, task.instruction
        first = tasks[0]
        wrong = wrong_answers(first.answer_check.match)[1]
        assert play(env, first.index, [f"Act: answer({wrong})"]) == 0.0
        assert play(env, first.index, [f"Act: answer({first.answer_check.match})"]) == 1.0
    finally:
        env.close()


def test_verification_rejects_a_question_whose_answer_is_not_what_the_solution_prints(
    os_image: str,
):
    drawn = generate_tasks(1, 0, kind="question")[0]
    task = drawn.model_copy(update={"answer_check": AnswerCheck(match="-1")})
    pool = ContainerPool(os_image, size=1)
    try:
        assert "not the answer '-1'" in verify_task(pool, task)
    finally:
        pool.close()


def test_export_writes_question_demonstrations_that_run_then_answer(
    question_set: Path, os_image: str, tmp_path: Path
):
    pytest.importorskip("datasets")
    records = question_set.read_text().splitlines()[:2]
    subset = tmp_path / "two.jsonl"
    subset.write_text("\n".join(records) + "\n")
    out = tmp_path / "sft"
    result = CliRunner().invoke(
        main,
        ["export", "sft", "--no-progress", "--env", "LifelongOS-v0", "--tasks", str(subset)]
        + ["--out", str(out), "--env-arg", f"image={os_image}"],
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wrote 2 demonstrations to {out}"
    from datasets import load_dataset

    row = load_dataset(str(out), split="train")[0]
    expected = json.loads(records[0])["answer_check"]["match"]
    replies = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
    assert replies[0].startswith("Act: bash")
    assert replies[-1] == f"Act: answer({expected})"
    assert row["reward"] == 1.0
