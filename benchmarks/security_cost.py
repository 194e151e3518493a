"""What the hostile-input defences cost on the normal path: this checkout against a baseline.

Usage: python benchmarks/security_cost.py [--baseline REV] [--rounds 3] [--load N]
                                          [--only db-sqlite ...]

The baseline (default 2710f7b, the last commit before the defences of issue 11) and HEAD
are each unpacked from git into a temporary folder in the package's installed layout, so
both are imported the same way. Each workload runs the oracle over the version's own
shipped tasks in a fresh process, after one untimed warm-up task; the two versions
alternate (A B A B ...) so that a machine whose load changes hurts both alike. Printed
per workload: the median and the minimum over rounds of the environment's time per task
(reset + steps + scoring; the oracle's own time left out), wall and CPU (the benchmark
process's, plus that of its child processes over the run, such as the knowledge-graph
store's; neither counts the Docker daemon or the database server), and HEAD over the
baseline. Under load, CPU is the steadier figure, and the minimum the one least
distorted by other work. The target is a ratio of at most 1.10. With db-sqlite, a last
line sets HEAD's embedded back-end with its per-statement defences on against off, since
its baseline predates the MySQL translation of issue 12 as well. `--load N` runs N
busy-looping processes for the whole run (during A and B alike), so that a figure under
load can be reproduced; the machine's own load average is printed beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BASELINE = "2710f7b"
MYSQL_URL = os.environ.get("LIFELONG_GYM_MYSQL_URL", "mysql://root@127.0.0.1:3306")

# name -> (environment id, keyword arguments, tasks played)
WORKLOADS: dict[str, tuple[str, dict, int]] = {
    "db-sqlite": ("LifelongDB-v0", {}, 200),
    "db-mysql": ("LifelongDB-v0", {"backend": "mysql", "url": MYSQL_URL}, 100),
    "kg-oxigraph": ("LifelongKG-v0", {}, 100),
    "os-docker": ("LifelongOS-v0", {"pool_size": 2}, 30),
}

# Runs in the child process, inside one version's tree; prints one JSON line.
PLAY = """
import json, sys, time
import gymnasium as gym
import psutil
import lifelong_gym
from lifelong_gym.agents import OracleAgent

env_id, kwargs, limit = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
env = gym.make(env_id, **kwargs).unwrapped
agent = OracleAgent(env.tasks)
indices = list(env.tasks.order[:limit])
def children_cpu():
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total

def play(index, clock):
    reply, done = None, False
    for step in range(10_000):
        w, c = time.perf_counter(), time.process_time()
        if step == 0:
            env.reset(options={"task_index": index})
            info = {}
        else:
            *_, terminated, truncated, info = env.step(reply)
            done = terminated or truncated
        clock[0] += time.perf_counter() - w
        clock[1] += time.process_time() - c
        if done:
            return info.get("outcome") == "correct"
        reply = agent.act(env.session)

play(indices[0], [0.0, 0.0])  # warm-up, untimed: stores and caches that load lazily
clock = [0.0, 0.0]
children = children_cpu()
correct = sum(play(index, clock) for index in indices)
wall, cpu = clock
children = children_cpu() - children
env.close()
n = len(indices)
print(json.dumps({
    "wall": wall / n, "cpu": cpu / n, "children": children / n, "correct": correct, "tasks": n
}))
"""

# Runs in the child process on HEAD: the embedded back-end with its two per-statement
# defences (the statement guard and the authorizer's allow-list) on and off, alternating
# in one process; the rest of what changed since the baseline is issue 12's translation.
DEFENCES = """
import json, statistics, sys, time
import gymnasium as gym
import lifelong_gym
import lifelong_gym.envs.db.backends.sqlite.backend as embedded
from lifelong_gym.agents import OracleAgent

env = gym.make("LifelongDB-v0").unwrapped
agent = OracleAgent(env.tasks)
indices = list(env.tasks.order[:int(sys.argv[1])])
guard, authorizer = embedded.refusal, embedded.authorizer

def run():
    start = time.process_time()
    for index in indices:
        env.reset(options={"task_index": index})
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(agent.act(env.session))
            done = terminated or truncated
    return (time.process_time() - start) / len(indices)

run()  # warm-up
times = {"on": [], "off": []}
for round_ in range(int(sys.argv[2])):
    for state in ("on", "off") if round_ % 2 == 0 else ("off", "on"):
        embedded.refusal = guard if state == "on" else (lambda sql: None)
        embedded.authorizer = authorizer if state == "on" else (lambda read: None)
        times[state].append(run())
print(json.dumps({state: statistics.median(values) for state, values in times.items()}))
"""


def unpack(revision: str, into: Path) -> Path:
    """`revision`'s tree under `into`, laid out as installed (agents/, wrappers/ in the package)."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", revision],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    for name in ("agents", "wrappers"):
        if (into / name).is_dir():
            shutil.move(into / name, into / "lifelong_gym" / name)
    return into


def play(tree: Path, workload: str) -> dict:
    """One run of `workload` on the version in `tree`, in a fresh process."""
    env_id, kwargs, limit = WORKLOADS[workload]
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", PLAY, env_id, json.dumps(kwargs), str(limit)],
        capture_output=True,
        text=True,
        cwd=tree,
        env=environment,
        timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"{workload} failed in {tree.name}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), default=list(WORKLOADS))
    parser.add_argument("--load", type=int, default=0, help="busy-looping processes to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lgym-security-cost-") as folder, busy(args.load):
        trees = {
            "baseline": unpack(args.baseline, Path(folder) / "baseline"),
            "head": unpack("HEAD", Path(folder) / "head"),
        }
        print(
            f"baseline {args.baseline} vs HEAD, {args.rounds} rounds, ms per task,"
            f" {args.load} busy loops, load average {os.getloadavg()[0]:.1f} at start"
        )
        print(
            f"{'workload':<19} {'base wall':>10} {'head wall':>10} {'ratio':>6}"
            f" {'base cpu':>9} {'head cpu':>9} {'ratio':>6}  correct"
        )
        for workload in args.only:
            runs: dict[str, list[dict]] = {"baseline": [], "head": []}
            for round_ in range(args.rounds):
                order = ("baseline", "head") if round_ % 2 == 0 else ("head", "baseline")
                for version in order:
                    runs[version].append(play(trees[version], workload))
            correct = " vs ".join(
                f"{runs[v][-1]['correct']}/{runs[v][-1]['tasks']}" for v in ("baseline", "head")
            )
            for label, pick in (("median", statistics.median), ("min", min)):
                print(summary(f"{workload} {label}", runs, pick) + f"  {correct}", flush=True)

        if "db-sqlite" in args.only:
            defences(trees["head"], max(2 * args.rounds, 8))
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


def summary(name: str, runs: dict[str, list[dict]], pick: Callable) -> str:
    """One row: `pick` (median or min) over rounds of wall and CPU (with children), in ms."""
    value = {
        (version, key): pick(
            run["wall"] if key == "wall" else run["cpu"] + run["children"] for run in runs[version]
        )
        * 1000
        for version in runs
        for key in ("wall", "cpu")
    }
    return (
        f"{name:<19} {value['baseline', 'wall']:>10.1f} {value['head', 'wall']:>10.1f}"
        f" {value['head', 'wall'] / value['baseline', 'wall']:>6.2f}"
        f" {value['baseline', 'cpu']:>9.1f} {value['head', 'cpu']:>9.1f}"
        f" {value['head', 'cpu'] / value['baseline', 'cpu']:>6.2f}"
    )


@contextlib.contextmanager
def busy(count: int) -> Iterator[None]:
    """`count` processes spinning on a core each, for the length of the block."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def defences(tree: Path, rounds: int) -> None:
    """Print HEAD's embedded back-end with its per-statement defences on against off."""
    done = subprocess.run(
        [sys.executable, "-c", DEFENCES, str(WORKLOADS["db-sqlite"][2]), str(rounds)],
        capture_output=True,
        text=True,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"the defences run failed:\n{done.stderr[-2000:]}")
    cpu = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"SQLite on HEAD, statement guard and authorizer on vs off ({rounds} rounds, CPU ms"
        f" per task): {cpu['on'] * 1000:.2f} vs {cpu['off'] * 1000:.2f},"
        f" ratio {cpu['on'] / cpu['off']:.2f}"
    )


if __name__ == "__main__":
    main()
