"""What a run plays, by content: the hashes of its tasks, probe tasks and data files (a
knowledge graph) that `config.json` keeps under `content`, and the rules a resume follows
with them.

A resume over other content is refused in one line that names the file. Paths are kept
absolute for the readers of a run, but a resume compares a path by the content it holds,
so the same file by another path (or a shipped set by its name or its file) resumes. Runs
written before content hashes were kept compare their paths, made absolute, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

from lifelong_gym.errors import RunDirectoryError
from lifelong_gym.registration import path_arguments
from lifelong_gym.tasks import TaskSet, absolute_source

CONTENT = "content"
TASKS, PROBES = "tasks", "probes"
# a path setting and the content it names share their name: `tasks`, `probes`, `graph`
USER_PATHS = frozenset({TASKS, PROBES})
# how a refusal names each kind of content (a data file by its own name)
WHAT = {TASKS: "tasks", PROBES: "probe tasks"}


def run_content(env: gym.Env, probe_tasks: TaskSet | None = None) -> dict[str, dict[str, Any]]:
    """The content identity of a run over `env` (and its probe set): for the tasks, the
    probe tasks and each data file of the environment, where it is and its hash."""
    content = {TASKS: tasks_content(env.unwrapped.tasks)}
    content.update(env.unwrapped.data_content())  # hashed where it runs (a Ray actor's node)
    if probe_tasks is not None:
        content[PROBES] = tasks_content(probe_tasks)
    return content


def tasks_content(tasks: TaskSet) -> dict[str, str | None]:
    """Where a task set was read from (None when made in memory) and its records' hash."""
    source = str(tasks.source) if tasks.source is not None else None
    return {"source": source, "sha256": tasks.content_sha256}


def refuse_changed_content(folder: Path, saved: dict[str, Any], current: dict[str, Any]) -> None:
    """Refuse, in one line naming the file, to resume the run in `folder` over content whose
    hash differs from the one the run started with."""
    before, after = saved.get(CONTENT) or {}, current.get(CONTENT) or {}
    for name in after:
        if name not in before or before[name].get("sha256") == after[name]["sha256"]:
            continue
        what = WHAT.get(name, name)
        old, new = before[name], after[name]
        if old.get("source") == new["source"]:
            change = (
                f"the {what} {_where(new)} changed since this run started "
                f"(content hash {old.get('sha256')}, now {new['sha256']})"
            )
        else:
            change = (
                f"the {what} {_where(new)} (content hash {new['sha256']}) are not the "
                f"{what} this run started with, {_where(old)} (content hash "
                f"{old.get('sha256')})"
            )
        raise RunDirectoryError(
            f"{change}: to resume the run in {folder}, give it the {what} it started with; "
            "to start over there, pass --overwrite (overwrite=True); or choose another "
            "output folder"
        )


def _where(entry: dict[str, Any]) -> str:
    source = entry.get("source")
    return f"in {source}" if source else "given in memory"


def comparable(saved: dict[str, Any], current: dict[str, Any]) -> tuple[dict, dict]:
    """Two run configs as a resume compares them once their content has been checked: a
    path whose content the saved config hashed is left out of both, any other path is made
    absolute (a run written before the hashes compares the files it named)."""
    hashed = set(saved.get(CONTENT) or {})
    paths = path_arguments(str(current.get("env") or saved.get("env") or ""))
    return _without_paths(saved, hashed, paths), _without_paths(current, hashed, paths)


def _without_paths(config: dict[str, Any], hashed: set[str], paths: frozenset[str]) -> dict:
    config = {key: value for key, value in config.items() if key != CONTENT}
    if isinstance(config.get("user"), dict):
        user = config["user"] = _compared_paths(config["user"], hashed, USER_PATHS)
        if isinstance(user.get("env_args"), dict):
            user["env_args"] = _compared_paths(user["env_args"], hashed, paths)
    if isinstance(config.get("env_kwargs"), dict):
        config["env_kwargs"] = _compared_paths(config["env_kwargs"], hashed, paths)
    return config


def _compared_paths(settings: dict[str, Any], hashed: set[str], paths: frozenset[str]) -> dict:
    """`settings` without the paths whose content was hashed, the other paths absolute."""
    return {
        key: absolute_source(value) if key in paths else value
        for key, value in settings.items()
        if key not in paths or key not in hashed
    }
