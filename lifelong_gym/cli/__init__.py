"""The `lifelong-gym` command: run, report, compare, generate, build-image, serve, export, model."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from lifelong_gym.errors import LifelongGymError
from lifelong_gym.orders import ORDERS
from lifelong_gym.results.compare import (
    comparison_warnings,
    default_plot_path,
    format_comparison,
    format_replicates,
    format_runs,
    load_compared_runs,
    plot_comparison,
)
from lifelong_gym.results.cost_summary import format_cost, format_cost_table
from lifelong_gym.results.costs import parse_price
from lifelong_gym.results.folder import disk_space_of
from lifelong_gym.results.gain import Gain, format_gain, format_paired_gains
from lifelong_gym.results.grid_compare import read_grid_index
from lifelong_gym.results.html_compare import write_compare_page
from lifelong_gym.results.probe_display import format_probes, run_probes
from lifelong_gym.results.report import format_report, report_run
from lifelong_gym.run.config import parse_env_args, read_config_file, run_config
from lifelong_gym.run.grid import is_grid
from lifelong_gym.cli.grid import compare_grid, run_grid_config
from lifelong_gym.run.play import raise_if_errored, run_resumable
from lifelong_gym.run.sigterm import stop_on_sigterm


@contextmanager
def one_line_errors() -> Iterator[None]:
    """The suite's errors and Click's usage errors as one line `Error: ...`, exit code 1 (or
    the error's own `exit_code`: 3 for sessions that errored)."""
    try:
        yield
    except LifelongGymError as error:
        one_line = click.ClickException(str(error))
        one_line.exit_code = getattr(error, "exit_code", one_line.exit_code)
        raise one_line from None
    except click.exceptions.NoArgsIsHelpError as error:
        error.exit_code = 1  # a bare group prints its help, with the one exit code
        raise
    except click.UsageError as error:
        command = error.ctx.command_path if error.ctx else "lifelong-gym"
        raise click.ClickException(f"{error.format_message()} (see `{command} -h`)") from None


class Commands(click.Group):
    """The command group: any command's user error is one line `Error: ...`, exit code 1."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        """Parse the group's own flags; a bad one is one line."""
        with one_line_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; its flags' and the suite's errors become one line."""
        with one_line_errors():
            return super().invoke(ctx)


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    help="A module to import first: its agents and callbacks (repeatable).",
)
@click.option(
    "--order", type=click.Choice(ORDERS), help="Task order (docs/runner.md, Controlled streams)."
)
@click.option("--seed", type=int, help="Seed of the order (shuffled and blocks need one).")
@click.option(
    "--replicates", type=int, help="K runs in orders seeded seed..seed+K-1, in OUTPUT/seed-N."
)
@click.option("--max-consecutive-failures", type=int, help="Stop after this many in a row.")
@click.option("--concurrency", type=int, help="Run up to this many tasks at once (default 1).")
@click.option("--ray", help="Run the environments in Ray actors: ADDRESS, auto or local.")
@click.option("--overwrite", is_flag=True, default=None, help="Start over instead of resuming.")
@click.option(
    "--retry-errors",
    is_flag=True,
    default=None,
    help="Resume from the first errored session: play it and the ones after it again.",
)
@click.option("--no-progress", "progress", flag_value=False, default=None, help="Be quiet.")
@click.option(
    "--stateless-baseline",
    is_flag=True,
    default=None,
    help="Also run the same stream with no callbacks into OUTPUT/stateless; print the gain.",
)
@click.option(
    "--price-per-mtok", help="Dollars per million tokens, PROMPT[,GENERATED]: prices the cost."
)
@click.option("--probe-every", type=int, help="Play the probe set at 0, N, 2N, ... stream tasks.")
@click.option("--probes", help="The probe set: a task file of the same environment.")
@click.option(
    "--only",
    multiple=True,
    metavar="ENV[/METHOD]",
    help="With a grid config: run only the cells that match (globs; repeatable).",
)
def run(config_path: str | None, only: tuple[str, ...], **flags: object) -> None:
    """Run a lifelong evaluation, or every cell of a grid config; the same command again
    resumes it."""
    flags["env_args"] = parse_env_args(flags["env_args"]) or None  # type: ignore[arg-type]
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


@main.command()
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


@main.command()
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


IMAGE_BUILDERS = {"os": "lifelong_gym.envs.os.image", "mysql": "lifelong_gym.envs.db.image"}


@main.command("build-image")
@click.argument("environment", type=click.Choice(sorted(IMAGE_BUILDERS)))
@click.option("--name", help="Image name (default lifelong-gym/ENVIRONMENT:latest).")
@click.option("--suite", help="Debian suite (default bookworm).")
@click.option("--mirror", help="Debian mirror URL (default deb.debian.org).")
@click.option("--force", is_flag=True, help="Rebuild even if the image exists.")
@click.option("--rootfs", help="os only: build a root file system folder (sandbox='oci').")
def build_image(environment: str, force: bool, rootfs: str | None, **choices: str | None) -> None:
    """Build an environment's container image offline (debootstrap + docker import).

    ENVIRONMENT is `os` (the OS tasks' sandbox) or `mysql` (the server that
    `backend=mysql` without a url starts). `--rootfs DIR` builds the OS sandbox's root
    file system into DIR instead, with no Docker (for `sandbox="oci"`).
    """
    module = importlib.import_module(IMAGE_BUILDERS[environment])
    given = {key: value for key, value in choices.items() if value is not None}
    if rootfs is not None:
        if environment != "os" or "name" in given:
            raise click.UsageError("--rootfs goes with `os` and without --name")
        given["folder"] = rootfs
    build = module.build_rootfs if rootfs is not None else module.build_image
    click.echo(build(**given, force=force))


# each generator's module (imported when it runs or shows its help) and what it makes
GENERATORS = {
    "db": ("lifelong_gym.envs.db.generator.command", "SQL tasks over the 22 skills."),
    "os": ("lifelong_gym.envs.os.generator", "Shell tasks over the 29 commands."),
    "kg": ("lifelong_gym.envs.kg.generator", "A graph and questions of 2 to 9 actions."),
}


class Generators(click.Group):
    """`generate ENV`: each environment's generator, imported only when it is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The environments that have a generator."""
        return sorted(GENERATORS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """The generator command of environment `name`."""
        if name not in GENERATORS:
            return None
        return importlib.import_module(GENERATORS[name][0]).main

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The environments and what each makes, without importing the generators."""
        with formatter.section("Environments"):
            formatter.write_dl([(name, GENERATORS[name][1]) for name in sorted(GENERATORS)])


@main.group(cls=Generators)
def generate() -> None:
    """Make a fresh, verified task set in ./lifelong-gym-tasks/ENV/ (or --output).

    Every generator takes --output, --name, --count, --seed, --split and --exclude;
    `lifelong-gym generate db -h` lists all of an environment's options and defaults.
    """


@main.command()
@click.option("--env", "env_id", default="LifelongDB-v0", show_default=True, help="Env id.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on.")
@click.option("--env-arg", "env_args", multiple=True, help="Environment argument key=value.")
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Sessions at once.",
)
@click.option(
    "--session-wait",
    type=click.FloatRange(min=0),
    help="A session past --max-sessions waits this many seconds for a place, then is "
    "refused with CAPACITY_REACHED (default 30; not with --mcp).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="OpenEnv: worker processes sharing the port, each with --max-sessions of its own "
    "(one Python process steps on one core at a time).",
)
@click.option("--mcp", is_flag=True, help="Serve over MCP (Streamable HTTP at /mcp) instead.")
@click.option(
    "--session-idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="With --mcp: close a session idle this many seconds (default 300).",
)
def serve(
    env_id: str,
    host: str,
    port: int,
    env_args: tuple[str, ...],
    max_sessions: int,
    session_wait: float | None,
    workers: int,
    mcp: bool,
    session_idle_timeout: float | None,
) -> None:
    """Serve an environment over OpenEnv's protocol: one environment per WebSocket session.

    Needs the openenv extra: pip install 'lifelong-gym[openenv]'. Clients connect with
    `lifelong_gym.integrations.openenv.LifelongEnvClient` (the same extra). A session past
    --max-sessions waits its turn up to --session-wait seconds, then is refused with the
    error code CAPACITY_REACHED; LifelongEnvClient asks again with backoff.

    With --mcp, over the Model Context Protocol instead: each MCP session plays one task
    with the tools `start_task` and the environment's own. Needs the mcp extra (mcp 2.3,
    in an environment without openenv): pip install 'lifelong-gym[mcp]'.
    """
    kwargs = parse_env_args(env_args)
    if not mcp:
        if session_idle_timeout is not None:
            raise click.UsageError("--session-idle-timeout goes with --mcp")
        from lifelong_gym.integrations.openenv import DEFAULT_SESSION_WAIT
        from lifelong_gym.integrations.openenv import serve as serve_openenv

        serve_openenv(
            env_id,
            kwargs,
            host=host,
            port=port,
            max_sessions=max_sessions,
            session_wait=DEFAULT_SESSION_WAIT if session_wait is None else session_wait,
            workers=workers,
        )
        return
    if workers != 1:
        raise click.UsageError("--workers goes with OpenEnv (MCP serves from one process)")
    if session_wait is not None:
        raise click.UsageError("--session-wait goes with OpenEnv (the MCP SDK refuses at once)")
    from lifelong_gym.integrations.mcp import DEFAULT_SESSION_IDLE_TIMEOUT
    from lifelong_gym.integrations.mcp import serve as serve_mcp

    serve_mcp(
        env_id,
        kwargs,
        host=host,
        port=port,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_timeout or DEFAULT_SESSION_IDLE_TIMEOUT,
    )


@main.group()
def export() -> None:
    """Write what the environments hold as training data."""


@export.command("sft")
@click.option("--env", "env_id", default="LifelongDB-v0", show_default=True, help="Env id.")
@click.option("--tasks", help="Task file or shipped task-set name (default: the env's own).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Dataset folder.")
@click.option(
    "--action-format",
    type=click.Choice(["text", "tools"]),
    default="text",
    show_default=True,
    help="The replies as the benchmark's text actions or as native tool calls.",
)
@click.option("--env-arg", "env_args", multiple=True, help="Environment argument key=value.")
@click.option("--overwrite", is_flag=True, help="Replace a dataset already in --out.")
@click.option("--no-progress", "progress", is_flag=True, flag_value=False, default=True)
def export_sft(
    env_id: str,
    tasks: str | None,
    out: str,
    action_format: str,
    env_args: tuple[str, ...],
    overwrite: bool,
    progress: bool,
) -> None:
    """The oracle's solved episodes as an SFT dataset (parquet, TRL's conversational format)."""
    from lifelong_gym.training.sft_export import export_sft as write

    summary = write(
        env_id,
        out,
        tasks=tasks,
        action_format=action_format,
        env_kwargs=parse_env_args(env_args),
        overwrite=overwrite,
        progress=progress,
    )
    left_out = f" ({summary.left_out} unsolved tasks left out)" if summary.left_out else ""
    click.echo(f"wrote {summary.rows} demonstrations to {summary.folder}{left_out}")


@export.command("harbor")
@click.option("--env", "env_id", default="LifelongOS-v0", show_default=True, help="Env id (OS).")
@click.option("--tasks", help="Task file or shipped task-set name (default: the env's own).")
@click.option("--out", required=True, type=click.Path(), help="Folder of task folders.")
@click.option("--image", help="The image the Dockerfiles start FROM (default: the OS image).")
@click.option("--overwrite", is_flag=True, help="Replace task folders already in --out.")
def export_harbor(
    env_id: str, tasks: str | None, out: str, image: str | None, overwrite: bool
) -> None:
    """Each OS task as a Harbor folder: instruction, task.toml, Dockerfile, tests, solution."""
    from lifelong_gym.envs.os.harbor_export import export_harbor as write
    from lifelong_gym.envs.os.image import DEFAULT_IMAGE

    if env_id != "LifelongOS-v0":
        raise click.UsageError(f"--env {env_id}: Harbor tasks are shell tasks; use LifelongOS-v0")
    summary = write(tasks, out, image=image or DEFAULT_IMAGE, overwrite=overwrite)
    click.echo(f"wrote {summary.written} Harbor task folders to {summary.folder}")
    for record in summary.skipped:
        click.echo(f"left out task {record.key}: {record.reason}", err=True)


@main.command()
@click.argument("source")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--dtype", default="float32", show_default=True, help="Weights' dtype in FOLDER.")
def model(source: str, folder: str, dtype: str) -> None:
    """Save a GGUF model as a model folder, once: SOURCE is `smollm2` or a .gguf file.

    Loading a GGUF file takes minutes on a CPU; the folder loads in seconds wherever a model
    folder is taken (`--agent hf:FOLDER`, `TransformersPolicy(FOLDER)`, the examples).
    """
    from lifelong_gym.agents.models.gguf import (
        free_model_folder,
        packaged_or_gguf,
        save_model_folder,
    )

    gguf = packaged_or_gguf(source)
    free_model_folder(folder)
    click.echo(f"loading {gguf} (a few minutes on a CPU) ...", err=True)
    click.echo(f"saved {save_model_folder(gguf, folder, dtype)}")

