"""Task records, task sets, and reading task files in any supported format."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from lifelong_gym.actions import ParsedAction
from lifelong_gym.errors import TaskFileError
from lifelong_gym.extras import import_extra
from lifelong_gym.session import ChatMessage
from lifelong_gym.skill_tables import SkillTaxonomy

logger = logging.getLogger(__name__)

DATA_DIR = Path(__file__).parent / "data"


class Task(BaseModel):
    """The fields every environment's task has: its sample index and its skills, named in
    its environment's skill taxonomy (empty for a task of no environment)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    taxonomy: ClassVar[SkillTaxonomy] = SkillTaxonomy()

    index: int
    skills: tuple[str, ...] = ()

    def oracle_action(self, history: Sequence[ChatMessage]) -> ParsedAction:
        """The next action of this task's reference solution, given the history so far."""
        raise NotImplementedError(f"{type(self).__name__} has no reference solution to replay")

    def oracle_reply(self, history: Sequence[ChatMessage], action_format: str = "text") -> str:
        """The reply that replays the reference solution, in either action format."""
        action = self.oracle_action(history)
        return action.tool_call().reply() if action_format == "tools" else action.text()


TaskT = TypeVar("TaskT", bound=Task)


@dataclass(frozen=True)
class SkippedRecord:
    """A record a loader could not use, and why."""

    key: str
    reason: str


class TaskSet(Generic[TaskT]):
    """Tasks by sample index, with the order a lifelong run visits them in.

    `source` is the file the tasks were read from (absolute), None for tasks made in memory.
    """

    def __init__(
        self,
        tasks: Sequence[TaskT],
        order: Sequence[int] | None = None,
        *,
        name: str = "",
        skipped: Sequence[SkippedRecord] = (),
        source: Path | None = None,
    ):
        self.name = name
        self.source = source
        self._by_index = {task.index: task for task in tasks}
        if len(self._by_index) != len(tasks):
            raise TaskFileError(f"task set {name!r} has duplicate sample indices")
        if not self._by_index:
            raise TaskFileError(f"task set {name!r} holds no usable task")
        self.order = list(order) if order is not None else [task.index for task in tasks]
        unknown = [i for i in self.order if i not in self._by_index]
        if unknown:
            raise TaskFileError(f"sample order of {name!r} names unknown tasks {unknown[:5]}")
        self.indices = sorted(self._by_index)
        self.skipped = list(skipped)

    def __len__(self) -> int:
        return len(self._by_index)

    def __getitem__(self, index: int) -> TaskT:
        try:
            return self._by_index[index]
        except KeyError:
            raise KeyError(
                f"task set {self.name!r} has no task with sample index {index}; "
                f"it has {len(self)} tasks, indices {self.indices[0]}..{self.indices[-1]}"
            ) from None

    def __contains__(self, index: object) -> bool:
        return index in self._by_index

    def __iter__(self) -> Iterator[TaskT]:
        return (self._by_index[i] for i in self.order)

    @functools.cached_property
    def content_sha256(self) -> str:
        """A hash of the task records by sample index: the same for the same tasks whatever
        file, path or shipped name they were read from, another when any record changes."""
        digest = hashlib.sha256()
        for index in self.indices:  # pydantic's own JSON: ten times faster than json.dumps
            digest.update(self._by_index[index].model_dump_json().encode() + b"\n")
        return digest.hexdigest()[:16]


def read_records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Read a task file as (key, record) pairs, detecting the format from the content.

    Accepted: a JSON object keyed by sample index (the benchmark's `entry_dict.json`), a
    JSON list, JSON Lines, and parquet. The key is the sample index where the file gives
    one, else the record's position.
    """
    if not path.is_file():
        raise TaskFileError(f"task file {path} does not exist or is not a file")
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic == b"PAR1":
        return _read_parquet(path)
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if not stripped:
        raise TaskFileError(f"task file {path} is empty")
    if stripped[0] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSON Lines also starts with "{"
        if isinstance(data, dict):
            if all(isinstance(v, dict) for v in data.values()):
                return [(str(k), v) for k, v in data.items()]
            return [("0", data)]
        if isinstance(data, list):
            return [(_key(r, i), r) for i, r in enumerate(data)]
    return _read_json_lines(path, text)


def _key(record: Any, position: int) -> str:
    if isinstance(record, dict) and "sample_index" in record:
        return str(record["sample_index"])
    return str(position)


def _read_json_lines(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaskFileError(
                f"{path}:{number} is not JSON ({error.msg}); task files are JSON, "
                "JSON Lines or parquet"
            ) from None
        records.append((_key(record, len(records)), record))
    return records


def _read_parquet(path: Path) -> list[tuple[str, dict[str, Any]]]:
    pq = import_extra("pyarrow.parquet", "parquet", f"reading {path} (parquet)")
    rows = pq.read_table(path).to_pylist()
    return [(_key(r, i), r) for i, r in enumerate(rows)]


TASK_FILES_KEPT = 4  # task files kept converted in a process, for the environments it makes


def load_task_set(
    source: str | Path | None,
    *,
    environment: str,
    default: str,
    convert: Callable[[str, dict[str, Any]], TaskT],
) -> TaskSet[TaskT]:
    """Load a shipped task set by name, or a task file by path, converting each record.

    `convert(key, record)` returns a task or raises `ValueError` with the reason to skip
    the record. Skipped records are kept on the set and reported in one warning, once a
    process for each content of the file. A file read before, unchanged since, gives the
    same (frozen) tasks again: the environments of one process (a vector environment's
    copies) read it once.
    """
    path, order = _resolve(source, environment=environment, default=default)
    tasks, skipped = _converted(path.resolve(), _digest(path), convert)
    if not tasks:
        reasons = "; ".join(f"{s.key}: {s.reason}" for s in skipped[:3])
        raise TaskFileError(f"{path} holds no {environment} task this loader accepts ({reasons})")
    if order is not None:
        known = {t.index for t in tasks}
        order = [i for i in order if i in known]
    name = str(source or default)
    return TaskSet(tasks, order, name=name, skipped=skipped, source=path.resolve())


def report_skipped(source: Path, kept: int, skipped: Sequence[SkippedRecord]) -> None:
    """One warning naming how many records of `source` were skipped, and the first reasons."""
    if not skipped:
        return
    shown = "; ".join(f"{s.key}: {s.reason}" for s in skipped[:5])
    more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
    logger.warning(
        "%s: skipped %d of %d records: %s%s", source, len(skipped), len(skipped) + kept, shown, more
    )


def _digest(path: Path) -> bytes | None:
    """The file's content digest (None for what is not a readable file: reading it says why)."""
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=16).digest()
    except OSError:
        return None


@functools.lru_cache(maxsize=TASK_FILES_KEPT)
def _converted(
    path: Path, digest: bytes | None, convert: Callable[[str, dict[str, Any]], TaskT]
) -> tuple[tuple[TaskT, ...], tuple[SkippedRecord, ...]]:
    """The tasks of a file, and the records skipped, for the content of that `digest`; the
    skipped records are reported once, when the content is first read."""
    tasks: list[TaskT] = []
    skipped: list[SkippedRecord] = []
    for key, record in read_records(path):
        try:
            tasks.append(convert(key, record))
        except (ValueError, TypeError, KeyError) as error:
            skipped.append(SkippedRecord(key, f"{type(error).__name__}: {error}"))
    report_skipped(path, len(tasks), skipped)
    return tuple(tasks), tuple(skipped)


def clear_task_files() -> None:
    """Forget the task files read before (a benchmark measures first reads)."""
    _converted.cache_clear()


def order_path(tasks_path: Path) -> Path:
    """Where a task file's sample order is kept: `NAME.order.json` beside `NAME.jsonl`."""
    return tasks_path.with_name(tasks_path.name.removesuffix(".jsonl") + ".order.json")


def shipped_task_sets(environment: str) -> dict[str, Path]:
    """The names and files of the task sets shipped for an environment."""
    folder = DATA_DIR / environment
    return {p.name.removesuffix(".jsonl"): p for p in sorted(folder.glob("*.jsonl"))}


def absolute_source(value: Any) -> Any:
    """A path that names an existing file or folder, as an absolute path (text); anything
    else, a shipped task set's name included, as it is."""
    if not isinstance(value, str | Path) or str(value) in _shipped_names():
        return value
    path = Path(value).expanduser()
    return str(path.resolve()) if path.exists() else value


@functools.cache
def _shipped_names() -> frozenset[str]:
    return frozenset(p.name.removesuffix(".jsonl") for p in DATA_DIR.glob("*/*.jsonl"))


def _resolve(
    source: str | Path | None, *, environment: str, default: str
) -> tuple[Path, list[int] | None]:
    shipped = shipped_task_sets(environment)
    name = default if source is None else str(source)
    path = shipped[name] if name in shipped else Path(name).expanduser()
    if path.exists():
        order = order_path(path)
        return path, json.loads(order.read_text()) if order.is_file() else None
    raise TaskFileError(
        f"tasks={name!r} is neither a file nor a shipped {environment} task set; "
        f"shipped sets: {', '.join(shipped) or 'none'}"
    )
