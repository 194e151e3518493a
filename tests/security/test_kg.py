"""Hostile replies on the KG stores: runaway queries stop, nothing keeps running after close(),
and a server's refusal is the agent's observation (real Oxigraph, real Virtuoso)."""

from __future__ import annotations

import os
import threading
import urllib.request
from pathlib import Path

import pytest

from lifelong_gym.envs.kg import LifelongKGEnv
from lifelong_gym.envs.kg.backends import NS, SHIPPED_GRAPH
from lifelong_gym.envs.kg.backends.store_process import StoreProcess, StoreStopped

from ..envs.kg_fixtures import SIDE, dense_env

SPARQL_URL = os.environ.get("LIFELONG_GYM_SPARQL_URL", "http://127.0.0.1:8890/sparql")


def children() -> set[int]:
    """The live (not zombie) child processes of this process, from /proc."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[1]) == os.getpid():
            found.add(int(entry))
    return found


def runaway(env: LifelongKGEnv) -> str:
    """Start a task and send the join whose work explodes; return its observation.

    Three hops are answered by lookups; the fourth passes their budget, so its SPARQL runs
    in the store process, which is killed at the limit and replaced.
    """
    env.reset(options={"task_index": env.tasks.order[0]})
    env.backend.timeout = 30
    env.step("Action: get_neighbors(m.0a0, x.y.out)")
    env.step("Action: get_neighbors(#0, x.y.back)")
    assert "variable #2" in env.step("Action: get_neighbors(#1, x.y.out)")[0]
    env.backend.timeout = 2
    running = children()
    observation, _, terminated, _, info = env.step("Action: get_neighbors(#2, x.y.wide)")
    assert not terminated and "status" not in info  # still running
    assert children() != running  # the process that ran it was killed, a fresh one started
    return observation


@pytest.mark.timeout(120)
def test_runaway_queries_leave_nothing_running_after_close(tmp_path: Path) -> None:
    threads_before, children_before = set(threading.enumerate()), children()
    env = dense_env(tmp_path, max_turns=50)
    try:
        for _ in range(3):  # across tasks: runaways must not pile up
            observation = runaway(env)
            assert "ran longer than 2 s" in observation
            assert len(children() - children_before) <= 1  # only the fresh store process
        env.backend.timeout = 30
        assert "x.y.out" in env.step("Action: get_relations(m.0a0)")[0]
        assert f"the number {SIDE}" in env.step("Action: count(#0)")[0]  # the store still answers
    finally:
        env.close()
    assert children() - children_before == set()
    assert set(threading.enumerate()) - threads_before == set()


@pytest.mark.timeout(60)
def test_the_store_process_dies_with_its_parent() -> None:
    import subprocess
    import sys

    script = (
        "import os, sys, time\n"
        "from lifelong_gym.envs.kg.backends.store_process import StoreProcess\n"
        "from lifelong_gym.envs.kg.backends import NS, SHIPPED_GRAPH\n"
        "store = StoreProcess(SHIPPED_GRAPH, 'N_TRIPLES', NS, 0)\n"
        "store.select('SELECT ?x WHERE { ?x ?p ?o } LIMIT 1', 60)\n"
        "print(store.pid, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    parent = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    pid = int(parent.stdout.split()[0])
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            break
        threading.Event().wait(0.05)
    assert not Path(f"/proc/{pid}").exists()


@pytest.mark.timeout(60)
def test_a_query_past_the_memory_limit_stops_only_its_process() -> None:
    store = StoreProcess(SHIPPED_GRAPH, "N_TRIPLES", NS, 64 << 20)
    try:
        assert store.select(f"SELECT ?x WHERE {{ <{NS}m.0fj9d> ?p ?x }} LIMIT 1", 60)
        hungry = "SELECT (GROUP_CONCAT(STR(?a)) AS ?x) WHERE { ?a ?b ?c . ?d ?e ?f }"
        with pytest.raises(StoreStopped, match="memory") as stopped:
            store.select(hungry, 60)
        assert not stopped.value.timed_out
        assert store.pid is None
    finally:
        store.stop()


def endpoint_up() -> bool:
    """Whether the SPARQL endpoint answers."""
    try:
        urllib.request.urlopen(f"{SPARQL_URL}?query=ASK%20%7B%7D", timeout=3)
    except OSError:
        return False
    return True


@pytest.mark.timeout(300)
def test_a_doubling_intersection_chain_is_an_observation_on_virtuoso() -> None:
    if not endpoint_up():
        pytest.skip(f"no SPARQL endpoint at {SPARQL_URL}; set LIFELONG_GYM_SPARQL_URL")
    env = LifelongKGEnv(backend="sparql", url=SPARQL_URL, max_turns=30, query_timeout=30)
    try:
        task = env.tasks[env.tasks.order[0]]
        env.reset(options={"task_index": task.index})
        entity = next(iter(task.entity_dict.values()))
        relation = env.step(f"Action: get_relations({entity})")[0]
        first = relation.split("[", 1)[1].split(",")[0].split("]")[0].strip()
        assert "variable #0" in env.step(f"Action: get_neighbors({entity}, {first})")[0]
        refused = None
        for k in range(12):  # each intersection doubles the query: the server gives up
            observation, _, terminated, _, info = env.step(f"Action: intersection(#{k}, #{k})")
            assert not terminated, observation
            assert "status" not in info  # the task goes on
            if observation.startswith("Error:"):
                refused = observation
                break
        assert refused is not None and "the endpoint refused the query" in refused
        assert env.step("Action: count(#0)")[0].startswith("Observation:")  # the task goes on
    finally:
        env.close()


@pytest.mark.timeout(60)
def test_a_doubling_chain_stops_at_the_compilers_cap_on_oxigraph() -> None:
    env = LifelongKGEnv(max_turns=40)
    try:
        task = env.tasks[env.tasks.order[0]]
        env.reset(options={"task_index": task.index})
        env.step("Action: " + task.action_list[1])  # get_neighbors: variable #0
        for k in range(30):
            observation, _, terminated, _, info = env.step(f"Action: intersection(#{k}, #{k})")
            assert not terminated and "status" not in info
            if observation.startswith("Error:"):
                break
        assert "too large" in observation and k < 12
    finally:
        env.close()
