"""What the runner costs: per-task overhead against a plain reset/step loop, and resume time.

Runs `--tasks-count` tasks (default 1,000) of the SQLite DB environment with a trivial
agent (it answers at once), first in a plain Gymnasium loop, then through `Runner` with
snapshots on disk, and prints the overhead per task. Then it times resuming a finished
run of `--resume-count` sessions (default 10,000) against running those tasks again.

    python benchmarks/runner_overhead.py [--tasks FILE]

The task file defaults to AgentBench's `dbbench/standard.jsonl` in ../shared/external;
its tasks are repeated under new indices to reach the counts.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium as gym

from lifelong_gym.agents import Agent
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.run import Callback, Runner
from lifelong_gym.session import Session
from lifelong_gym.tasks import TaskSet

ANSWER = "Action: Answer\nFinal Answer: []"


class AnswerAtOnce(Agent):
    """Answers every task with an empty result on its first turn."""

    def act(self, session: Session) -> str:
        """The same reply every time."""
        return ANSWER


def default_tasks() -> Path:
    """AgentBench's DB tasks in the shared folder beside the repository."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared/external/agentbench/data/dbbench/standard.jsonl"
        if candidate.is_file():
            return candidate
    raise SystemExit("no task file found; pass --tasks FILE (a DB task file)")


def repeated(tasks: TaskSet, count: int) -> TaskSet:
    """`count` tasks: the set's tasks over and over, under new indices."""
    base = [tasks[i] for i in tasks.order]
    return TaskSet(
        [base[i % len(base)].model_copy(update={"index": i}) for i in range(count)],
        name=f"{tasks.name} x{count}",
    )


def plain_loop(env: gym.Env, order: list[int]) -> float:
    """Seconds for reset/step over the tasks, the way a user's own loop does it."""
    agent = AnswerAtOnce()
    start = time.perf_counter()
    for index in order:
        env.reset(options={"task_index": index})
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(agent.act(env.unwrapped.session))
            done = terminated or truncated
    return time.perf_counter() - start


class CountSessions(Callback):
    """A callback whose state changes every session (so every session rewrites state.json)."""

    state_attributes = ("sessions",)

    def __init__(self):
        self.sessions = 0

    def on_environment_complete(self, run, state, control, **kwargs):
        """Count."""
        self.sessions += 1


def runner_loop(env: gym.Env, output: Path, count: int, callbacks=()) -> float:
    """Seconds for the runner over the same tasks, snapshots included."""
    runner = Runner(
        env, AnswerAtOnce(), callbacks, output=output, max_tasks=count, progress=False, plots=False
    )
    start = time.perf_counter()
    runner.run()
    return time.perf_counter() - start


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=None, help="a DB task file")
    parser.add_argument("--tasks-count", type=int, default=1_000)
    parser.add_argument("--resume-count", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5, help="best of this many")
    args = parser.parse_args()
    source = load_db_tasks(str(args.tasks or default_tasks()))
    tasks = repeated(source, max(args.tasks_count, args.resume_count))
    env = gym.make("LifelongDB-v0", tasks=tasks)
    order = tasks.order[: args.tasks_count]
    with tempfile.TemporaryDirectory() as scratch:
        plain, run, stateful = [], [], []
        for repeat in range(args.repeats):  # interleaved, so that load changes hit all three
            plain.append(plain_loop(env, order))
            run.append(runner_loop(env, Path(scratch) / f"run{repeat}", args.tasks_count))
            output = Path(scratch) / f"stateful{repeat}"
            stateful.append(runner_loop(env, output, args.tasks_count, [CountSessions()]))
        count = args.tasks_count
        print(f"{count} tasks, SQLite DB environment, trivial agent, best of {args.repeats}")
        base = min(plain)
        for label, seconds in [
            ("plain reset/step loop", base),
            ("runner with snapshots", min(run)),
            ("runner + stateful callback", min(stateful)),
        ]:
            extra = (seconds - base) / count * 1e3
            print(
                f"  {label:<27} {seconds:7.3f} s  {seconds / count * 1e3:6.3f} ms/task"
                f"  overhead {extra:+6.3f} ms/task  ({seconds / base:.2f}x)"
            )

        big = Path(scratch) / "big"
        first = runner_loop(env, big, args.resume_count)
        resume = runner_loop(env, big, args.resume_count)
        print(f"{args.resume_count} finished sessions")
        print(f"  running them           {first:8.3f} s")
        print(
            f"  resuming the run       {resume:8.3f} s  (load, check, metrics; "
            f"{first / resume:.0f}x faster than running again)"
        )
    env.close()


if __name__ == "__main__":
    main()
