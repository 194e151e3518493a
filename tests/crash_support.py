"""The CLI's crash tests: deterministic, stateful, slowed-down callbacks, and the killer."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

from lifelong_gym.results.folder import read_sessions
from lifelong_gym.run import Callback
from lifelong_gym.session import EvaluationOutcome


class Saboteur(Callback):
    """Ends every task whose index is divisible by `every` at once; paces the run.

    Its state (how many sessions it saw, which it ended) must survive any number of kills.
    """

    state_attributes = ("seen", "ended")

    def __init__(self, every: int = 3, delay: float = 0.0):
        self.every, self.delay = every, delay
        self.seen = 0
        self.ended: list[int] = []

    def on_environment_reset(self, run, state, control, *, agent, env, session, history, **kwargs):
        self.seen += 1
        if session.task_index % self.every == 0:
            self.ended.append(session.task_index)
            control.end_session = True

    def on_environment_interact(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        time.sleep(self.delay)  # so that kills land inside the run, not only at start-up


class Pacer(Callback):
    """Paces the run; writes into each session how many finished sessions it was shown.

    Its state (the tasks solved) changes at completion only, so it resumes exactly with
    tasks in flight too.
    """

    state_attributes = ("solved",)

    def __init__(self, delay: float = 0.0):
        self.delay = delay
        self.solved: list[int] = []

    def on_environment_reset(self, run, state, control, *, agent, env, session, history, **kwargs):
        session.details["history_seen"] = len(history)

    def on_environment_interact(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        time.sleep(self.delay)

    def on_environment_complete(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        if session.outcome == EvaluationOutcome.CORRECT:
            self.solved.append(session.task_index)


def complete_lines(path: Path) -> list[bytes]:
    """The complete lines of a file (none when it is absent)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1].splitlines(keepends=True)


def kill_until_done(
    command: list[str], cwd: Path, sessions: Path, seed: int, longest_pause: float
) -> int:
    """Run `command` again and again, each time killing it (SIGKILL) at a random moment
    after it recorded a session, until a run finishes; return the number of kills.

    After every kill the record is read (never corrupt) and what was recorded before is
    still there, except at most its last line (a session whose state was not written).
    """
    rng = random.Random(seed)
    kills, previous = 0, []
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    while True:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        start = len(complete_lines(sessions))
        while process.poll() is None and len(complete_lines(sessions)) <= start:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, longest_pause))
        if process.poll() is not None:
            assert process.returncode == 0, process.stderr.read().decode()
            return kills
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stderr.close()
        kills += 1
        now = complete_lines(sessions)
        read_sessions(sessions)  # never corrupt: every complete line is a session
        kept = max(len(previous) - 1, 0)
        assert now[:kept] == previous[:kept]
        previous = now
