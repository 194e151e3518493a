"""LifelongOS-v0 speed against the reference's way, side by side in one run.

- reset: a warm pooled container vs `docker run` + remove per task;
- action: a command written to the persistent shell vs `exec_run` per command;
- 100 shipped tasks replayed by the oracle: the environment vs the reference's loop
  (`docker run`, `exec_run` for the init, each action and the evaluation, then remove),
  on the Docker and the OCI sandbox, the three taking turns by blocks of 10 tasks;
- the engine's floor: bare containers started and removed, three at a time;
- fresh sandboxes (a container with its two shells, created and removed) per second:
  the OCI sandbox vs the Docker sandbox, interleaved;
- `restrict_commands=True` against off: reset and a trivial action on both sandboxes, the
  two taking turns task by task (`--only restriction` measures just this);
- the load average at the start and at the end.

Run: python benchmarks/os_env.py [--resets 40] [--actions 200] [--tasks 100] [--fresh 20]
[--only restriction]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym

import lifelong_gym  # noqa: F401 (registers the ids)
from lifelong_gym.agents import OracleAgent
from lifelong_gym.docker_engine import docker_client
from lifelong_gym.envs.os.backends.docker import ContainerPool
from lifelong_gym.envs.os.backends.oci.sandbox import OciPool
from lifelong_gym.envs.os.backends.shell import Mode
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.tasks import OSTask, ScriptItem, load_os_tasks
from lifelong_gym.tasks import TaskSet

# The reference's containers have no toolset: PID 1 sleeps with the image's own programs.
REFERENCE_KEEPER = "trap '' TERM INT HUP; while :; do sleep 3600 & wait; done"


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 of `samples`, in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def reference_container(client):
    """A container started the reference's way (one `docker run` per task)."""
    return client.containers.run(
        DEFAULT_IMAGE, ["bash", "-c", REFERENCE_KEEPER], detach=True, network_mode="none"
    )


def bench_reset(client, count: int) -> tuple[list[float], list[float]]:
    """Reset latency: the pooled environment vs `docker run` + remove."""
    trivial = TaskSet(
        [
            OSTask(
                index=0,
                instruction="Do nothing.",
                initialization=ScriptItem(script="mkdir -p /srv/x"),
                evaluation=ScriptItem(script="true"),
            )
        ]
    )
    env = gym.make("LifelongOS-v0", tasks=trivial, pool_size=3)
    pooled = []
    for _ in range(count):
        time.sleep(0.4)  # an agent thinks between tasks; the pool refills meanwhile
        start = time.perf_counter()
        env.reset(options={"task_index": 0})
        pooled.append(time.perf_counter() - start)
        env.step("Act: finish")
    env.close()
    reference = []
    for _ in range(count):
        start = time.perf_counter()
        container = reference_container(client)
        container.remove(force=True)
        reference.append(time.perf_counter() - start)
    return pooled, reference


def bench_action(count: int) -> tuple[list[float], list[float]]:
    """A trivial command: the persistent shell vs `exec_run`."""
    pool = ContainerPool(DEFAULT_IMAGE, size=1)
    sandbox = pool.acquire()
    shell, exec_run = [], []
    for _ in range(count):
        start = time.perf_counter()
        sandbox.run("true", Mode.PERSISTENT, timeout=10, limit=1000)
        shell.append(time.perf_counter() - start)
        start = time.perf_counter()
        sandbox.container.docker.exec_run(["bash", "-c", "true"])
        exec_run.append(time.perf_counter() - start)
    pool.close()
    return shell, exec_run


def solve_in_env(env, agent: OracleAgent, indices: list[int]) -> int:
    """Replay the oracle on `indices` in the environment; return how many it solved."""
    solved = 0
    for index in indices:
        env.reset(options={"task_index": index})
        done = False
        while not done:
            _, reward, terminated, truncated, _ = env.step(agent.act(env.unwrapped.session))
            done = terminated or truncated
        solved += reward == 1.0
    return solved


def solve_the_reference_way(client, tasks: TaskSet, indices: list[int]) -> int:
    """The reference's loop: `docker run`, `exec_run` for the init, the solution and the
    evaluation, then remove; return how many it solved."""
    solved = 0
    for index in indices:
        task = tasks[index]
        container = reference_container(client)
        for item in (task.initialization, task.ground_truth):
            container.exec_run(["bash", "-c", item.script])
        solved += container.exec_run(["bash", "-c", task.evaluation.script]).exit_code == 0
        container.remove(force=True)
    return solved


def bench_oracle(client, count: int, block: int = 10) -> dict[str, tuple[float, int]]:
    """Seconds and tasks solved for the first `count` oracle tasks: the OCI sandbox, the
    Docker sandbox and the reference's loop, taking turns by blocks of `block` tasks so
    that the machine's load falls on the three alike."""
    envs = {
        kind: gym.make("LifelongOS-v0", pool_size=3, sandbox=kind) for kind in ("oci", "docker")
    }
    tasks = envs["oci"].unwrapped.tasks
    agent = OracleAgent(tasks)
    indices = tasks.order[:count]
    totals = {kind: [0.0, 0] for kind in ("oci", "docker", "reference")}
    try:
        for start in range(0, count, block):
            chunk = indices[start : start + block]
            for kind, total in totals.items():
                began = time.perf_counter()
                if kind == "reference":
                    total[1] += solve_the_reference_way(client, tasks, chunk)
                else:
                    total[1] += solve_in_env(envs[kind], agent, chunk)
                total[0] += time.perf_counter() - began
    finally:
        for env in envs.values():
            env.close()
    return {kind: (seconds, int(solved)) for kind, (seconds, solved) in totals.items()}


def bench_engine_floor(client, count: int, workers: int = 3) -> float:
    """Seconds to start and remove `count` bare containers, `workers` at a time: no design
    with a fresh container per task can run `count` tasks faster on this engine."""
    from concurrent.futures import ThreadPoolExecutor

    def one(_: int) -> None:
        reference_container(client).remove(force=True)

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as executor:
        list(executor.map(one, range(count)))
    return time.perf_counter() - start


def bench_fresh(count: int) -> dict[str, list[float]]:
    """Seconds per fresh sandbox (created with its shells, then removed), OCI and Docker
    interleaved so that the machine's load falls on both alike."""
    pools = {"oci": OciPool(size=1), "docker": ContainerPool(DEFAULT_IMAGE, size=1)}
    times: dict[str, list[float]] = {kind: [] for kind in pools}
    try:
        for _ in range(count):
            for kind, pool in pools.items():
                start = time.perf_counter()
                pool.create().remove()
                times[kind].append(time.perf_counter() - start)
    finally:
        for pool in pools.values():
            pool.close()
    return times


def bench_restriction(kind: str, count: int) -> dict[bool, tuple[list[float], list[float]]]:
    """Reset and trivial-action seconds on the sandbox `kind`, without and with
    `restrict_commands`, the two environments taking turns task by task."""
    envs = {
        restrict: gym.make("LifelongOS-v0", pool_size=3, sandbox=kind, restrict_commands=restrict)
        for restrict in (False, True)
    }
    times: dict[bool, tuple[list[float], list[float]]] = {r: ([], []) for r in envs}
    try:
        for _ in range(count):
            for restrict, env in envs.items():
                time.sleep(0.4)  # an agent thinks between tasks; the pool refills meanwhile
                start = time.perf_counter()
                env.reset(options={"task_index": 0})
                times[restrict][0].append(time.perf_counter() - start)
                start = time.perf_counter()
                env.step("Act: bash\n\n```bash\nls /root\n```")
                times[restrict][1].append(time.perf_counter() - start)
                env.step("Act: finish")
    finally:
        for env in envs.values():
            env.close()
    return times


def print_restriction(count: int) -> None:
    """`restrict_commands=True` against off, on both sandboxes, side by side."""
    print(f"{'restrict_commands':<34}{'off':>16}{'on':>16}{'ratio':>10}")
    for kind in ("docker", "oci"):
        times = bench_restriction(kind, count)
        for index, what in enumerate(("reset", "ls action")):
            for level, pick in (("p50", 0), ("p95", 1)):
                off = percentiles(times[False][index])[pick]
                on = percentiles(times[True][index])[pick]
                name = f"{kind} {what} {level} (ms)"
                print(f"{name:<34}{off:>16.2f}{on:>16.2f}{on / off:>9.2f}x")


def print_load(load_before: tuple[float, float, float]) -> None:
    """The load average at the start and now."""
    loads = [f"{a:.1f}/{b:.1f}/{c:.1f}" for a, b, c in (load_before, os.getloadavg())]
    print(f"load average (1/5/15 min) at the start: {loads[0]}, at the end: {loads[1]}")


def main() -> None:
    """Run the measurements and print them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=40)
    parser.add_argument("--actions", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--fresh", type=int, default=20)
    parser.add_argument("--only", choices=["restriction"], default=None)
    args = parser.parse_args()
    client = docker_client()
    load_os_tasks()  # fail early on a broken install
    load_before = os.getloadavg()
    if args.only == "restriction":
        print_restriction(args.resets)
        print_load(load_before)
        return

    pooled, reference = bench_reset(client, args.resets)
    shell, exec_run = bench_action(args.actions)
    oracle = bench_oracle(client, args.tasks)
    (ours, solved), (theirs, reference_solved) = oracle["docker"], oracle["reference"]
    oci_seconds, oci_solved = oracle["oci"]
    floor = bench_engine_floor(client, args.tasks)
    fresh = bench_fresh(args.fresh)

    print(f"{'measure':<34}{'lifelong-gym':>16}{'reference way':>16}{'ratio':>10}")
    for name, mine, base in (
        ("reset p50 (ms)", percentiles(pooled)[0], percentiles(reference)[0]),
        ("reset p95 (ms)", percentiles(pooled)[1], percentiles(reference)[1]),
        ("trivial action p50 (ms)", percentiles(shell)[0], percentiles(exec_run)[0]),
        ("trivial action p95 (ms)", percentiles(shell)[1], percentiles(exec_run)[1]),
        (f"{args.tasks} oracle tasks (s)", ours, theirs),
    ):
        print(f"{name:<34}{mine:>16.2f}{base:>16.2f}{base / mine:>9.1f}x")
    print(f"oracle solved: {solved}/{args.tasks} (reference loop: {reference_solved})")
    print(
        f"engine floor: starting and removing {args.tasks} bare containers, 3 at a time, "
        f"takes {floor:.2f} s ({args.tasks / floor:.1f} containers/s)"
    )
    print(f"\n{'OCI sandbox vs':<34}{'OCI':>16}{'other':>16}{'ratio':>10}")
    for kind in ("min", "median"):
        pick = min if kind == "min" else statistics.median
        oci, docker = pick(fresh["oci"]), pick(fresh["docker"])
        name = f"fresh sandboxes/s, {kind} (Docker)"
        print(f"{name:<34}{1 / oci:>16.2f}{1 / docker:>16.2f}{docker / oci:>9.1f}x")
    for name, other in (("Docker sandbox", ours), ("reference way", theirs)):
        label = f"{args.tasks} oracle tasks (s) ({name})"
        print(f"{label:<34}{oci_seconds:>16.2f}{other:>16.2f}{other / oci_seconds:>9.1f}x")
    print(f"OCI oracle solved: {oci_solved}/{args.tasks}")
    print()
    print_restriction(args.resets)
    print_load(load_before)


if __name__ == "__main__":
    main()
