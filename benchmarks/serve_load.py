"""Concurrent OpenEnv sessions against `lifelong-gym serve`: episodes, latency, memory.

For each session count N the script starts `lifelong-gym serve --max-sessions N` on a
free loopback port (a fresh server each time) and drives N WebSocket sessions at once from
this one process (asyncio, the bundled `LifelongEnvClient`). Every session plays
`--episodes` oracle episodes on its own environment, one after another, on task indices
spread over the task set. It prints, per N: episodes completed and lost (an episode is lost
when it raised or did not score the oracle's 1.0), p50 / p99 latency of `reset` and `step`
as the client saw them, CPU time per completed episode of the server and of this client (figures
that a busy machine distorts less than wall time), the server's peak RSS and its growth
per session, its peak threads and open files, and sessions per core (cores: the server's
CPU affinity).

Then the naive way, side by side: the same kind of episodes played one at a time over one
session of the same server, and in this process on one environment without any server;
the ratio is the N sessions' episodes per second over each.

`--env sqlite` (LifelongDB-v0 embedded; N = 64, 256, 1024 by default), `--env mariadb`
(`backend=mysql` on the server at `--mysql-url`; N = 64), `--env os` (LifelongOS-v0 on
Docker; N = 16). The target on SQLite: at least 256 sessions per core, no episode lost,
p99 step under 1 s.

Run from the checkout: `python -m benchmarks.serve_load` (see --help).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.arguments import parse_flag_assignments
from lifelong_gym.integrations.openenv import LifelongEnvClient, play_episode
from lifelong_gym.integrations.serving import raise_open_files_limit
from lifelong_gym.registration import make_env
from tests.integrations.openenv_server import free_port, healthy, server_process

# --env: (env id, the server's --env-arg values, default session counts)
SETUPS = {
    "sqlite": ("LifelongDB-v0", (), (64, 256, 1024)),
    "mariadb": ("LifelongDB-v0", ("backend=mysql",), (64,)),
    "os": ("LifelongOS-v0", ("pool_size=1",), (16,)),
}
TARGET_SESSIONS_PER_CORE = 256
TARGET_P99_STEP = 1.0


@dataclass
class Load:
    """What the client saw of one run: latencies in seconds, episodes by outcome."""

    resets: list[float] = field(default_factory=list)
    steps: list[float] = field(default_factory=list)
    completed: int = 0
    lost: int = 0
    errors: list[str] = field(default_factory=list)


class TimedClient(LifelongEnvClient):
    """`LifelongEnvClient` that records how long each `reset` and `step` took."""

    def __init__(self, base_url: str, load: Load):
        super().__init__(base_url=base_url, message_timeout_s=600.0)
        self._load = load

    async def _reset_async(self, **kwargs):
        start = time.perf_counter()
        result = await super()._reset_async(**kwargs)
        self._load.resets.append(time.perf_counter() - start)
        return result

    async def _step_async(self, action, **kwargs):
        start = time.perf_counter()
        result = await super()._step_async(action, **kwargs)
        self._load.steps.append(time.perf_counter() - start)
        return result


@dataclass
class ServerUsage:
    """The server's peak RSS (MiB), threads and open files while a run lasted, and its CPU
    time: of its process and its worker processes (`--workers`) together."""

    pid: int
    idle_rss: float = 0.0
    rss: float = 0.0
    threads: int = 0
    files: int = 0
    cpu: float = 0.0

    def processes(self) -> list[int]:
        """The server's process and its descendants."""
        found, index = [self.pid], 0
        while index < len(found):
            with contextlib.suppress(FileNotFoundError):  # a thread or process ended
                for task in os.listdir(f"/proc/{found[index]}/task"):
                    with open(f"/proc/{found[index]}/task/{task}/children") as children:
                        found += [int(pid) for pid in children.read().split()]
            index += 1
        return found

    def sample(self) -> None:
        """Read the processes' current figures, summed; keep the peaks."""
        rss = threads = files = cpu = 0.0
        for pid in self.processes():
            try:
                status = dict(
                    line.split(":", 1) for line in open(f"/proc/{pid}/status").read().splitlines()
                )
                files += len(os.listdir(f"/proc/{pid}/fd"))
                ticks = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[11:13]
            except FileNotFoundError:  # it ended in between
                continue
            rss += int(status["VmRSS"].split()[0]) / 1024
            threads += int(status["Threads"])
            cpu += sum(map(int, ticks)) / os.sysconf("SC_CLK_TCK")
        self.rss, self.threads = max(self.rss, rss), max(self.threads, int(threads))
        self.files, self.cpu = max(self.files, int(files)), cpu


@contextmanager
def served(env_id: str, env_args: list[str], max_sessions: int, workers: int = 1):
    """`lifelong-gym serve --max-sessions N --workers W` on a free loopback port until the
    block ends, its output passed on: (process, url)."""
    port = free_port()
    command = [sys.executable, "-m", "lifelong_gym", "serve", "--env", env_id]
    command += ["--port", str(port), "--max-sessions", str(max_sessions)]
    command += ["--workers", str(workers)]
    for arg in env_args:
        command += ["--env-arg", arg]
    url = f"http://127.0.0.1:{port}"
    with server_process(command, lambda: healthy(url), output=None) as process:
        yield process, url


async def play_sessions(url: str, agent, indices, sessions: int, episodes: int) -> Load:
    """`sessions` sessions at once, each playing `episodes` episodes in turn."""
    load = Load()

    async def session(number: int) -> None:
        played = 0
        try:
            async with TimedClient(url, load) as client:
                for episode in range(episodes):
                    index = indices[(number * episodes + episode) % len(indices)]
                    result = await play_episode(client, agent, task_index=index)
                    played += 1
                    if result["reward"] == 1.0:
                        load.completed += 1
                    else:
                        load.lost += 1
                        load.errors.append(f"scored {result['info'].get('status')}")
        except Exception as error:  # noqa: BLE001 - a failed session is a figure here
            load.lost += episodes - played
            load.errors.append(f"{type(error).__name__}: {error}")

    await asyncio.gather(*(session(number) for number in range(sessions)))
    return load


def sampled(usage: ServerUsage, work):
    """Run `work()` while a thread samples the server's usage every 0.2 s; its result."""
    done = threading.Event()

    def sampler() -> None:
        while not done.wait(0.2):
            usage.sample()

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    try:
        return work()
    finally:
        done.set()
        thread.join()
        usage.sample()


def in_process_rate(env_id: str, env_kwargs: dict, agent, indices, episodes: int) -> float:
    """Episodes per second of one environment in this process, no server: the floor."""
    from lifelong_gym.session import Role, Session

    env = make_env(env_id, env_kwargs).unwrapped
    start = time.perf_counter()
    try:
        for number in range(episodes):
            text, info = env.reset(options={"task_index": indices[number % len(indices)]})
            session = Session(task_index=info["task_index"], skills=info.get("skills", []))
            session.add(Role.USER, text)
            done = False
            while not done:
                reply = agent.act(session)
                session.add(Role.AGENT, reply)
                text, _reward, terminated, truncated, _info = env.step(reply)
                done = terminated or truncated
                if text:
                    session.add(Role.USER, text)
    finally:
        env.close()
    return episodes / (time.perf_counter() - start)


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass
class Run:
    """One run of N sessions: what the client saw, what the server used, how long it took."""

    sessions: int
    load: Load
    usage: ServerUsage
    cores: int
    wall: float
    client_cpu: float

    @property
    def rate(self) -> float:
        """Episodes completed per second."""
        return self.load.completed / self.wall

    def row(self) -> str:
        """The run as a line of the table."""
        load, usage = self.load, self.usage
        played = max(1, load.completed)
        cpu = [usage.cpu / played * 1e3, self.client_cpu / played * 1e3]  # ms per episode
        latency = [
            f"{percentile(values, 0.5) * 1e3:8.1f}/{percentile(values, 0.99) * 1e3:<8.1f}"
            for values in (load.resets, load.steps)
        ]
        return (
            f"{self.sessions:5d} {load.completed:9d} {load.lost:5d} {latency[0]} {latency[1]}"
            f" {self.rate:10.1f} {cpu[0]:7.1f} {cpu[1]:7.1f}"
            f" {usage.rss:7.0f} {(usage.rss - usage.idle_rss) * 1024 / self.sessions:8.0f}"
            f" {usage.threads:7d} {usage.files:6d} {self.sessions / self.cores:9.0f}"
        )

    def meets_target(self) -> bool:
        """No episode lost and p99 step under the target."""
        return self.load.lost == 0 and percentile(self.load.steps, 0.99) < TARGET_P99_STEP


HEADER = (
    "    N  episodes  lost  reset p50/p99 ms   step p50/p99 ms  episodes/s  CPU ms/episode"
    "  RSS MiB  KiB/session  threads  files  per core\n"
    "                                                                     server  client"
)


def measure(
    env_id: str, env_args: list[str], sessions: int, agent, indices, episodes: int, workers: int
) -> Run:
    """`sessions` sessions at once against a fresh server, each playing `episodes` episodes."""
    with served(env_id, env_args, sessions, workers) as (process, url):
        usage = ServerUsage(process.pid)
        usage.sample()
        usage.idle_rss, usage.rss = usage.rss, 0.0
        idle_cpu = usage.cpu
        wall, cpu = time.perf_counter(), time.process_time()
        load = sampled(
            usage, lambda: asyncio.run(play_sessions(url, agent, indices, sessions, episodes))
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        usage.cpu -= idle_cpu
        cores = len(os.sched_getaffinity(process.pid))
    return Run(sessions, load, usage, cores, wall, cpu)


def main() -> None:
    """Print the load table for each session count, and the naive way beside it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=sorted(SETUPS), default="sqlite")
    parser.add_argument("--sessions", type=int, nargs="+", help="session counts (per --env)")
    parser.add_argument("--episodes", type=int, default=4, help="episodes per session")
    parser.add_argument(
        "--workers", type=int, default=1, help="the server's worker processes (serve --workers)"
    )
    parser.add_argument("--mysql-url", default="mysql://root@127.0.0.1:3306")
    parser.add_argument(
        "--naive-episodes", type=int, default=200, help="episodes of each naive measurement"
    )
    args = parser.parse_args()
    env_id, env_args, default_counts = SETUPS[args.env]
    env_args = [*env_args, *([f"url={args.mysql_url}"] if args.env == "mariadb" else [])]
    counts = args.sessions or default_counts
    raise_open_files_limit(max(counts))  # this client holds a socket a session too
    tasks = gym.make(env_id).unwrapped.tasks  # the oracle's copy of the task set
    agent = OracleAgent(tasks)
    indices = list(tasks.indices)
    print(
        f"{env_id} {' '.join(env_args)}: {args.episodes} oracle episodes per session, "
        f"{args.workers} server worker(s); "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start"
    )
    print(HEADER)
    runs = []
    for count in counts:
        run = measure(env_id, env_args, count, agent, indices, args.episodes, args.workers)
        runs.append(run)
        print(run.row())
        for error, times in collections.Counter(run.load.errors).most_common(5):
            print(f"      {times} x {error}")
        if count / run.cores >= TARGET_SESSIONS_PER_CORE:
            print(
                f"      target ({TARGET_SESSIONS_PER_CORE} sessions per core, none lost, "
                f"p99 step < {TARGET_P99_STEP:g} s): {'met' if run.meets_target() else 'NOT met'}"
            )
    naive = args.naive_episodes
    one_session = measure(env_id, env_args, 1, agent, indices, naive, 1)
    local_rate = in_process_rate(
        env_id, parse_flag_assignments("--env-arg", env_args), agent, indices, naive
    )
    print(
        f"naive ({naive} episodes): one session at a time over the server "
        f"{one_session.rate:.1f} episodes/s, in this process without a server "
        f"{local_rate:.1f} episodes/s"
    )
    for run in runs:
        print(
            f"  N={run.sessions}: {run.rate / one_session.rate:.1f}x one session at a time, "
            f"{run.rate / local_rate:.2f}x in process; load average {os.getloadavg()[0]:.2f}"
        )


if __name__ == "__main__":
    main()
