"""`compare` of a grid folder: per environment, each cell beside the reference method.

A grid run writes `grid.json` (`GridIndex`): the cells and the reference (`standard`).
For each environment the cells that have run are compared as ordinary runs are
(`load_compared_runs`), the reference first, and summed up in one table: success with its
95% Wilson interval, the paired gain over the reference with its bootstrap interval
(`paired_gain`), and the cost per task.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

from pydantic import BaseModel, ValidationError

from lifelong_gym.errors import ConfigError, RunDirectoryError
from lifelong_gym.metrics import wilson_interval
from lifelong_gym.results.compare import ComparedRun, load_compared_runs
from lifelong_gym.results.folder import SESSIONS_FILE
from lifelong_gym.results.gain import describe_gain, paired_gain
from lifelong_gym.results.html_compare import write_compare_page
from lifelong_gym.results.html_page import render_page, write_page

GRID_FILE = "grid.json"
COMPARISON_PLOT = "comparison.png"


class IndexedCell(BaseModel):
    """A cell as `grid.json` lists it: its environment's and method's names, its folder
    (relative to the grid's) and the environment id."""

    env: str
    method: str
    folder: str
    env_id: str


class GridIndex(BaseModel):
    """`grid.json`: the method the others are compared with, and every cell."""

    reference: str
    cells: list[IndexedCell]


def read_grid_index(folder: Path) -> GridIndex | None:
    """The index of the grid in `folder`; None when it is no grid's folder."""
    path = folder / GRID_FILE
    if not path.is_file():
        return None
    try:
        return GridIndex.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as error:
        problem = " ".join(str(error).split())
        raise RunDirectoryError(
            f"{path} is not a grid's index ({problem}); run the grid again"
        ) from None


@dataclass(frozen=True)
class GridEnvironment:
    """One environment of a grid: its cells that have run, compared (the reference first,
    when it has run), and the methods not run yet."""

    name: str
    env_id: str
    reference: str
    methods: list[str]  # of `runs`, in order
    runs: list[ComparedRun]
    not_run: list[str]

    @property
    def has_reference(self) -> bool:
        """Whether the reference method has run (without it there are no gains)."""
        return bool(self.methods) and self.methods[0] == self.reference


def load_grid_environments(folder: Path, index: GridIndex) -> list[GridEnvironment]:
    """Each environment of the grid, its cells read (an environment with one run cell is
    listed, but has nothing to compare)."""
    environments: dict[str, list[IndexedCell]] = {}
    for cell in index.cells:
        environments.setdefault(cell.env, []).append(cell)
    loaded = []
    for name, cells in environments.items():
        cells.sort(key=lambda cell: cell.method != index.reference)  # the reference first
        ran = [cell for cell in cells if (folder / cell.folder / SESSIONS_FILE).is_file()]
        runs = load_compared_runs([folder / cell.folder for cell in ran]) if len(ran) > 1 else []
        loaded.append(
            GridEnvironment(
                name,
                cells[0].env_id,
                index.reference,
                [cell.method for cell in ran] if runs else [],
                runs,
                [cell.method for cell in cells if cell not in ran],
            )
        )
    return loaded


SUMMARY_HEAD = (
    "method",
    "tasks",
    "success",
    "95% CI",
    "gain (points)",
    "95% interval",
    "prompt tok/task",
    "gen. tok/task",
    "wall s/task",
)


def summary_rows(environment: GridEnvironment) -> tuple[list[list[str]], list[str]]:
    """The summary of an environment: one row per run cell (the columns of `SUMMARY_HEAD`:
    the judged tasks, the errored ones apart, and success over the judged), and a note for
    each cell that has no gain over the reference (and why), or whose gain leaves out tasks
    that errored."""
    rows, notes = [], []
    reference = environment.runs[0].record if environment.has_reference else None
    for method, run in zip(environment.methods, environment.runs, strict=True):
        metrics, cost = run.metrics, run.record.cost
        low, high = wilson_interval(metrics.correct, metrics.judged)
        gain = ["-", "-"]
        if reference is not None and run.record is not reference:
            try:
                paired = paired_gain(run.record, reference)
                points, interval = describe_gain(paired.overall).split(None, 1)
                gain = [points, " ".join(interval.split())]
                if left_out := paired.left_out():
                    notes.append(f"{method}'s gain: {left_out}")
            except ConfigError as error:
                notes.append(f"no gain for {method}: {error}")
        tokens = (cost.per_task(cost.prompt_tokens), cost.per_task(cost.generated_tokens))
        rows.append(
            [
                method,
                f"{metrics.judged}" + (f" (+{metrics.errored} errored)" if metrics.errored else ""),
                f"{metrics.success_rate:.1%}",
                f"[{low:.1%}, {high:.1%}]",
                *gain,
                *("unknown" if value is None else f"{value:,.1f}" for value in tokens),
                "-" if not cost.costed else f"{cost.per_task(cost.wall_seconds):,.3f}",
            ]
        )
    return rows, notes


def environment_title(environment: GridEnvironment) -> str:
    """`db: LifelongDB-v0, gains over standard` (or why there are none)."""
    head = f"{environment.name}: {environment.env_id}"
    if not environment.runs:
        return f"{head}, fewer than two cells have run"
    if not environment.has_reference:
        return f"{head}, no gains: {environment.reference} has not run"
    return f"{head}, gains over {environment.reference}"


def format_summary(environment: GridEnvironment) -> str:
    """An environment's summary as a plain-text table, with its notes and the cells not run."""
    lines = [environment_title(environment)]
    if environment.runs:
        rows, notes = summary_rows(environment)
        table = [list(SUMMARY_HEAD), *rows]
        widths = [max(len(cell) for cell in column) for column in zip(*table, strict=True)]
        for row in table:
            cells = [cell.rjust(width) for cell, width in zip(row, widths, strict=True)]
            lines.append("  ".join([row[0].ljust(widths[0]), *cells[1:]]))
        lines += notes
    if environment.not_run:
        lines.append(f"not run yet: {', '.join(environment.not_run)}")
    return "\n".join(lines)


def per_environment_page(index_page: Path, environment: GridEnvironment) -> Path:
    """Where an environment's comparison page goes: beside the grid's page, named after it."""
    suffix = index_page.suffix or ".html"
    return index_page.with_name(f"{index_page.stem}-{environment.name}{suffix}")


def write_grid_pages(
    folder: Path, environments: Sequence[GridEnvironment], path: Path
) -> list[Path]:
    """Write the page of the grid in `folder` (each environment's summary, linking to its
    comparison page) and each environment's comparison page (`write_compare_page`)."""
    written: list[Path] = []
    sections = []
    for environment in environments:
        link = ""
        if environment.runs:
            page = per_environment_page(path, environment)
            written += write_compare_page(environment.runs, page)
            target = quote(Path(os.path.relpath(page.resolve(), path.resolve().parent)).as_posix())
            link = f"<p><a href='{escape(target)}'>the cells side by side, per skill</a></p>"
        sections.append(_summary_panel(environment, link))
    title = f"Grid: {folder.resolve().name}"
    body = f"<header class='top'><h1>{escape(title)}</h1></header>{''.join(sections)}"
    written.append(write_page(path, render_page(title, body, [], "compare.js")))
    return written


def _summary_panel(environment: GridEnvironment, link: str) -> str:
    body = ""
    if environment.runs:
        rows, notes = summary_rows(environment)
        head = "".join(f"<th>{escape(h)}</th>" for h in SUMMARY_HEAD)
        cells = "".join(
            "<tr>"
            + "".join(
                f"<td{'' if i == 0 else ' class=num'}>{escape(cell)}</td>"
                for i, cell in enumerate(row)
            )
            + "</tr>"
            for row in rows
        )
        body = f"<table class='skills-table grid-table'><tr>{head}</tr>{cells}</table>"
        body += "".join(f"<p class='note'>{escape(note)}</p>" for note in notes)
    if environment.not_run:
        body += f"<p class='note'>not run yet: {escape(', '.join(environment.not_run))}</p>"
    return (
        f"<section class='panel' id='env-{escape(environment.name)}'>"
        f"<h2>{escape(environment_title(environment))}</h2>{body}{link}</section>"
    )
