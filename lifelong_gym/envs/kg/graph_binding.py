"""A KG task set bound to the graph it was made on.

Every task `lifelong-gym generate kg` writes records the sha256 of its graph's content
(`graph_sha256`); an environment on the embedded store hashes the graph it opens and
refuses tasks that record another (`check_graph`). Task files that record none (the
benchmark's, or ours from before) are played on whatever graph they are given.

The generator keeps the files' names and refuses to replace a graph that other task files
beside it are played on (`keep_graph_in_use`), rather than naming each graph by its hash: the
names `graph.nt.gz` and `NAME.graph.nt.gz` are the ones users, the shipped data and the
Virtuoso loader know, and hashed names would leave every superseded graph behind. What a
refusal cannot see (a graph copied or replaced by hand) the recorded hash catches.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from pathlib import Path

from lifelong_gym.envs.kg.backends import generated_graph
from lifelong_gym.envs.kg.tasks import KGTask
from lifelong_gym.errors import ConfigError, GraphMismatchError
from lifelong_gym.tasks import TaskSet

_CHUNK = 1 << 20


def graph_sha256(path: Path) -> str:
    """The sha256 of a graph file's content, decompressed when the file ends in `.gz`."""
    stat = path.stat()
    return _content_sha256(path.resolve(), stat.st_size, stat.st_mtime_ns)


def content_sha256(data: bytes) -> str:
    """The sha256 `graph_sha256` gives a file holding `data` (compressed or not)."""
    return hashlib.sha256(data).hexdigest()


@functools.lru_cache(maxsize=8)
def _content_sha256(path: Path, size: int, mtime_ns: int) -> str:
    """The hash for one version of a file (its size and time): the environments of one
    process (a vector environment's copies) read the graph once."""
    # The content, not the file's bytes: a gzip header names its file, so one graph written
    # as graph.nt.gz and as NAME.graph.nt.gz (or unpacked to .nt) has the same content only.
    opener = gzip.open if path.suffix == ".gz" else open
    digest = hashlib.sha256()
    with opener(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_graph(tasks: TaskSet[KGTask], graph: Path, sha256: str) -> None:
    """Refuse `tasks` when one of them records a graph other than `graph` (of `sha256`)."""
    recorded = sorted({tasks[i].graph_sha256 for i in tasks.indices} - {"", sha256})
    if recorded:
        raise GraphMismatchError(
            f"tasks={tasks.name} were generated on the graph of sha256 {recorded[0][:16]}..., "
            f"but graph {graph} has sha256 {sha256[:16]}...: pass graph= the graph generated "
            "with them, or generate the tasks again"
        )


def keep_graph_in_use(graph: Path, sha256: str, tasks: Path) -> None:
    """Refuse to write the graph of `sha256` over `graph` when another graph is there that
    task files other than `tasks` are played on."""
    if not graph.is_file():
        return
    existing = graph_sha256(graph)
    users = [] if existing == sha256 else _graph_users(graph, existing, besides=tasks)
    if users:
        names = ", ".join(path.name for path in users)
        raise ConfigError(
            f"{graph} is the graph that {names} beside it are played on, and this set's graph "
            "(another --seed or --scale) would replace it: give --output another folder"
        )


def _graph_users(graph: Path, sha256: str, *, besides: Path) -> list[Path]:
    """The KG task files other than `besides` that are played on `graph` (of `sha256`) when
    no graph= is given: those beside it that it is the generated graph of, unless they
    record another graph."""
    users = []
    for tasks in sorted(graph.parent.glob("*.jsonl")):
        if tasks == besides or generated_graph(tasks) != graph:
            continue
        first = _first_record(tasks)
        if "entity_dict" in first and first.get("graph_sha256") in (None, sha256):
            users.append(tasks)
    return users


def _first_record(path: Path) -> dict:
    """The first record of a JSON Lines file; empty when it holds none or is not JSON Lines."""
    try:
        with path.open(encoding="utf-8") as handle:
            record = json.loads(handle.readline())
    except ValueError:  # not JSON, or not text
        return {}
    return record if isinstance(record, dict) else {}
