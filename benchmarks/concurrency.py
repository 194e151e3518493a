"""Tasks per second of a lifelong DB run against a served model, by tasks in flight (K).

The model is an OpenAI-compatible server on loopback, in a process of its own, that
answers every request after a fixed delay (as a served LLM takes its time) with the
reference solution's next step, so the sessions are real DB sessions. K=1 is one session
at a time; with K the runner sends the turns of K sessions at once. Runs are interleaved
(K=1, K=8, K=1, ...); the table gives the median and best of each, and the runner's CPU
time per task (the runner's process only; the server's is not counted).

Run from the checkout: `python -m benchmarks.concurrency` (see --help).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import LanguageModelAgent, OpenAIModelConfig, create_model
from lifelong_gym.run import Runner
from lifelong_gym.session import ChatMessage, Role
from tests.agents.chat_server import ChatServer

ROLES = {"user": Role.USER, "assistant": Role.AGENT}


def oracle_replies(tasks: int, delay: float) -> Callable[[dict], str]:
    """The reply function of a server that answers the first `tasks` tasks as the oracle."""
    env = gym.make("LifelongDB-v0")
    by_prompt = {}
    for index in env.unwrapped.tasks.order[:tasks]:
        prompt, _info = env.reset(options={"task_index": index})
        by_prompt[prompt] = env.unwrapped.tasks[index]
    env.close()

    def reply(request: dict) -> str:
        time.sleep(delay)
        messages = request["messages"]
        history = [ChatMessage(role=ROLES[m["role"]], content=m["content"]) for m in messages]
        return by_prompt[messages[0]["content"]].oracle_reply(history)

    return reply


def serve(reply: Callable[[dict], str], address: Connection) -> None:
    """Serve `reply` until the pipe closes (in a process of its own, as a model server is)."""
    server = ChatServer()
    server.default = reply
    address.send(server.base_url)
    try:
        address.recv()
    except EOFError:
        pass
    server.close()


def run_once(base_url: str, tasks: int, concurrency: int) -> tuple[float, float, float]:
    """One run of `tasks` tasks: (tasks per second, CPU ms per task, success rate)."""
    config = OpenAIModelConfig(
        name="served", base_url=base_url, model="served", concurrency=concurrency
    )
    model = create_model(config)
    env = gym.make("LifelongDB-v0")
    try:
        with tempfile.TemporaryDirectory() as folder:
            runner = Runner(
                env,
                LanguageModelAgent(model),
                [],
                output=Path(folder) / "run",
                max_tasks=tasks,
                progress=False,
                plots=False,
                concurrency=concurrency,
            )
            wall, cpu = time.perf_counter(), time.process_time()
            metrics = runner.run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        env.close()
        model.close()
    return tasks / wall, cpu / tasks * 1000, metrics.success_rate


def main() -> None:
    """Print tasks/s for each K, side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=48)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per model reply")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--repeats", type=int, default=3, help="runs per K, interleaved")
    args = parser.parse_args()
    ours, theirs = multiprocessing.get_context("fork").Pipe()
    server = multiprocessing.get_context("fork").Process(
        target=serve, args=(oracle_replies(args.tasks, args.delay), theirs), daemon=True
    )
    server.start()
    base_url = ours.recv()
    results: dict[int, list[tuple[float, float, float]]] = {k: [] for k in args.concurrency}
    try:
        for _ in range(args.repeats):
            for k in args.concurrency:
                results[k].append(run_once(base_url, args.tasks, k))
    finally:
        ours.send("stop")
        server.join(10)
    print(
        f"{args.tasks} tasks of the shipped DB set (SQLite), a served model answering after "
        f"{args.delay:.2f} s, {args.repeats} interleaved runs per K"
    )
    print("    K   tasks/s median    best   speed-up   CPU ms/task   success")
    base = statistics.median(rate for rate, _cpu, _ok in results[args.concurrency[0]])
    for k, runs in results.items():
        rates = [rate for rate, _cpu, _ok in runs]
        median = statistics.median(rates)
        cpu = statistics.median(c for _rate, c, _ok in runs)
        print(
            f"{k:5d}   {median:14.2f} {max(rates):7.2f} {median / base:9.1f}x "
            f"{cpu:13.1f} {runs[-1][2]:9.1%}"
        )


if __name__ == "__main__":
    main()
