"""Soak: one process plays oracle episodes for a long time; memory, files and threads stay flat.

One environment, built once, plays `--tasks` oracle episodes one after another, cycling the
shipped task set (each task reset as usual). Every `--every` tasks it samples this process:
RSS (VmRSS), the RSS of its child processes (the KG store, a sandbox's runtime), open file
descriptors (/proc/self/fd), threads (Python's and the kernel's count) and the objects the
garbage collector tracks after a collection (all, and those of the project's own classes).
At the end it prints each figure's
least-squares slope per 1,000 tasks over the samples after the warm-up (the first 10% of
the tasks), and what the run left behind after `close()`: child processes still alive,
and on the server or engine the MySQL databases, accounts and connections of this process,
the containers labelled with its pid and its OCI state folders, or new graphs on a SPARQL
endpoint.

Growth, the rule: a figure grows when its fitted rise over the measured span (slope x
span) exceeds both twice the residual standard deviation of the samples about the fitted
line (noise) and a floor (4 MiB of RSS, 2 descriptors, 1 thread, 2,000 objects, 20 of the
project's own classes). The exit code is 1 on growth, on anything left, or on an
episode the oracle did not solve.

`--env sqlite` (LifelongDB-v0 embedded, 20,000 tasks by default), `--env mariadb`
(`backend=mysql` at `--mysql-url`, 2,000), `--env os` (LifelongOS-v0 on Docker, 1,000),
`--env kg` (LifelongKG-v0 on embedded Oxigraph, 5,000); `--env-arg key=value` passes more
(e.g. `--env os --env-arg sandbox=oci`, `--env kg --env-arg backend=sparql --env-arg url=...`).

Run from the checkout: `python -m benchmarks.soak --env sqlite [--tasks N] [--json FILE]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from benchmarks.soak_leftovers import descendants, leftovers_of, snapshot_before
from lifelong_gym.agents import OracleAgent
from lifelong_gym.arguments import parse_flag_assignments
from lifelong_gym.generation import progress_bar
from lifelong_gym.registration import make_env

# --env: (env id, keyword arguments, default task count)
SETUPS = {
    "sqlite": ("LifelongDB-v0", {}, 20_000),
    "mariadb": ("LifelongDB-v0", {"backend": "mysql"}, 2_000),
    "os": ("LifelongOS-v0", {}, 1_000),
    "kg": ("LifelongKG-v0", {}, 5_000),
}
WARM_UP = 0.1  # the share of the tasks left out of the fit
# figure: (unit, the floor below which a fitted rise is no growth)
FLOORS = {
    "rss": ("MiB", 4.0),
    "children_rss": ("MiB", 4.0),
    "fds": ("fds", 2.0),
    "threads": ("threads", 1.0),
    "os_threads": ("threads", 1.0),
    "objects": ("objects", 2_000.0),
    "own_objects": ("objects", 20.0),
}


@dataclass(frozen=True)
class Sample:
    """This process's figures after `tasks` tasks."""

    tasks: int
    rss: float  # MiB
    children_rss: float  # MiB, all descendant processes
    fds: int
    threads: int  # threading.active_count()
    os_threads: int  # the kernel's count, native threads too
    objects: int  # gc-tracked objects after a full collection
    own_objects: int  # those of them whose class is the project's own


def _status(pid: int | str) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as status:
        return dict(line.split(":", 1) for line in status.read().splitlines() if ":" in line)


def _rss_mib(status: dict[str, str]) -> float:
    return int(status.get("VmRSS", "0 kB").split()[0]) / 1024  # a zombie has no VmRSS


def _own_class(cls: type) -> bool:
    module = cls.__module__  # a descriptor on a few metaclasses' instances
    return isinstance(module, str) and module.startswith("lifelong_gym")


def sample(tasks: int) -> Sample:
    """Sample this process now (a full garbage collection first)."""
    gc.collect()
    objects = gc.get_objects()
    own = sum(1 for o in objects if _own_class(type(o)))
    status = _status("self")
    children = 0.0
    for pid in descendants():
        try:
            children += _rss_mib(_status(pid))
        except OSError:  # ended meanwhile
            pass
    return Sample(
        tasks=tasks,
        rss=_rss_mib(status),
        children_rss=children,
        fds=len(os.listdir("/proc/self/fd")),
        threads=threading.active_count(),
        os_threads=int(status["Threads"]),
        objects=len(objects),
        own_objects=own,
    )


@dataclass(frozen=True)
class Trend:
    """One figure's least-squares line over the samples after the warm-up."""

    figure: str
    first: float
    last: float
    slope: float  # per 1,000 tasks
    rise: float  # slope x the measured span
    noise: float  # 2 x the residual standard deviation
    floor: float

    @property
    def grows(self) -> bool:
        """Growth beyond noise: the fitted rise exceeds twice the residual std and the floor."""
        return self.rise > max(self.noise, self.floor)


def trends(samples: list[Sample], warm_up: int) -> list[Trend]:
    """Each figure's trend over the samples taken after `warm_up` tasks (at least three)."""
    kept = [s for s in samples if s.tasks >= warm_up]
    if len(kept) < 3:
        raise ValueError(f"{len(kept)} samples after the warm-up: sample more often (--every)")
    tasks = [s.tasks for s in kept]
    found = []
    for figure, (_unit, floor) in FLOORS.items():
        values = [float(getattr(s, figure)) for s in kept]
        if len(set(values)) == 1:
            slope, intercept = 0.0, values[0]
        else:
            slope, intercept = statistics.linear_regression(tasks, values)
        residuals = [v - (slope * t + intercept) for t, v in zip(tasks, values, strict=True)]
        found.append(
            Trend(
                figure=figure,
                first=values[0],
                last=values[-1],
                slope=slope * 1000,
                rise=slope * (tasks[-1] - tasks[0]),
                noise=2 * statistics.pstdev(residuals),
                floor=floor,
            )
        )
    return found


def play_episode(env, agent: OracleAgent, index: int) -> float:
    """One oracle episode on task `index`; its reward."""
    env.reset(options={"task_index": index})
    while True:
        reply = agent.act(env.unwrapped.session)
        _, reward, terminated, truncated, _ = env.step(reply)
        if terminated or truncated:
            return float(reward)


@dataclass
class Soak:
    """What one soak found: the samples, the unsolved episodes, what was left, how long."""

    env: str
    tasks: int
    samples: list[Sample] = field(default_factory=list)
    unsolved: int = 0
    leftovers: list[str] = field(default_factory=list)
    wall: float = 0.0


def soak(
    env_id: str,
    env_kwargs: dict,
    tasks: int,
    every: int,
    *,
    cycle: int | None = None,
    settle: Callable[[gym.Env], object] | None = None,
    progress: bool = False,
) -> Soak:
    """Play `tasks` oracle episodes on one environment, sampling every `every` tasks;
    after `close()`, what the run left behind. The episodes cycle through the task set,
    or through its first `cycle` tasks; `settle(env)`, when given, runs before each sample
    (to wait for an environment's background work)."""
    bar = progress_bar(tasks, f"soak {env_id}") if progress else None  # its thread stays
    before = snapshot_before(env_id, env_kwargs)
    result = Soak(env=env_id, tasks=tasks)
    start = time.perf_counter()
    env = make_env(env_id, env_kwargs)
    try:
        task_set = env.unwrapped.tasks
        agent, indices = OracleAgent(task_set), list(task_set.indices)[:cycle]
        result.samples.append(sample(0))
        for played in range(1, tasks + 1):
            if play_episode(env, agent, indices[(played - 1) % len(indices)]) != 1.0:
                result.unsolved += 1
            if played % every == 0 or played == tasks:
                if settle is not None:
                    settle(env)
                result.samples.append(sample(played))
            if bar is not None:
                bar.update()
                if played % max(1, tasks // 10) == 0:  # a line a tenth, for a log too
                    bar.write(
                        f"{played} tasks, {time.perf_counter() - start:.0f} s: {sample(played)}"
                    )
        if bar is not None:
            bar.close()
    finally:
        env.close()
        del env
        result.wall = time.perf_counter() - start
        result.leftovers = leftovers_of(before)
    return result


def table(result: Soak, found: list[Trend]) -> str:
    """The trends as a table, then what was left."""
    lines = [
        f"{'figure':<13} {'unit':<8} {'first':>10} {'last':>10} {'per 1,000':>10}"
        f" {'rise':>10} {'2 x noise':>10} {'floor':>8}  verdict"
    ]
    for trend in found:
        unit = FLOORS[trend.figure][0]
        lines.append(
            f"{trend.figure:<13} {unit:<8} {trend.first:10.1f} {trend.last:10.1f}"
            f" {trend.slope:+10.2f} {trend.rise:+10.1f} {trend.noise:10.1f} {trend.floor:8g}"
            f"  {'GROWS' if trend.grows else 'flat'}"
        )
    lines.append(f"episodes the oracle did not solve: {result.unsolved} of {result.tasks}")
    lines.append(f"left after close: {'; '.join(result.leftovers) or 'nothing'}")
    return "\n".join(lines)


def main() -> None:
    """Soak one environment, print the trends and leftovers; exit 1 on growth or leftovers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=sorted(SETUPS), default="sqlite")
    parser.add_argument("--tasks", type=int, help="tasks to play (default per --env)")
    parser.add_argument("--every", type=int, help="tasks between samples (default tasks / 100)")
    parser.add_argument("--mysql-url", default="mysql://root@127.0.0.1:3306")
    parser.add_argument("--env-arg", action="append", default=[], help="key=value, repeatable")
    parser.add_argument("--json", help="also write the samples and trends to this file")
    args = parser.parse_args()
    env_id, kwargs, default_tasks = SETUPS[args.env]
    kwargs = {**kwargs, **parse_flag_assignments("--env-arg", args.env_arg)}
    if args.env == "mariadb":
        kwargs.setdefault("url", args.mysql_url)
    tasks = args.tasks or default_tasks
    every = args.every or max(1, tasks // 100)
    print(
        f"soak {env_id} {kwargs}: {tasks} oracle tasks, a sample every {every}; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start",
        flush=True,
    )
    result = soak(env_id, kwargs, tasks, every, progress=True)
    found = trends(result.samples, int(WARM_UP * tasks))
    print(table(result, found))
    print(
        f"wall {result.wall:.0f} s ({tasks / result.wall:.1f} tasks/s); "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )
    if args.json:
        with open(args.json, "w") as out:
            record = {
                **asdict(result),
                "env_kwargs": kwargs,
                "trends": [{**asdict(t), "grows": t.grows} for t in found],
            }
            json.dump(record, out, indent=1)
    failed = any(t.grows for t in found) or result.leftovers or result.unsolved
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
