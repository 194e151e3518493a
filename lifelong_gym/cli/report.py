"""`lifelong-gym report RUN`: a run's metrics, cost, gain and probes, its plots and page."""

from __future__ import annotations

from pathlib import Path

import click

from lifelong_gym.results.cost_summary import format_cost
from lifelong_gym.results.costs import parse_price
from lifelong_gym.results.folder import disk_space_of
from lifelong_gym.results.gain import Gain, format_gain
from lifelong_gym.results.probe_display import format_probes, run_probes
from lifelong_gym.results.report import format_report, report_run


@click.command()
@click.argument("output", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--price-per-mtok", help="Dollars per million tokens, PROMPT[,GENERATED] (default: the run's)."
)
def report(output: str, price_per_mtok: str | None) -> None:
    """Print the metrics, cost and gain of a finished or partial run; write its plots and
    report.html."""
    price = parse_price(price_per_mtok) if price_per_mtok is not None else None
    with disk_space_of(Path(output), "report again"):
        run, written, gain = report_run(Path(output), price=price)
    click.echo(format_report(run.metrics))
    click.echo(format_cost(run.cost))
    if gain is not None:
        click.echo(format_gain(gain) if isinstance(gain, Gain) else gain)
    if (probes := run_probes(run)) is not None:
        click.echo(format_probes(probes))
    for path in written:
        click.echo(f"wrote {path}")
