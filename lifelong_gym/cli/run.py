"""`lifelong-gym run`: one run (and its twin), its replicates, or the cells of a grid config.

The flags are the fields of `RunConfig` (`config_flags.py`); Ctrl-C or SIGTERM ends the
command with a line that says how to resume, and sessions that errored end it with a line
that says how to play them again (exit code 3).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import click

from lifelong_gym.cli.config_flags import flag_settings, model_flags
from lifelong_gym.errors import RunErrorsError
from lifelong_gym.metrics import format_status_counts
from lifelong_gym.run.config import RunConfig, read_config_file, run_config
from lifelong_gym.run.grid import is_grid, load_grid, run_grid
from lifelong_gym.run.play import PlayedRun, run_with_twin
from lifelong_gym.run.sigterm import EXIT_CODE as SIGTERM_EXIT_CODE
from lifelong_gym.run.sigterm import StopRequest, stop_on_sigterm


def _run(config_path: str | None, only: tuple[str, ...], **flags: object) -> None:
    """Run a lifelong evaluation, or every cell of a grid config; the same command again
    resumes it."""
    flags = flag_settings(RunConfig, flags)
    settings = read_config_file(config_path)
    if only and not is_grid(settings):
        raise click.UsageError("--only picks cells of a grid config (one with a grid: section)")
    with stop_on_sigterm() as stop:
        if is_grid(settings):
            run_grid_config(settings, flags, only, stop)
            return
        config = run_config(settings, flags)
        config.check()  # a bad price, probe setting, callback or env argument: before anything runs
        runs = config.replicate_runs()
        raise_if_errored([played for run in runs for played in run_resumable(run, stop)])


run = click.Command(
    "run",
    callback=_run,
    help=_run.__doc__,
    params=[
        click.Option(
            ["--config", "config_path"], type=click.Path(dir_okay=False), help="YAML config."
        ),
        *model_flags(RunConfig),
        click.Option(
            ["--only"],
            multiple=True,
            metavar="ENV[/METHOD]",
            help="With a grid config: run only the cells that match (globs; repeatable).",
        ),
    ],
)


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


def run_resumable(config: RunConfig, stop: StopRequest) -> list[PlayedRun]:
    """One run (and its twin); Ctrl-C or SIGTERM ends the command, saying how to resume."""
    try:
        played = run_with_twin(config, stop)
    except KeyboardInterrupt:
        click.echo("\ninterrupted; run the same command again to resume", err=True)
        raise SystemExit(130) from None
    if stop.requested:
        click.echo(
            "stopped on SIGTERM after the tasks in flight; run the same command again to resume",
            err=True,
        )
        raise SystemExit(SIGTERM_EXIT_CODE)
    return played


def raise_if_errored(played: Sequence[PlayedRun]) -> None:
    """Sessions that errored in the runs played, as one `RunErrorsError` line (the command
    exits with 3): how many, their statuses, and how to play them again."""
    errored = [(folder, metrics) for folder, metrics in played if metrics.errored]
    if not errored:
        return
    statuses: Counter[str] = Counter()
    for _, metrics in errored:
        statuses.update(metrics.errored_counts)
    counts = format_status_counts(statuses)
    folders = ", ".join(str(folder) for folder, _ in errored)
    total = statuses.total()
    sessions = "1 session" if total == 1 else f"{total} sessions"
    raise RunErrorsError(
        f"{sessions} errored ({counts}) in {folders}: not counted in the success rate; fix "
        "the cause and run the same command with --retry-errors to play them again "
        "(docs/runner.md)"
    )
