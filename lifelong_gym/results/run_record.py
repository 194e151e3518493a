"""A finished (or partial) run read back from its folder: identity, sessions and metrics."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lifelong_gym.errors import RunDirectoryError
from lifelong_gym.metrics import DEFAULT_WINDOW, LifelongMetrics, compute_metrics
from lifelong_gym.results.cost_summary import CostSummary, load_cost
from lifelong_gym.results.costs import Price
from lifelong_gym.results.folder import CONFIG_FILE, SESSIONS_FILE, read_sessions
from lifelong_gym.session import Session

DEFAULT_TASK_SET = "default"


@dataclass(frozen=True)
class RunIdentity:
    """What a run is, as its `config.json` says: environment, task set, agent, callbacks."""

    name: str
    env: str
    task_set: str
    task_count: int | None
    task_order: str
    agent: str
    callbacks: tuple[str, ...]
    config: dict[str, Any]

    @classmethod
    def of_folder(cls, folder: Path) -> RunIdentity:
        """The identity of the run in `folder` (unknown fields say so when there is no config)."""
        path = folder / CONFIG_FILE
        try:
            config = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except ValueError as error:
            raise RunDirectoryError(f"{path} is not JSON ({error}); repair or delete it") from None
        user = config.get("user") or {}
        tasks = config.get("tasks") or {}
        kwargs = config.get("env_kwargs") or {}
        order = str(config.get("order") or "?")
        if config.get("seed") is not None:
            order += f" (seed {config['seed']})"
        return cls(
            name=folder.resolve().name,
            env=str(config.get("env") or "unknown environment"),
            task_set=str(kwargs.get("tasks") or user.get("tasks") or DEFAULT_TASK_SET),
            task_count=tasks.get("count"),
            task_order=order,
            agent=str(user.get("agent") or config.get("agent") or "unknown agent"),
            callbacks=tuple(map(str, user.get("callbacks") or config.get("callbacks") or ())),
            config=config,
        )

    @property
    def task_stream(self) -> tuple[Any, ...]:
        """What must match for two runs to have seen the same tasks in the same order."""
        tasks = self.config.get("tasks") or {}
        return (self.task_set, tasks.get("count"), tasks.get("order_sha256"))

    def title(self) -> str:
        """One line naming the run, its environment and its agent."""
        return f"{self.name} · {self.env} · {self.agent}"


@dataclass(frozen=True)
class RunRecord:
    """A run folder read back: its identity, finished sessions, their metrics and cost."""

    folder: Path
    identity: RunIdentity
    sessions: list[Session]
    metrics: LifelongMetrics
    cost: CostSummary


def load_run(folder: Path, window: int = DEFAULT_WINDOW, price: Price | None = None) -> RunRecord:
    """Read a run folder; a folder without `sessions.jsonl` is a `RunDirectoryError`.

    The cost is priced at `price`, or else at the price the run was given (if any).
    """
    path = folder / SESSIONS_FILE
    if not path.is_file():
        raise RunDirectoryError(f"{folder} holds no {SESSIONS_FILE}: is it a run's output folder?")
    sessions = read_sessions(path)[0]
    return RunRecord(
        folder=folder,
        identity=RunIdentity.of_folder(folder),
        sessions=sessions,
        metrics=compute_metrics(sessions, window=window),
        cost=load_cost(folder, sessions, price),
    )
