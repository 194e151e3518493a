"""`lifelong-gym compare A B ...`: runs side by side, success overall and per skill, the
learning curves, cost, gain and probes; `compare GRID` compares each environment of a grid
with its reference method (the tables and pages are `lifelong_gym.results.grid_compare`'s).
"""

from __future__ import annotations

from pathlib import Path

import click

from lifelong_gym.results.compare import (
    comparison_warnings,
    default_plot_path,
    format_comparison,
    format_replicates,
    format_runs,
    load_compared_runs,
    plot_comparison,
)
from lifelong_gym.results.cost_summary import format_cost_table
from lifelong_gym.results.gain import format_paired_gains
from lifelong_gym.results.grid_compare import (
    COMPARISON_PLOT,
    GridIndex,
    format_summary,
    load_grid_environments,
    read_grid_index,
    write_grid_pages,
)
from lifelong_gym.results.html_compare import write_compare_page
from lifelong_gym.results.probe_display import format_probes, run_probes


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False),
    help="Where to write the plot (default: beside the first run, named after the runs).",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False),
    help="Also write a comparison page linking to each run's report.html.",
)
def compare(runs: tuple[str, ...], plot_path: str | None, html_path: str | None) -> None:
    """Compare runs: success overall and per skill beside the first run, and learning curves.

    A grid's folder (RUNS: the one folder a grid config ran into) compares each environment's
    cells with the reference method.
    """
    if len(runs) == 1 and (index := read_grid_index(Path(runs[0]))) is not None:
        compare_grid(Path(runs[0]), index, plot_path, html_path)
        return
    compared = load_compared_runs([Path(run) for run in runs])
    for warning in comparison_warnings(compared):
        click.echo(f"warning: {warning}", err=True)
    click.echo(format_runs(compared) + "\n")
    if replicates := format_replicates(compared):
        click.echo(replicates + "\n")
    click.echo(format_comparison([r.letter for r in compared], [r.metrics for r in compared]))
    click.echo("\n" + format_cost_table([(r.letter, r.record.cost) for r in compared]))
    click.echo("\n" + format_paired_gains([(r.letter, r.record) for r in compared]))
    for r in compared:
        if (probes := run_probes(r.record)) is not None:
            click.echo("\n" + format_probes(probes, f"{r.letter} probes"))
    target = Path(plot_path) if plot_path else default_plot_path(compared)
    click.echo(f"wrote {plot_comparison(compared, target)}")
    if html_path:
        for path in write_compare_page(compared, Path(html_path)):
            click.echo(f"wrote {path}")


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
