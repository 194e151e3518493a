"""Fault tests strike at a known point of a run, never at a moment chosen by a timer.

`SigtermAt` sends the run's own process SIGTERM as a given task starts.

`strike_run` plays a stream with the oracle and, when the agent is asked for the first
reply of the task at one position, runs `fault` (kill a server, a container); after that
task has ended, `repair` (start it again) runs from a callback. Then it resumes the run in
the same folder to the end of the stream, and checks the contract of docs/security.md
("Faults"): the task in flight ends `task_environment_error`, the tasks after it score,
the metrics count the fault's cost, and nothing is counted twice.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym

from lifelong_gym.agents import OracleAgent
from lifelong_gym.metrics import LifelongMetrics
from lifelong_gym.orders import task_order
from lifelong_gym.results.folder import read_sessions
from lifelong_gym.run import Callback, Runner
from lifelong_gym.session import Session, SessionStatus

ERROR = SessionStatus.TASK_ENVIRONMENT_ERROR.value


class StrikingOracle(OracleAgent):
    """The oracle, which runs `fault` once, before its first reply to task `task_index`."""

    def __init__(self, tasks, task_index: int, fault: Callable[[], None]):
        super().__init__(tasks)
        self.task_index, self.fault = task_index, fault
        self.struck = False

    def act(self, session: Session) -> str:
        if session.task_index == self.task_index and not self.struck:
            self.struck = True
            self.fault()
        return super().act(session)


class AfterTask(Callback):
    """Runs `action` once the session of task `task_index` is complete."""

    def __init__(self, task_index: int, action: Callable[[], None]):
        self.task_index, self.action = task_index, action

    def on_environment_complete(self, run, state, control, *, session, **kwargs):
        if session.task_index == self.task_index:
            self.action()


class SigtermAt(Callback):
    """Sends its own process SIGTERM `times` times as task `task_index` starts, once: it
    makes the file `mark` then, and never strikes while that file exists (a resumed run
    plays a task again whose session was lost). For `lifelong-gym run --callback
    tests.fault_points.SigtermAt:task_index=N,times=T,mark=PATH`."""

    def __init__(self, task_index: int, times: int, mark: str):
        self.task_index, self.times, self.mark = task_index, times, Path(mark)

    def on_environment_reset(self, run, state, control, *, session, **kwargs):
        if session.task_index == self.task_index and not self.mark.exists():
            self.mark.touch()
            for _ in range(self.times):
                os.kill(os.getpid(), signal.SIGTERM)


class BrokenWhile(Callback):
    """A bug in a user's callback: it raises as the task at `position` of the stream
    completes, while the file `broken` exists (deleting it is the fix). For `lifelong-gym run
    --callback tests.fault_points.BrokenWhile:position=N,broken=PATH` (one task at a time)."""

    def __init__(self, position: int, broken: str):
        self.position, self.broken = position, Path(broken)

    def on_environment_complete(self, run, state, control, *, history, **kwargs):
        if len(history) == self.position and self.broken.exists():
            raise RuntimeError("a bug in the user's callback")


def strike_run(
    env: gym.Env,
    output: Path,
    *,
    position: int,
    tasks: int,
    fault: Callable[[], None],
    repair: Callable[[], None],
) -> Session:
    """Run `position + 2` tasks with the fault at `position`, then resume to `tasks` tasks,
    and check that the fault cost that task and no other.

    Returns the failed session, for the test to check what its agent was told.
    """
    stream = task_order(env.unwrapped.tasks, "sample", None)
    struck = stream[position]
    agent = StrikingOracle(env.unwrapped.tasks, struck, fault)
    callbacks = [AfterTask(struck, repair)]
    settings = {"output": output, "progress": False, "plots": False}
    Runner(env, agent, callbacks, max_tasks=position + 2, **settings).run()
    assert agent.struck, "the fault never ran"
    metrics = Runner(env, agent, callbacks, max_tasks=tasks, **settings).run()
    sessions, _, _ = read_sessions(output / "sessions.jsonl")
    assert [s.task_index for s in sessions] == stream[:tasks], "a task missing or twice"
    return one_task_lost(sessions, metrics, position)


def one_task_lost(sessions: list[Session], metrics: LifelongMetrics, position: int) -> Session:
    """Assert that the task at `position` ended `task_environment_error`, every other task
    completed and scored (the oracle's replies are correct), and the metrics count the one
    failure. Returns the failed session."""
    expected = ["completed"] * len(sessions)
    expected[position] = ERROR
    assert [s.status.value for s in sessions] == expected
    others = [s.outcome.value for i, s in enumerate(sessions) if i != position]
    assert others == ["correct"] * (len(sessions) - 1)
    assert metrics.status_counts[ERROR] == 1 and metrics.correct == len(sessions) - 1
    return sessions[position]
