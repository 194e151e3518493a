"""One run as `lifelong-gym run` plays it: the stream and its stateless twin, each with its
report printed, then the gain over the twin and the probe measures.

The command (`lifelong_gym.cli.run`) parses the flags and the config and plays each run,
and each cell of a grid, with `run_with_twin`.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import click

from lifelong_gym.errors import RunAbortedError
from lifelong_gym.metrics import LifelongMetrics
from lifelong_gym.results.cost_summary import format_cost
from lifelong_gym.results.gain import format_gain, paired_gain
from lifelong_gym.results.probe_display import format_probes, run_probes
from lifelong_gym.results.report import format_report
from lifelong_gym.results.run_record import load_run
from lifelong_gym.run.config import RunConfig, build_runner
from lifelong_gym.run.runner import Runner
from lifelong_gym.run.sigterm import StopRequest

PlayedRun = tuple[Path, LifelongMetrics]  # a run's folder and the metrics it ended with


def run_with_twin(config: RunConfig, stop: StopRequest | None = None) -> list[PlayedRun]:
    """Run one run and, with `stateless_baseline`, its stateless twin, then print the gain
    and the probe measures (if the run has probes); the runs played and their metrics.

    From Python: `run_with_twin(RunConfig(output=..., callbacks=[...],
    stateless_baseline=True))`. `stop`: a SIGTERM watcher (the command's), if any."""
    stop = stop or StopRequest()
    runner = build_runner(config)
    try:
        stop.watch(runner)
        played = [(config.output, play(runner, config.progress))]
        click.echo(f"results in {config.output}")
        if config.stateless_baseline and not stop.requested:
            played.append(play_twin(config, runner, stop))
        if not stop.requested:
            print_measures(config)
        return played
    finally:
        close_envs(runner)


def play_twin(config: RunConfig, runner: Runner, stop: StopRequest) -> PlayedRun:
    """Run the stateless twin of `config` with the agent of `runner`."""
    twin = config.stateless_twin()
    if config.progress:
        click.echo(f"the stateless twin: the same stream, no callbacks, in {twin.output}")
    twin_runner = build_runner(twin, agent=runner.agent)
    try:
        stop.watch(twin_runner)
        played = (twin.output, play(twin_runner, config.progress))
    finally:
        close_envs(twin_runner)
    click.echo(f"results in {twin.output}")
    return played


def print_measures(config: RunConfig) -> None:
    """What a finished run measured beyond its report: the gain over its twin, the probes
    (the run is read back from its folder only when it has either)."""
    if not config.stateless_baseline and config.probes is None:
        return
    run = load_run(config.output)
    if config.stateless_baseline:
        click.echo(format_gain(paired_gain(run, load_run(config.stateless_twin().output))))
    if (probes := run_probes(run)) is not None:
        click.echo(format_probes(probes))


def play(runner: Runner, progress: bool) -> LifelongMetrics:
    """Run the stream and, with `progress`, print its report: at the end, or where a run of
    failures stopped it. The run's metrics."""
    runner.notify = partial(click.echo, err=True)
    try:
        metrics = runner.run()
    except RunAbortedError:
        if progress:
            print_report(runner)
        raise
    if progress:
        print_report(runner)
    return metrics


def print_report(runner: Runner) -> None:
    """The metrics and the cost of the sessions a run has finished."""
    click.echo(format_report(runner.metrics()))
    click.echo(format_cost(runner.cost()))


def close_envs(runner: Runner) -> None:
    """Close the environments a run was built with: the stream's and the probe set's."""
    runner.env.close()
    if runner.probes is not None:
        runner.probes.close()
