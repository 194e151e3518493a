"""A grid as the command line runs and compares it: `lifelong-gym run --config GRID.yaml
[--only ENV[/METHOD]]` plays the cells picked, each as `lifelong-gym run` plays one run;
`lifelong-gym compare GRID` prints and draws each environment against the reference.

What a grid is, its cells and `grid.json`, are `grid.py`'s; the comparison's tables and
pages are `grid_compare.py`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from lifelong_gym.results.compare import (
    comparison_warnings,
    format_comparison,
    format_runs,
    plot_comparison,
)
from lifelong_gym.results.grid_compare import (
    COMPARISON_PLOT,
    GridIndex,
    format_summary,
    load_grid_environments,
    write_grid_pages,
)
from lifelong_gym.run.grid import load_grid, run_grid
from lifelong_gym.run.play import PlayedRun, raise_if_errored, run_resumable
from lifelong_gym.run.sigterm import StopRequest


def run_grid_config(
    settings: dict[str, Any], flags: dict[str, Any], only: Sequence[str], stop: StopRequest
) -> None:
    """Run the cells of the grid config `settings` that `only` picks (every cell without
    it), `flags` set on top of every cell; every cell is checked before the first runs.
    Sessions that errored in the cells played end the command with one line (exit code 3)."""
    grid = load_grid(settings, flags)
    played: list[PlayedRun] = []
    run_grid(
        grid, grid.select(only), lambda cell: played.extend(run_resumable(cell, stop)), click.echo
    )
    raise_if_errored(played)


def compare_grid(
    folder: Path, index: GridIndex, plot_path: str | None, html_path: str | None
) -> None:
    """Each environment of a grid: the summary against the reference, success per skill
    and the learning curves (GRID/ENV/comparison.png); with `html_path`, the pages."""
    if plot_path:
        raise click.UsageError(
            f"--plot does not go with a grid: its plots are ENV/{COMPARISON_PLOT}"
        )
    environments = load_grid_environments(folder, index)
    for environment in environments:
        click.echo(format_summary(environment) + "\n")
        if not environment.runs:
            continue
        for warning in comparison_warnings(environment.runs):
            click.echo(f"warning: {environment.name}: {warning}", err=True)
        runs = environment.runs
        click.echo(format_runs(runs) + "\n")
        click.echo(format_comparison([r.letter for r in runs], [r.metrics for r in runs]) + "\n")
        target = folder / environment.name / COMPARISON_PLOT
        click.echo(f"wrote {plot_comparison(environment.runs, target)}\n")
    if html_path:
        for path in write_grid_pages(folder, environments, Path(html_path)):
            click.echo(f"wrote {path}")
