"""A synthetic learner with a planted rule, to prove that the probe measures are right.

It knows a skill once `k` stream tasks of it have finished, and forgets it again once `m`
stream tasks have finished since its last one; it solves a task (of the stream or a
probe) when it knows all the task's skills, replying as the oracle does, and otherwise
replies with text that is no action. What it has seen is a callback's state, so a run
killed and resumed goes on with exactly what it knew.

`python -m tests.run.planted OUTPUT STREAM PROBES ORDER SEED EVERY DELAY [KILL]` runs it
(the kill-and-resume tests kill that process; with KILL it kills itself with SIGKILL as
its KILL-th probe episode ends, before the episode is recorded).
"""

from __future__ import annotations

import os
import signal
import sys
import time

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import Agent, OracleAgent
from lifelong_gym.run import Callback, Runner
from lifelong_gym.run.probes import Probes

K, M = 2, 4
UNKNOWN = "I have not learnt this yet."


class PlantedLearner(Agent, Callback):
    """The agent and, as a callback, its memory: the skills of finished stream tasks."""

    state_attributes = ("counts", "last", "finished")

    def __init__(self, tasks, k: int = K, m: int = M, delay: float = 0.0, kill: int = 0):
        self.oracle = OracleAgent(tasks)
        self.k, self.m, self.delay = k, m, delay
        self.kill = kill  # end the process at this probe episode (0: never)
        self.counts: dict[str, int] = {}  # stream tasks finished, per skill
        self.last: dict[str, int] = {}  # the number of the skill's last finished one
        self.finished = 0  # stream tasks finished

    def use_probe_tasks(self, tasks) -> None:
        self.oracle.use_probe_tasks(tasks)

    def knows(self, skill: str) -> bool:
        seen = self.counts.get(skill, 0) >= self.k
        return seen and self.finished - self.last[skill] < self.m

    def act(self, session):
        if all(self.knows(skill) for skill in session.skills):
            return self.oracle.act(session)
        return UNKNOWN

    def on_environment_interact(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        time.sleep(self.delay)  # so that kills land inside the run

    def on_environment_complete(
        self, run, state, control, *, agent, env, session, history, **kwargs
    ):
        if session.probe:
            self.kill -= 1
            if self.kill == 0:
                os.kill(os.getpid(), signal.SIGKILL)
            return
        self.finished += 1
        for skill in session.skills:
            self.counts[skill] = self.counts.get(skill, 0) + 1
            self.last[skill] = self.finished


def planted_runner(output, stream, probes, order, seed, every, delay=0.0, concurrency=1) -> Runner:
    """A runner of the planted learner over the `stream` task file, probed on `probes`
    (both `concurrency` tasks at a time)."""
    env = gym.make("LifelongDB-v0", tasks=str(stream))
    probe_env = gym.make("LifelongDB-v0", tasks=str(probes))
    learner = PlantedLearner(env.unwrapped.tasks, delay=delay)
    return Runner(
        env,
        learner,
        [learner],
        output=output,
        order=order,
        seed=seed,
        progress=False,
        plots=False,
        concurrency=concurrency,
        probes=Probes(probe_env, every, concurrency),
    )


if __name__ == "__main__":
    out, stream, probes, order, seed, every, delay, *kill = sys.argv[1:]
    runner = planted_runner(out, stream, probes, order, int(seed), int(every), float(delay))
    runner.agent.kill = int(kill[0]) if kill else 0
    runner.run()
