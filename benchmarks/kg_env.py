"""LifelongKG-v0 speed: per-action latency of env.step against the same SPARQL sent straight
to the store (the floor), on embedded Oxigraph (with the default query time limit, and
without one: `oxi-noTO`) and on a SPARQL endpoint, plus the whole shipped task set replayed
by the oracle.

Usage: python benchmarks/kg_env.py [--url http://127.0.0.1:8890/sparql] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import urllib.request
from collections.abc import Callable

from lifelong_gym.agents import OracleAgent
from lifelong_gym.envs.kg import LifelongKGEnv
from lifelong_gym.envs.kg.sparql import short_name


def oracle_steps(env: LifelongKGEnv) -> list[tuple[int, list[str]]]:
    """Every (task, replies) of the oracle on the env's task set."""
    agent = OracleAgent(env.tasks)
    runs = []
    for task in env.tasks:
        env.reset(options={"task_index": task.index})
        replies = []
        while True:
            assert env.session is not None
            reply = agent.act(env.session)
            replies.append(reply)
            _, _, terminated, truncated, _ = env.step(reply)
            if terminated or truncated:
                break
        runs.append((task.index, replies))
    return runs


Sent = list[tuple[str, bool]]


def record_queries(env: LifelongKGEnv, runs: list[tuple[int, list[str]]]) -> list[Sent]:
    """The SPARQL of each step (and whether it has one pattern), per step, in replay order.

    On Oxigraph most are answered by index lookups rather than sent; the floor runs
    them as SPARQL all the same.
    """
    sent: Sent = []
    original = env.backend.answer

    def recording(query: str, evaluate: Callable) -> list:
        sent.append((query, query.count(" .\n") == 1))
        return original(query, evaluate)

    env.backend.answer = recording  # type: ignore[method-assign]
    per_step = []
    try:
        for index, replies in runs:
            env.reset(options={"task_index": index})
            for reply in replies:
                sent.clear()
                env.step(reply)
                per_step.append(list(sent))
    finally:
        del env.backend.answer
    return per_step


def time_steps(env: LifelongKGEnv, runs: list[tuple[int, list[str]]]) -> tuple[list[float], float]:
    """Each step's latency, and the whole replay's wall time (resets included)."""
    latencies = []
    begin = time.perf_counter()
    for index, replies in runs:
        env.reset(options={"task_index": index})
        for reply in replies:
            start = time.perf_counter()
            env.step(reply)
            latencies.append(time.perf_counter() - start)
    return latencies, time.perf_counter() - begin


def oxigraph_floor(env: LifelongKGEnv) -> Callable[[str], object]:
    """Run a query straight on the embedded store, reading every value as text."""
    store = env.backend.store()  # type: ignore[attr-defined]
    return lambda query: [[term.value for term in row] for row in store.query(query)]


def endpoint_floor(url: str) -> Callable[[str], object]:
    """Send a query straight to the endpoint with SPARQLWrapper, as the benchmark does."""
    from SPARQLWrapper import JSON, POST, SPARQLWrapper

    def run(query: str) -> object:
        client = SPARQLWrapper(url)
        client.setMethod(POST)
        client.setReturnFormat(JSON)
        client.setQuery(query)
        return client.queryAndConvert()

    return run


def measure(name: str, env: LifelongKGEnv, floor: Callable[[str], object], repeat: int) -> None:
    """Print p50/p95 of our step against the floor, over steps that send one query."""
    runs = oracle_steps(env)  # also warms the store
    queries = record_queries(env, runs)
    ours: list[list[float]] = [[] for _ in queries]
    totals = []
    for _ in range(repeat):
        latencies, total = time_steps(env, runs)
        totals.append(total)
        for slot, latency in zip(ours, latencies, strict=True):
            slot.append(latency)
    # The floor replays the same queries in the same order, so caches are equally warm.
    single = [(i, q[0]) for i, q in enumerate(queries) if len(q) == 1]  # answers send none
    floor_times: dict[int, list[float]] = {i: [] for i, _ in single}
    for _ in range(repeat):
        for i, (query, _) in single:
            start = time.perf_counter()
            floor(query)
            floor_times[i].append(time.perf_counter() - start)
    pairs: dict[str, list[tuple[float, float]]] = {"all": [], "one-pattern": [], "joins": []}
    for i, (_, one_pattern) in single:
        pair = (min(ours[i]) * 1000, min(floor_times[i]) * 1000)
        pairs["all"].append(pair)
        pairs["one-pattern" if one_pattern else "joins"].append(pair)
    for group, group_pairs in pairs.items():
        for label, q in (("p50", 50), ("p95", 95)):
            a = percentile([p[0] for p in group_pairs], q)
            b = percentile([p[1] for p in group_pairs], q)
            print(
                f"{name:9} {group:12} {label}  env.step {a:7.3f} ms   floor {b:7.3f} ms   "
                f"ratio {a / b:4.2f}x   ({len(group_pairs)} steps)"
            )
    steps = sum(len(replies) for _, replies in runs)
    print(
        f"{name:10} whole set: {len(runs)} tasks, {steps} steps, oracle replay "
        f"{min(totals):.2f} s (best of {repeat})"
    )


def lookups_against_sparql(rounds: int = 10, tasks: int = 100) -> None:
    """CPU per task of the oracle with Oxigraph's lookups against every form as SPARQL.

    One process, alternating rounds, so both see the same load; the SPARQL side runs each
    compiled query on the caller's thread (the pre-defence cost, less its thread hop).
    """
    env = LifelongKGEnv()
    agent = OracleAgent(env.tasks)
    indices = list(env.tasks.order[:tasks])
    backend = env.backend
    store = backend.store()  # type: ignore[attr-defined]

    def as_sparql(query: str, evaluate: Callable) -> list[str]:
        return [short_name(row[0].value) for row in store.query(query) if row[0] is not None]

    def play() -> float:
        start = time.process_time()
        for index in indices:
            env.reset(options={"task_index": index})
            while True:
                assert env.session is not None
                *_, terminated, truncated, _ = env.step(agent.act(env.session))
                if terminated or truncated:
                    break
        return (time.process_time() - start) / len(indices) * 1000

    times: dict[str, list[float]] = {"lookups": [], "sparql": []}
    lookups = backend.answer
    play()  # warm-up
    for round_ in range(rounds):
        for name in ("lookups", "sparql") if round_ % 2 == 0 else ("sparql", "lookups"):
            backend.answer = as_sparql if name == "sparql" else lookups  # type: ignore[method-assign]
            times[name].append(play())
    env.close()
    median = {name: statistics.median(values) for name, values in times.items()}
    least = {name: min(values) for name, values in times.items()}
    print(
        f"oxigraph   lookups vs SPARQL on the caller's thread, CPU ms per task ({rounds} rounds):"
        f" median {median['lookups']:.2f} vs {median['sparql']:.2f}"
        f" ({median['lookups'] / median['sparql']:.2f}x), min {least['lookups']:.2f} vs"
        f" {least['sparql']:.2f} ({least['lookups'] / least['sparql']:.2f}x)"
    )


def percentile(values: list[float], q: int) -> float:
    """The q-th percentile (inclusive method)."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def endpoint_up(url: str) -> bool:
    """Whether the endpoint answers an ASK query."""
    try:
        urllib.request.urlopen(f"{url}?query=ASK%20%7B%20%3Fs%20%3Fp%20%3Fo%20%7D", timeout=3)
        return True
    except OSError:
        return False


def main() -> None:
    """Measure both back-ends side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_url = os.environ.get("LIFELONG_GYM_SPARQL_URL", "http://127.0.0.1:8890/sparql")
    parser.add_argument("--url", default=default_url)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    env = LifelongKGEnv()
    env.backend.store()  # type: ignore[attr-defined]
    print(f"oxigraph   shipped graph loaded in {time.perf_counter() - start:.2f} s")
    measure("oxigraph", env, oxigraph_floor(env), args.repeat)
    env.close()
    unguarded = LifelongKGEnv(query_timeout=None)
    measure("oxi-noTO", unguarded, oxigraph_floor(unguarded), args.repeat)
    unguarded.close()
    lookups_against_sparql()
    if not endpoint_up(args.url):
        print(f"sparql     skipped: no endpoint at {args.url}")
        return
    remote = LifelongKGEnv(backend="sparql", url=args.url)
    measure("virtuoso", remote, endpoint_floor(args.url), args.repeat)
    remote.close()


if __name__ == "__main__":
    main()
