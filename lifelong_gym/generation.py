"""What the task generators share: where they write, the writer, the progress bar.

Their command, `lifelong-gym generate db|os|kg`, takes the same flags for each
(`lifelong_gym.cli.generate`). A set is written as
`<name>.jsonl` (one task record a line) and `<name>.order.json` (its sample order) into
the `--output` folder, by default `./lifelong-gym-tasks/<env>/` under the current
directory, so a generator never replaces the shipped sets in the package's `data/` folder
unless that folder is named. `--output` may also name the `.jsonl` file itself. Every file
is written to a temporary name beside it, then renamed over the old one: an interrupted
generator leaves the old set or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from lifelong_gym.errors import ConfigError
from lifelong_gym.tasks import order_path

DEFAULT_OUTPUT = Path("lifelong-gym-tasks")
DEFAULT_NAME = "default"
TASKS_SUFFIX = ".jsonl"


def split_name(name: str, split: str | None) -> str:
    """The task set's name: `--name`, else the `--split` (train.jsonl), else the default."""
    return split if split and name == DEFAULT_NAME else name


def task_file(output: Path | None, environment: str, name: str = DEFAULT_NAME) -> Path:
    """The `.jsonl` file to write: `output` if it names one, else `<output>/<name>.jsonl`."""
    folder = DEFAULT_OUTPUT / environment if output is None else output.expanduser()
    if folder.suffix == TASKS_SUFFIX:
        return folder
    if folder.suffix and not folder.is_dir():
        raise ConfigError(
            f"--output {folder} is neither a folder nor a {TASKS_SUFFIX} file; "
            f"give a folder or a name ending in {TASKS_SUFFIX}"
        )
    return folder / f"{name}{TASKS_SUFFIX}"


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside `path`, renamed over `path` when the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_task_set(
    records: Iterable[Mapping[str, Any]], order: Sequence[int], path: Path
) -> tuple[Path, Path]:
    """Write `records` as JSON Lines to `path` and `order` beside it; return both paths."""
    with replacing(path) as temporary, temporary.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    order_file = order_path(path)
    with replacing(order_file) as temporary:
        temporary.write_text(json.dumps(list(order)) + "\n", encoding="utf-8")
    return path, order_file


def progress_bar(total: int, description: str, iterable: Iterable | None = None) -> tqdm:
    """The progress bar of a long generation step (shown on a terminal only)."""
    return tqdm(iterable, total=total, desc=description, unit="task", disable=None)


def coverage_line(tasks_per_skill: Mapping[str, int]) -> str:
    """How a set covers its environment's skills (every skill a key), in one line."""
    covered = sum(1 for count in tasks_per_skill.values() if count)
    fewest = min(tasks_per_skill, key=tasks_per_skill.__getitem__)
    more = "" if covered == len(tasks_per_skill) else " (a larger --count covers them all)"
    return (
        f"{covered} of {len(tasks_per_skill)} skills covered{more}; "
        f"fewest tasks per skill: {tasks_per_skill[fewest]} ({fewest})"
    )
