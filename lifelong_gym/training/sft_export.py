"""`lifelong-gym export sft`: demonstrations written as a Hugging Face `datasets` dataset.

The folder holds `demonstrations.parquet` (one row a solved episode, in TRL's
conversational format: `messages`, plus `tools` in the tools format, with the task's
`task_index`, `skills`, `reward` and `status`, and the row's `kind`: "task", or a method's
learning request such as reasoning memory's "distillation") and `metadata.json` (where the
rows came from, and how many of each kind). `datasets.load_dataset(FOLDER, split="train")`
reads it, and `trl.SFTTrainer` takes the result as it is.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lifelong_gym.errors import ConfigError
from lifelong_gym.extras import import_extra
from lifelong_gym.methods import Method

from .demonstration import demonstrations

DATA_FILE = "demonstrations.parquet"
METADATA_FILE = "metadata.json"


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote: the folder, how many rows (of each kind), and how many tasks
    were played."""

    folder: Path
    rows: int
    tasks: int
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def left_out(self) -> int:
        """Tasks the oracle did not solve (no row was written for them)."""
        return self.tasks - self.kinds.get("task", self.rows)


def export_sft(
    env_id: str,
    out: str | Path,
    *,
    tasks: str | None = None,
    action_format: str = "text",
    env_kwargs: dict[str, Any] | None = None,
    overwrite: bool = False,
    progress: bool = True,
    method: Method | None = None,
    method_spec: str | None = None,
    learning_requests: bool = True,
) -> ExportSummary:
    """Play every task's reference solution and write the episodes as an SFT dataset.

    With a `method` (named `method_spec` in the metadata), the tasks are played as a stream
    through it and each opening prompt holds what it inserted (`demonstrations`); the
    method's learning requests (reasoning memory's distillations) are rows too, unless
    `learning_requests` is False."""
    datasets = import_extra("datasets", "train", "exporting an SFT dataset")
    folder = Path(out)
    if (folder / DATA_FILE).exists() and not overwrite:
        raise ConfigError(f"{folder / DATA_FILE} exists; pass --overwrite or another --out")
    played = list(
        demonstrations(
            env_id,
            tasks,
            action_format,
            solved_only=False,
            progress=progress,
            method=method,
            learning_requests=learning_requests,
            **(env_kwargs or {}),
        )
    )
    rows = [demo.row() for demo in played if demo.reward >= 1.0]
    tasks_played = sum(demo.kind == "task" for demo in played)
    if not rows:
        raise ConfigError(f"the oracle solved none of the {tasks_played} tasks: nothing to write")
    kinds = dict(Counter(row["kind"] for row in rows))
    folder.mkdir(parents=True, exist_ok=True)
    dataset = datasets.Dataset.from_list(
        rows, features=_features(datasets, with_tools="tools" in rows[0])
    )
    shown = datasets.is_progress_bar_enabled()
    if not progress:
        datasets.disable_progress_bars()
    try:
        dataset.to_parquet(str(folder / DATA_FILE))
    finally:
        if shown:
            datasets.enable_progress_bars()
    metadata = {
        "format": "trl-conversational",
        "env_id": env_id,
        "tasks": tasks,
        "action_format": action_format,
        "env_kwargs": env_kwargs or {},
        "method": method_spec,
        "rows": len(rows),
        "rows_by_kind": kinds,
        "tasks_played": tasks_played,
    }
    (folder / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    return ExportSummary(folder, len(rows), tasks_played, kinds)


def _features(datasets: Any, *, with_tools: bool) -> Any:
    """The columns' types. Messages and tools are JSON values, kept exactly as written (a
    struct column would give every tool call the union of all calls' arguments, as None)."""
    columns = {
        "messages": datasets.Json(),
        "task_index": datasets.Value("int64"),
        "skills": datasets.List(datasets.Value("string")),
        "reward": datasets.Value("float64"),
        "status": datasets.Value("string"),
        "kind": datasets.Value("string"),
    }
    if with_tools:
        columns["tools"] = datasets.Json()
    return datasets.Features(columns)
