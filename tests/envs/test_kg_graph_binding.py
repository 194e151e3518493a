"""A KG task set is bound to the graph it was made on: the generator keeps a graph that other
task files use, each task records the graph's content hash, and an environment refuses a
graph of another hash in one line.

Real parts: the `lifelong-gym generate kg` command in its own process, Oxigraph.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401  (registers the ids)
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.kg import LifelongKGEnv, load_kg_tasks
from lifelong_gym.envs.kg.backends import SHIPPED_GRAPH
from lifelong_gym.errors import GraphMismatchError
from tests.command_line import assert_one_line_error, run_cli

from .kg_fixtures import dense_graph

pytest.importorskip("pyoxigraph")
pytest.importorskip("faker")

SMALL = ("--count", "8", "--scale", "0.1")


def content_sha256(graph: Path) -> str:
    """The sha256 of the graph's N-Triples, as the test computes it on its own."""
    return hashlib.sha256(gzip.decompress(graph.read_bytes())).hexdigest()


def generated(folder: Path, seed: int, *flags: str) -> None:
    made = run_cli("generate", "kg", *SMALL, "--seed", str(seed), "--output", str(folder), *flags)
    assert made.returncode == 0, made.stderr


def oracle_score(env: LifelongKGEnv) -> tuple[int, int]:
    """(correct, tasks) of the reference actions replayed on every task."""
    agent, correct = OracleAgent(env.tasks), 0
    for index in env.tasks.indices:
        env.reset(options={"task_index": index})
        while True:
            assert env.session is not None
            *_, terminated, truncated, info = env.step(agent.act(env.session))
            if terminated or truncated:
                correct += info["outcome"] == "correct"
                break
    return correct, len(env.tasks)


def test_a_second_set_of_another_seed_does_not_replace_the_graph_the_first_plays_on(tmp_path):
    generated(tmp_path, 3)
    graph = tmp_path / "graph.nt.gz"
    before = graph.read_bytes()
    refused = run_cli("generate", "kg", *SMALL, "--seed", "4", "--split", "train",
                      "--output", str(tmp_path))  # fmt: skip
    assert_one_line_error(refused, str(graph), "default.jsonl", "--output")
    assert graph.read_bytes() == before and not (tmp_path / "train.jsonl").exists()
    generated(tmp_path, 3, "--split", "train")  # the same seed: the same graph, shared
    generated(tmp_path, 4, "--name", "other")  # a set of its own name: a graph of its own
    assert graph.read_bytes() == before
    for name in ("default", "train", "other"):
        env = LifelongKGEnv(tasks=str(tmp_path / f"{name}.jsonl"))
        try:
            assert oracle_score(env) == (8, 8), name
        finally:
            env.close()


def test_tasks_record_their_graph_and_another_graph_is_refused_naming_both_files(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    generated(first, 3)
    generated(second, 4)
    tasks, graph = first / "default.jsonl", first / "graph.nt.gz"
    records = [json.loads(line) for line in tasks.read_text().splitlines()]
    assert {r["graph_sha256"] for r in records} == {content_sha256(graph)}
    env = gym.make("LifelongKG-v0", tasks=str(tasks))
    try:
        assert env.unwrapped.graph_sha256 == content_sha256(graph)
    finally:
        env.close()
    other = second / "graph.nt.gz"
    with pytest.raises(GraphMismatchError) as refused:
        gym.make("LifelongKG-v0", tasks=str(tasks), graph=str(other))
    message = str(refused.value)
    assert str(tasks) in message and str(other) in message and "\n" not in message
    assert content_sha256(graph)[:16] in message and content_sha256(other)[:16] in message
    run = run_cli("run", "--env", "LifelongKG-v0", "--tasks", str(tasks), "--env-arg",
                  f"graph={other}", "--output", str(tmp_path / "run"))  # fmt: skip
    assert_one_line_error(run, str(tasks), str(other), "were generated on the graph")


def test_a_task_file_without_a_recorded_graph_still_plays_on_the_graph_given(tmp_path):
    generated(tmp_path, 3)
    older = tmp_path / "older.jsonl"
    records = [json.loads(line) for line in (tmp_path / "default.jsonl").read_text().splitlines()]
    for record in records:
        record.pop("graph_sha256", None)
    older.write_text("".join(json.dumps(record) + "\n" for record in records))
    env = LifelongKGEnv(tasks=str(older), graph=tmp_path / "graph.nt.gz")
    try:
        assert oracle_score(env) == (8, 8)
        assert env.graph_sha256 == content_sha256(tmp_path / "graph.nt.gz")
    finally:
        env.close()


def test_the_shipped_set_is_bound_to_the_shipped_graph(tmp_path):
    shipped = content_sha256(SHIPPED_GRAPH)
    assert {task.graph_sha256 for task in load_kg_tasks()} == {shipped}
    env = LifelongKGEnv()
    try:
        assert env.graph_sha256 == shipped
    finally:
        env.close()
    with pytest.raises(GraphMismatchError, match="tasks=default were generated on"):
        LifelongKGEnv(graph=dense_graph(tmp_path))
