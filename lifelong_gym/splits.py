"""Train / validation / test task sets from the generators: disjoint seeds, no shared text.

A generator given `--split NAME` draws its tasks from `split_seed(seed, NAME)`, so the
splits of one `--seed` are different streams; given `--exclude FILE` it never writes a
task whose text (instruction or question, white space folded) is in FILE, and no set
repeats a text within itself. Together: `generate --split validation --exclude
train.jsonl` makes a validation set that shares no task text with the training set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from lifelong_gym.errors import ConfigError
from lifelong_gym.tasks import read_records

SPLITS: tuple[str, ...] = ("train", "validation", "test")
# the record field holding a task's text, by environment format (DB, OS: instruction; KG)
TEXT_FIELDS: tuple[str, ...] = ("instruction", "question", "description")


def split_seed(seed: int, split: str | None) -> int:
    """The seed a split's tasks are drawn from: `seed` without a split, else a 63-bit hash
    of both (so `train` and `validation` of one seed never draw from the same seed)."""
    if split is None:
        return seed
    if split not in SPLITS:
        raise ConfigError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    digest = hashlib.sha256(f"lifelong-gym split {split} {seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def text_key(text: str) -> str:
    """A task text compared with white space folded."""
    return " ".join(text.split())


def task_texts(paths: Iterable[str | Path]) -> set[str]:
    """The texts (`text_key`) of every task in the given task files, for a generator to avoid."""
    texts: set[str] = set()
    for path in paths:
        for key, record in read_records(Path(path)):
            field = next((f for f in TEXT_FIELDS if isinstance(record.get(f), str)), None)
            if field is None:
                raise ConfigError(
                    f"{path}: record {key} has no task text ({'/'.join(TEXT_FIELDS)})"
                )
            texts.add(text_key(record[field]))
    return texts
