"""LifelongKG-v0: the oracle on both back-ends, S-expressions, and every kind of bad input."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import lifelong_gym  # noqa: F401  (registers the ids)
from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.kg import LifelongKGEnv, load_kg_tasks
from lifelong_gym.envs.kg.backends import OxigraphBackend
from lifelong_gym.envs.kg.backends.local import WORK, Evaluation, Exhausted, Known, Overrun
from lifelong_gym.envs.kg.sexpr import (
    ACTIONS,
    SExpr,
    SExprError,
    actions_to_sexpr,
    dump_sexpr,
    parse_sexpr,
    sexpr_to_actions,
)
from lifelong_gym.envs.kg.sparql import (
    InvalidArgument,
    check_entity,
    check_relation,
    short_name,
)
from lifelong_gym.errors import BackendError, EnvArgumentError

from .kg_fixtures import FOUR_HOPS, SIDE, dense_env, dense_graph

pytest.importorskip("pyoxigraph")

SPARQL_URL = os.environ.get("LIFELONG_GYM_SPARQL_URL", "http://127.0.0.1:8890/sparql")
TASKS = load_kg_tasks()


@pytest.fixture(scope="module")
def env() -> Iterator[LifelongKGEnv]:
    made = LifelongKGEnv()
    yield made
    made.close()


def run_oracle(env: LifelongKGEnv, index: int) -> dict:
    """Replay one task's reference actions; the final info."""
    agent = OracleAgent(env.tasks)
    env.reset(options={"task_index": index})
    while True:
        assert env.session is not None
        _, _, terminated, truncated, info = env.step(agent.act(env.session))
        if terminated or truncated:
            return info


def start(env: LifelongKGEnv, index: int = 0) -> None:
    env.reset(options={"task_index": index})


def test_check_env_passes_without_warnings() -> None:
    made = gym.make("LifelongKG-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(made.unwrapped)
    made.close()
    made.close()


def test_shipped_set_is_large_and_balanced() -> None:
    lengths = [len(t.action_list) for t in TASKS]
    assert len(TASKS) >= 400
    assert sorted(set(lengths)) == list(range(2, 10))
    assert min(lengths.count(n) for n in range(2, 10)) >= len(TASKS) // 10


def test_oracle_scores_every_shipped_task_on_oxigraph(env: LifelongKGEnv) -> None:
    failures, sessions = [], []
    for task in TASKS:
        info = run_oracle(env, task.index)
        sessions.append(env.session)
        if info["outcome"] != "correct" or info["status"] != "completed":
            failures.append((task.index, info))
    assert not failures, failures[:3]
    per_skill = env.calculate_metric(sessions).per_skill  # the reference leaves these empty
    assert set(per_skill) == set(ACTIONS)
    assert all(m.success_rate == 1.0 and m.count > 0 for m in per_skill.values())


def _endpoint_up(url: str) -> bool:
    query = urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }"})
    try:
        with urllib.request.urlopen(f"{url}?{query}", timeout=3) as response:
            return response.status == 200
    except OSError:
        return False


def test_unguarded_store_gives_the_same_results(env: LifelongKGEnv) -> None:
    unguarded = LifelongKGEnv(query_timeout=None)
    try:
        for task in list(TASKS)[:40]:
            assert run_oracle(unguarded, task.index) == run_oracle(env, task.index)
    finally:
        unguarded.close()


def test_oracle_matches_oxigraph_on_virtuoso(env: LifelongKGEnv) -> None:
    if not _endpoint_up(SPARQL_URL):
        pytest.skip(f"no SPARQL endpoint at {SPARQL_URL} (set LIFELONG_GYM_SPARQL_URL)")
    remote = LifelongKGEnv(backend="sparql", url=SPARQL_URL)
    try:
        for task in TASKS:
            on_endpoint = run_oracle(remote, task.index)
            assert on_endpoint["outcome"] == "correct", (task.index, on_endpoint)
            assert on_endpoint == run_oracle(env, task.index)
    finally:
        remote.close()


def test_sexpr_round_trip_on_every_shipped_task() -> None:
    for task in TASKS:
        assert sexpr_to_actions(task.s_expression) == list(task.action_list)
        assert actions_to_sexpr(task.action_list) == task.s_expression
        assert dump_sexpr(parse_sexpr(task.s_expression)) == task.s_expression


def test_sexpr_round_trip_by_hand() -> None:
    text = "(ARGMIN (AND (JOIN (R a.b.c) m.01) (JOIN (R d.e.f) (JOIN (R g.h.i) m.02))) j.k.l)"
    actions = sexpr_to_actions(text)
    assert actions == [
        "get_relations(m.01)",
        "get_neighbors(m.01, a.b.c)",
        "get_relations(m.02)",
        "get_neighbors(m.02, g.h.i)",
        "get_relations(#1)",
        "get_neighbors(#1, d.e.f)",
        "intersection(#0, #2)",
        "get_attributes(#3)",
        "argmin(#3, j.k.l)",
    ]
    assert actions_to_sexpr(actions) == text
    for bad in ["(JOIN (R a.b) m.01", "(JOIN a.b))", "(OR m.01 m.02)", "m.01", ""]:
        with pytest.raises(SExprError):
            sexpr_to_actions(bad)


def _first_relation(task_index: int) -> tuple[str, str]:
    """The entity and relation of a task's first get_neighbors action."""
    action = TASKS[task_index].action_list[1]
    entity, relation = action[len("get_neighbors(") : -1].split(", ")
    return entity, relation


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Action: fly_to(m.0abc)", "is not an action"),
        ("Action: get_neighbors(m.0abc)", "takes 2 argument"),
        ("Action: count(#0, #1)", "takes 1 argument"),
        ("Action: intersection(#5, #7)", "there is no variable #5"),
        ("Action: count(m.0abc)", "is not a variable"),
        ("Final Answer: #3", "there is no variable #3"),
        ("Final Answer: Paris", "is not a variable"),
        ("Action: get_relations(m.0abc} . ?s ?p ?o } #)", "is not an entity id"),
        ('Action: get_relations(m.0abc" } DROP ALL #)', "is not an entity id"),
        ("Action: get_neighbors(m.0abc, a.b} DROP ALL; #)", "is not a relation name"),
        ("Action: get_neighbors(m.0abc, DROP)", "is not a relation name"),
        ("Action: get_neighbors(m.0abc, <http://x/y>)", "is not a relation name"),
        ("Action: get_attributes('m.0abc')", "is not an entity id"),
    ],
)
def test_bad_action_is_an_observation(env: LifelongKGEnv, reply: str, expected: str) -> None:
    start(env)
    observation, reward, terminated, truncated, info = env.step(reply)
    assert expected in observation
    assert not terminated and not truncated and reward == 0.0


def test_injection_never_reaches_the_store(env: LifelongKGEnv) -> None:
    store = env.backend.store()
    before = len(store)
    for reply in [
        "Action: get_relations(m.0abc\n} DROP ALL )",
        "Action: get_neighbors(m.0abc, a.b.c }\nDELETE WHERE { ?s ?p ?o })",
        "Action: get_neighbors(m.0abc, a.b.c # comment)",
    ]:
        start(env)
        observation, _, terminated, _, info = env.step(reply)
        assert "Error:" in observation or info["status"] == "agent_validation_failed"
    assert len(store) == before
    for text in ["a.b}", "a.b #", 'a."b', "a.b\nc.d", "DROP", "a.b.c ."]:
        with pytest.raises(InvalidArgument):
            check_relation(text)
        with pytest.raises(InvalidArgument):
            check_entity(text)


def test_prose_around_the_action_is_ignored(env: LifelongKGEnv) -> None:
    task = TASKS[0]
    start(env, 0)
    observation = env.step(f"Thought: look first.\nAction: {task.action_list[0]}.\nMore.")[0]
    assert observation.startswith("Observation: [")
    env.step(f"Action: {task.action_list[1]}")
    _, reward, terminated, _, info = env.step("So the answer is it.\nFinal Answer: #0.")
    assert terminated and reward == 1.0 and info["executed"] == [True, True]


def test_reply_without_action_fails_validation(env: LifelongKGEnv) -> None:
    start(env)
    _, reward, terminated, _, info = env.step("I think the answer is Paris.")
    assert terminated and reward == 0.0
    assert info["status"] == "agent_validation_failed"
    assert info["outcome"] == "incorrect"


def test_count_result_is_only_a_final_answer(env: LifelongKGEnv) -> None:
    entity, relation = _first_relation(0)
    start(env)
    env.step(f"Action: get_neighbors({entity}, {relation})")
    assert "#1" in env.step("Action: count(#0)")[0]
    observation = env.step("Action: get_relations(#1)")[0]
    assert "can only be the final answer" in observation
    _, _, terminated, _, info = env.step("Final Answer: #1")
    assert terminated and info["executed"] == [True, True, False]


def test_huge_result_is_cut_with_a_note() -> None:
    index = next(t.index for t in TASKS if len(t.action_list) == 2 and len(t.answer_list) > 3)
    entity, relation = _first_relation(index)
    small = LifelongKGEnv(max_results=2)
    try:
        start(small, index)
        observation = small.step(f"Action: get_neighbors({entity}, {relation})")[0]
        assert "more than 2 entities" in observation
        _, reward, terminated, _, info = small.step("Final Answer: #0")
        assert terminated and reward == 0.0 and 0.0 < info["f1"] < 1.0
    finally:
        small.close()


def test_query_past_its_time_limit_is_an_observation() -> None:
    slow = LifelongKGEnv(query_timeout=1e-9)
    try:
        start(slow)
        observation, _, terminated, _, info = slow.step("Action: get_relations(#0)")
        assert "no variable" in observation  # no query needed: not a timeout
        entity, relation = _first_relation(0)
        observation, _, terminated, _, info = slow.step(
            f"Action: get_neighbors({entity}, {relation})"
        )
        assert "time limit" in observation and not terminated
    finally:
        slow.close()


def test_join_past_its_time_limit_is_an_observation() -> None:
    made = LifelongKGEnv()
    try:
        entity, relation = _first_relation(0)
        start(made)
        made.step(f"Action: get_neighbors({entity}, {relation})")
        made.backend.timeout = 1e-9  # the count reads the clock, even with its set known
        observation, _, terminated, _, info = made.step("Action: count(#0)")
        assert "time limit" in observation and not terminated
        assert info["turn"] == 2
    finally:
        made.close()


class FlakyEndpoint:
    """A SPARQL endpoint on loopback that answers its first query, then fails as told.

    `after="down"` stops listening; `after="hang"` accepts and never answers.
    """

    ANSWER = json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": []}}).encode()

    def __init__(self, after: str):
        self.after = after
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/sparql"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection = self.server.accept()[0]
        connection.recv(65536)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
        connection.sendall(
            head + f"Content-Length: {len(self.ANSWER)}\r\n\r\n".encode() + self.ANSWER
        )
        connection.close()
        if self.after == "down":
            self.server.close()
            return
        while True:
            try:
                self.held.append(self.server.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        for connection in self.held:
            connection.close()
        self.server.close()


def test_an_endpoint_that_goes_down_ends_the_task_with_an_environment_error() -> None:
    endpoint = FlakyEndpoint(after="down")
    down = LifelongKGEnv(backend="sparql", url=endpoint.url)  # the start check is answered
    try:
        start(down)
        observation, _, terminated, _, info = down.step("Action: get_relations(m.0abc)")
        assert terminated and info["status"] == "task_environment_error"
        assert "unreachable" in observation
    finally:
        down.close()
        endpoint.close()


def test_an_endpoint_down_at_start_is_refused() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(BackendError, match="unreachable.*start the endpoint"):
        LifelongKGEnv(backend="sparql", url=f"http://127.0.0.1:{port}/sparql")


def test_slow_endpoint_times_out_as_an_observation() -> None:
    endpoint = FlakyEndpoint(after="hang")
    slow = LifelongKGEnv(backend="sparql", url=endpoint.url, query_timeout=1)
    try:
        start(slow)
        observation, _, terminated, _, _ = slow.step("Action: get_relations(m.0abc)")
        assert "did not answer within 1 s" in observation and not terminated
    finally:
        slow.close()
        endpoint.close()


def test_user_errors_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        LifelongKGEnv(backend="neo4j")
    with pytest.raises(ValueError, match="needs url="):
        LifelongKGEnv(backend="sparql")
    with pytest.raises(ValueError, match="url= is for backend='sparql'"):
        LifelongKGEnv(url=SPARQL_URL)
    with pytest.raises(EnvArgumentError, match="N-Triples"):
        LifelongKGEnv(graph=tmp_path / "missing.nt")
    with pytest.raises(ValueError, match="query_timeout must be positive or None"):
        LifelongKGEnv(query_timeout=0)
    (tmp_path / "graph.csv").write_text("a,b\n")
    with pytest.raises(ValueError, match=r"must end in \.nt"):
        LifelongKGEnv(graph=tmp_path / "graph.csv")


def test_user_graph_and_benchmark_records(tmp_path: Path) -> None:
    """A Turtle graph of the user's and tasks in the benchmark's entry_dict.json format."""
    graph = tmp_path / "tiny.ttl"
    graph.write_text(
        "@prefix ns: <http://rdf.freebase.com/ns/> .\n"
        'ns:m.01 ns:film.film.genre ns:m.0g1, ns:m.0g2 ; ns:type.object.name "Heat" .\n'
        'ns:m.02 ns:film.film.genre ns:m.0g1 ; ns:film.film.runtime "170"^^'
        "<http://www.w3.org/2001/XMLSchema#integer> .\n"
        "ns:m.0g1 ns:film.film_genre.films_in_this_genre ns:m.01, ns:m.02 .\n"
        'ns:m.01 ns:film.film.runtime "150"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
    )
    records = {
        "0": {
            "question": "which genres does Heat have?",
            "entity_dict": {"Heat": "m.01"},
            "s_expression": "(JOIN (R film.film.genre) m.01)",
            "answer_list": [{"answer_type": "Entity", "answer_argument": "m.0g1"}, "m.0g2"],
        },
        "7": {
            "question": "which crime film runs longest?",
            "entity_dict": {"Crime": "m.0g1"},
            "action_list": [
                "get_relations(m.0g1)",
                "get_neighbors(m.0g1,film.film_genre.films_in_this_genre)",
                "get_attributes(#0)",
                "argmax(#0,film.film.runtime)",
            ],
            "answer_list": ["m.02"],
            "skill_list": ["get_neighbors", "argmax"],
        },
        "9": {"question": "a record with no logical form", "entity_dict": {}, "answer_list": []},
    }
    tasks_file = tmp_path / "entry_dict.json"
    tasks_file.write_text(json.dumps(records))
    env = gym.make("LifelongKG-v0", tasks=str(tasks_file), graph=str(graph))
    try:
        unwrapped = env.unwrapped
        assert isinstance(unwrapped, LifelongKGEnv)
        assert [s.key for s in unwrapped.tasks.skipped] == ["9"]
        assert unwrapped.tasks[7].s_expression == (
            "(ARGMAX (JOIN (R film.film_genre.films_in_this_genre) m.0g1) film.film.runtime)"
        )
        for index in (0, 7):
            info = run_oracle(unwrapped, index)
            assert info["outcome"] == "correct", info
        assert unwrapped.tasks[7].skills == ("get_neighbors", "argmax")
    finally:
        env.close()


def test_generator_is_seeded_and_its_tasks_replay(tmp_path: Path) -> None:
    pytest.importorskip("faker")
    from lifelong_gym.envs.kg.generator import generate

    first, second = tmp_path / "a", tmp_path / "b"
    counts = [generate(7, 16, folder / "default.jsonl", scale=0.1) for folder in (first, second)]
    assert counts[0] == counts[1]
    for name in ("graph.nt.gz", "default.jsonl", "default.order.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    made = LifelongKGEnv(tasks=str(first / "default.jsonl"), graph=first / "graph.nt.gz")
    try:
        lengths = sorted(len(t.action_list) for t in made.tasks)
        assert lengths == sorted(list(range(2, 10)) * 2)
        for task in made.tasks:
            assert run_oracle(made, task.index)["outcome"] == "correct"
    finally:
        made.close()


def test_runaway_join_returns_and_later_queries_still_run(tmp_path: Path) -> None:
    """A join past the lookups' budget whose SPARQL explodes is stopped; the next ones answer."""
    dense = dense_env(tmp_path)
    try:
        start(dense)
        dense.step("Action: get_neighbors(m.0a0, x.y.out)")
        dense.step("Action: get_neighbors(#0, x.y.back)")
        assert "variable #2" in dense.step("Action: get_neighbors(#1, x.y.out)")[0]
        dense.backend.timeout = 0.05
        observation, _, terminated, _, _ = dense.step("Action: get_neighbors(#2, x.y.wide)")
        assert "ran longer than 0.05 s" in observation and not terminated
        dense.backend.timeout = 10
        assert "x.y.out" in dense.step("Action: get_relations(m.0a0)")[0]
        assert f"the number {SIDE}" in dense.step("Action: count(#0)")[0]
    finally:
        dense.close()


def test_lookups_answer_as_sparql_does(env: LifelongKGEnv, tmp_path: Path) -> None:
    """Every form the oracle sends, evaluated by lookups and as SPARQL: the same values."""
    dense = dense_env(tmp_path)
    compared = []
    for checked in (env, dense):
        store = checked.backend.store()
        answer = checked.backend.answer

        def both(query: str, evaluate, store=store, answer=answer) -> list[str]:
            rows = answer(query, evaluate)
            by_sparql = [short_name(row[0].value) for row in store.query(query) if row[0]]
            assert sorted(set(rows)) == sorted(set(by_sparql)), query
            compared.append(query)
            return rows

        checked.backend.answer = both
    try:
        for task in TASKS:
            run_oracle(env, task.index)
        start(dense)
        for action in (
            "get_neighbors(m.0a0, x.y.out)",  # SIDE values, in one lookup
            "get_neighbors(#0, x.y.back)",  # SIDE lookups from a set
            "get_relations(#1)",
            "get_attributes(#1)",
            "intersection(#0, #0)",
            "count(#1)",
            "get_neighbors(#0, x.y.wide)",
        ):
            assert dense.step(f"Action: {action}")[0].startswith("Observation:")
        assert len(compared) > len(TASKS)
    finally:
        del env.backend.answer  # the module's environment, shared with later tests
        dense.close()


def test_lookups_stop_at_their_budget_and_their_deadline(tmp_path: Path) -> None:
    backend = OxigraphBackend(dense_graph(tmp_path))
    four_hops: SExpr = "m.0a0"
    for relation in FOUR_HOPS:
        four_hops = ("JOIN", ("R", relation), four_hops)
    try:
        evaluation = Evaluation(backend.store(), float("inf"))
        with pytest.raises(Exhausted):
            evaluation.count(four_hops)
        assert evaluation.spent == WORK + 1  # not one step more
        with pytest.raises(Overrun):
            Evaluation(backend.store(), time.monotonic()).entities(four_hops, 10)
        assert Evaluation(backend.store(), float("inf")).count(four_hops[2]) == [str(SIDE)]
        # a result cut at its limit stops the walk early: the same four hops, within budget
        assert len(Evaluation(backend.store(), float("inf")).entities(four_hops, 10)) == 10
        known = Known()  # what earlier actions evaluated is not paid for again
        Evaluation(backend.store(), float("inf"), known).count(four_hops[2])
        again = Evaluation(backend.store(), float("inf"), known)
        assert again.count(four_hops[2]) == [str(SIDE)] and again.spent == 1  # the action
    finally:
        backend.close()


def test_normalize_action_reads_the_parsed_action():
    env = gym.make("LifelongKG-v0").unwrapped
    key = env.normalize_action("I will look.\nAction: get_relations( m.0abc12 )")
    assert (
        key == env.normalize_action("Action: get_relations(m.0abc12)") == "get_relations(m.0abc12)"
    )
    # a call of the wrong arity is read (its execution fails with an observation)
    assert env.normalize_action("Action: count( #0,#1 )") == "count(#0, #1)"
    assert env.normalize_action("Action: count(#0") is None  # not a call
    assert env.normalize_action("no action") is None
    assert env.normalize_action("Final Answer: #2") == "Final Answer: #2"
    env.close()
