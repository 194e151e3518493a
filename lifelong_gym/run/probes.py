"""Probes: at fixed points of the stream, the agent as it is now plays a fixed probe set.

At probe points 0, N, 2N, ... (before the stream's first task, then after every N tasks)
the agent, with its memory or weights as they are, plays every task of the probe set (a
task file of the same environment). Its sessions are probes (`Session.probe`): the
methods read their memory and write nothing to it, and the sessions count nowhere in the
stream (its history, metrics, `sessions.jsonl`, costs). Each probe episode is a line of
`probes.jsonl`, appended as it ends; on resume the lines of points past the stream's
finished tasks (and a torn last line) are dropped, and a point cut short by a kill goes on
from its first missing task, so no probe point is lost or played twice. The measures
drawn from them are in `lifelong_gym.results.probe_measures` (docs/metrics.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym

from lifelong_gym.agents import Agent
from lifelong_gym.errors import RunConfigError, RunDirectoryError
from lifelong_gym.results.folder import PROBES_FILE, REPAIR
from lifelong_gym.results.probe_measures import ProbeRecord, read_probes
from lifelong_gym.run.callbacks import Callback, RunState
from lifelong_gym.run.cost import CostMeter
from lifelong_gym.run.lockstep import Lockstep
from lifelong_gym.session import Session


class Probes:
    """A run's probe set (`env`, an environment of the stream's id over the probe tasks),
    played every `every` stream tasks, and its record.

    `concurrency` K plays up to K probe tasks at once, in lockstep turns as the stream's
    (`lockstep.py`), in `env` and K-1 more environments that `close` closes: made by
    `make_env`, by default `gym.make` of `env`'s spec over its task set. The records keep
    the probe set's order whatever K is.
    """

    def __init__(
        self,
        env: gym.Env,
        every: int,
        concurrency: int = 1,
        make_env: Callable[[], gym.Env] | None = None,
    ):
        if every < 1:
            raise RunConfigError(f"--probe-every must be at least 1, got {every}")
        if concurrency < 1:
            raise RunConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.env = env
        self.every = every
        self.concurrency = concurrency
        self.make_env = make_env or (lambda: gym.make(env.spec, tasks=env.unwrapped.tasks))
        self._more_envs: list[gym.Env] = []
        self.order = list(env.unwrapped.tasks.order)
        if not self.order:
            raise RunConfigError("the probe set holds no task: give --probes a task file")
        self.records: list[ProbeRecord] = []
        self._path: Path | None = None

    def identity(self) -> dict[str, Any]:
        """What must match for a resumed run to go on probing: the schedule and the set."""
        order = hashlib.sha256(json.dumps(self.order).encode()).hexdigest()[:16]
        return {"every": self.every, "count": len(self.order), "order_sha256": order}

    def resume(self, folder: Path, done: int) -> None:
        """Take back the probes recorded in `folder` at points up to `done` stream tasks;
        drop the rest (and a torn last line) from the file."""
        self._path = folder / PROBES_FILE
        records, ends = read_probes(self._path)
        expected = [(p, t) for p in range(0, done + 1, self.every) for t in self.order]
        kept = 0
        for number, record in enumerate(records[: len(expected)], start=1):
            if (record.point, record.task_index) != expected[kept]:
                point, task = expected[kept]
                raise RunDirectoryError(
                    f"{self._path}:{number} is task {record.task_index} at point "
                    f"{record.point}, but task {task} at point {point} comes there; {REPAIR}"
                )
            kept += 1
        if self._path.exists():
            os.truncate(self._path, ends[kept - 1] if kept else 0)
        self.records = records[:kept]

    def play_due(
        self,
        agent: Agent,
        callbacks: Sequence[Callback],
        history: list[Session],
        max_skipped_interactions: int,
        run: Any = None,
        state: RunState | None = None,
    ) -> None:
        """Play what is missing of the probe point at `len(history)`, if it is one
        (`run` and `state` go to the callbacks' handlers, as in `Lockstep`)."""
        point = len(history)
        if point % self.every:
            return
        played = sum(record.point == point for record in self.records)
        remaining = self.order[played:]
        if not remaining:
            return
        agent.use_probe_tasks(self.env.unwrapped.tasks)
        envs = self._envs(min(self.concurrency, len(remaining)))
        meter = CostMeter(agent)  # the probes' cost is not the stream's
        lockstep = Lockstep(
            agent,
            callbacks,
            len(envs),
            max_skipped_interactions,
            meter,
            probe_of=history,
            run=run,
            state=state,
        )
        sessions: list[Session] = []
        lockstep.play(remaining, sessions, envs, partial(self._record, point, sessions))

    def _envs(self, count: int) -> list[gym.Env]:
        """`count` environments over the probe set: `env` and more made like it, kept."""
        while len(self._more_envs) < count - 1:
            self._more_envs.append(self.make_env())
        return [self.env, *self._more_envs[: count - 1]]

    def close(self) -> None:
        """Close the probe set's environments."""
        for env in [self.env, *self._more_envs]:
            env.close()
        self._more_envs = []

    def _record(self, point: int, sessions: list[Session], session: Session) -> None:
        """Keep a finished probe episode, and append its line to `probes.jsonl`."""
        sessions.append(session)
        record = ProbeRecord(
            point=point,
            task_index=session.task_index,
            skills=list(session.skills),
            status=session.status.value,
            reward=session.reward,
        )
        self.records.append(record)
        if self._path is not None:
            with self._path.open("ab") as file:  # one write: a kill tears at most this line
                file.write(record.model_dump_json().encode() + b"\n")
