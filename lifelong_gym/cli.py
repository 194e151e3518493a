"""The `lifelong-gym` command: run (or resume) a lifelong evaluation, and report on one."""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path

import click

from lifelong_gym.errors import LifelongGymError
from lifelong_gym.run.compare import (
    COMPARISON_PLOT,
    format_comparison,
    load_run_metrics,
    plot_comparison,
)
from lifelong_gym.run.config import build_runner, load_run_config, parse_env_args
from lifelong_gym.run.report import format_report, report_run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log what the run does.")
def main(verbose: bool) -> None:
    """Lifelong evaluation of LLM agents on Gymnasium environments."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


@main.command()
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="YAML config.")
@click.option("--env", help="Environment id (default LifelongDB-v0).")
@click.option("--agent", help="Agent spec (default oracle).")
@click.option("--output", type=click.Path(file_okay=False), help="Output folder of the run.")
@click.option("--tasks", help="Task file or shipped task-set name.")
@click.option("--env-arg", "env_args", multiple=True, help="Environment argument key=value.")
@click.option("--max-tasks", type=int, help="Stop after this many tasks.")
@click.option("--callback", "callbacks", multiple=True, help="NAME[:key=value,...]")
@click.option("--order", type=click.Choice(["sample", "shuffled"]), help="Task order.")
@click.option("--seed", type=int, help="Seed of the shuffled order.")
@click.option("--max-consecutive-failures", type=int, help="Stop after this many in a row.")
@click.option("--overwrite", is_flag=True, default=None, help="Start over instead of resuming.")
@click.option("--no-progress", "progress", flag_value=False, default=None, help="Be quiet.")
def run(config_path: str | None, **flags: object) -> None:
    """Run a lifelong evaluation; the same command again resumes it."""
    try:
        flags["env_args"] = parse_env_args(flags["env_args"]) or None  # type: ignore[arg-type]
        config = load_run_config(config_path, flags)
        runner = build_runner(config)
        try:
            runner.run()
        finally:
            runner.env.close()
    except LifelongGymError as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted; run the same command again to resume", err=True)
        raise SystemExit(130) from None
    click.echo(f"results in {config.output}")


@main.command()
@click.argument("output", type=click.Path(exists=True, file_okay=False))
def report(output: str) -> None:
    """Print the metrics of a finished or partial run and write its plots."""
    try:
        metrics, plots = report_run(Path(output))
    except (FileNotFoundError, LifelongGymError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(format_report(metrics))
    for path in plots:
        click.echo(f"wrote {path}")


@main.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--plot", "plot_path", type=click.Path(dir_okay=False), help="Where to write the plot."
)
def compare(runs: tuple[str, ...], plot_path: str | None) -> None:
    """Compare runs: success overall and per skill beside the first run, and learning curves."""
    folders = [Path(run) for run in runs]
    try:
        metrics = [load_run_metrics(folder) for folder in folders]
    except (FileNotFoundError, LifelongGymError) as error:
        raise click.ClickException(str(error)) from None
    names = [folder.name for folder in folders]
    click.echo(format_comparison(names, metrics))
    target = Path(plot_path) if plot_path else folders[0].parent / COMPARISON_PLOT
    click.echo(f"wrote {plot_comparison(names, metrics, target)}")


@main.command("build-image")
@click.argument("environment", type=click.Choice(["os"]))
@click.option("--name", help="Image name (default lifelong-gym/os:latest).")
@click.option("--suite", help="Debian suite (default bookworm).")
@click.option("--mirror", help="Debian mirror URL (default deb.debian.org).")
@click.option("--force", is_flag=True, help="Rebuild even if the image exists.")
def build_image(environment: str, force: bool, **choices: str | None) -> None:
    """Build an environment's container image offline (debootstrap + docker import)."""
    from lifelong_gym.envs.os.image import build_image as build

    given = {key: value for key, value in choices.items() if value is not None}
    try:
        click.echo(build(**given, force=force))
    except LifelongGymError as error:
        raise click.ClickException(str(error)) from None


GENERATORS = {
    "db": "lifelong_gym.envs.db.generator.__main__",
    "os": "lifelong_gym.envs.os.generate",
    "kg": "lifelong_gym.envs.kg.generate",
}


@main.command(
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "allow_interspersed_args": False,  # `generate db -h` is the generator's own help
    }
)
@click.argument("environment", type=click.Choice(sorted(GENERATORS)))
@click.pass_context
def generate(context: click.Context, environment: str) -> None:
    """Make a fresh, verified task set (`lifelong-gym generate db -h` lists its options)."""
    module = importlib.import_module(GENERATORS[environment])
    sys.argv[0] = f"lifelong-gym generate {environment}"
    raise SystemExit(module.main(context.args) or 0)


if __name__ == "__main__":
    main()
