"""The tasks a run worked on, read from its task set without starting an environment.

The HTML report shows each session's reference solution beside the conversation. The task
set is read with the environment's own loader (no database, container or store is started);
when it cannot be read, the report says why instead.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lifelong_gym.errors import LifelongGymError
from lifelong_gym.results.run_record import DEFAULT_TASK_SET, RunIdentity
from lifelong_gym.session import Session

# environment id -> the function that loads its task sets (by shipped name or path)
TASK_LOADERS = {
    "LifelongDB-v0": "lifelong_gym.envs.db.tasks:load_db_tasks",
    "LifelongOS-v0": "lifelong_gym.envs.os.tasks:load_os_tasks",
    "LifelongKG-v0": "lifelong_gym.envs.kg.env:load_kg_tasks",
}
# fields of the task records that make the reference solution (the rest describe the task)
REFERENCE_FIELDS = (
    "reference_sql",
    "answer_info",
    "ground_truth",
    "evaluation",
    "answer_check",
    "s_expression",
    "action_list",
    "answer_list",
)
TASK_TEXT_FIELDS = ("instruction", "question")
# longer lists are cut, saying how many were left out: a table's rows, reference answers
MAX_TASK_ITEMS, MAX_REFERENCE_ITEMS = 5, 50


@dataclass(frozen=True)
class TaskReferences:
    """Task records by sample index (reference fields apart), and why any are missing."""

    tasks: dict[int, dict[str, Any]]
    note: str | None = None


def load_references(identity: RunIdentity, sessions: Iterable[Session]) -> TaskReferences:
    """The records of the tasks the sessions worked on, or a note saying why there are none."""
    sessions = list(sessions)
    target = TASK_LOADERS.get(identity.env)
    if target is None:
        return TaskReferences({}, f"no task loader is known for {identity.env}")
    source = None if identity.task_set == DEFAULT_TASK_SET else identity.task_set
    try:
        module, _, name = target.partition(":")
        task_set = getattr(importlib.import_module(module), name)(source)
    except (LifelongGymError, OSError, ValueError, ImportError) as error:
        return TaskReferences({}, f"the task set {identity.task_set!r} cannot be read: {error}")
    tasks: dict[int, dict[str, Any]] = {}
    changed = 0
    for session in sessions:
        if session.task_index not in task_set:
            changed += 1
            continue
        task = task_set[session.task_index]
        changed += tuple(task.skills) != tuple(session.skills)
        tasks[session.task_index] = task_record(task.model_dump(mode="json"))
    note = None
    if changed:
        note = (
            f"{changed} of {len(sessions)} sessions do not match the task set "
            f"{identity.task_set!r} as it is now (missing task or other skills): the file "
            "changed after the run, so those reference solutions may be wrong"
        )
    return TaskReferences(tasks, note)


def task_record(dump: dict[str, Any]) -> dict[str, Any]:
    """A task as the report shows it: its text, its reference solution, the rest."""
    text = next((dump[k] for k in TASK_TEXT_FIELDS if k in dump), None)
    reference = {
        k: _cut(dump[k], MAX_REFERENCE_ITEMS)
        for k in REFERENCE_FIELDS
        if dump.get(k) not in (None, [], "")
    }
    other = {
        k: _cut(v, MAX_TASK_ITEMS)
        for k, v in dump.items()
        if k not in ("index", "skills", *TASK_TEXT_FIELDS, *REFERENCE_FIELDS)
    }
    return {"text": text, "reference": reference, "other": other}


def _cut(value: Any, limit: int) -> Any:
    """`value` with every list longer than `limit` cut to it, plus a line saying so."""
    if isinstance(value, dict):
        return {k: _cut(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        kept = [_cut(v, limit) for v in value[:limit]]
        if len(value) > limit:
            kept.append(f"... {len(value) - limit} more not shown")
        return kept
    return value
