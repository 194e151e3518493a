"""`lifelong-gym export sft|harbor`: what the environments hold, as training data."""

from __future__ import annotations

import click

from lifelong_gym.arguments import parse_flag_assignments
from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.methods import Method


@click.group()
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
@click.option(
    "--method",
    "method_spec",
    help="A method callback (NAME[:key=value,...], as --callback takes): the tasks are played "
    "as a stream through it, so each prompt holds what the method inserted "
    "(reasoning_memory:distiller=rule also writes its distillation requests as rows).",
)
@click.option(
    "--no-learning-requests",
    "learning_requests",
    is_flag=True,
    flag_value=False,
    default=True,
    help="Leave out the rows of the method's learning requests (its distillations).",
)
@click.option("--overwrite", is_flag=True, help="Replace a dataset already in --out.")
@click.option("--no-progress", "progress", is_flag=True, flag_value=False, default=True)
def export_sft(
    env_id: str,
    tasks: str | None,
    out: str,
    action_format: str,
    env_args: tuple[str, ...],
    method_spec: str | None,
    learning_requests: bool,
    overwrite: bool,
    progress: bool,
) -> None:
    """The oracle's solved episodes as an SFT dataset (parquet, TRL's conversational format)."""
    from lifelong_gym.training.sft_export import export_sft as write

    method = method_of(method_spec) if method_spec else None

    summary = write(
        env_id,
        out,
        tasks=tasks,
        action_format=action_format,
        env_kwargs=parse_flag_assignments("--env-arg", env_args),
        overwrite=overwrite,
        progress=progress,
        method=method,
        method_spec=method_spec,
        learning_requests=learning_requests,
    )
    kinds = ", ".join(f"{count} {kind}" for kind, count in summary.kinds.items())
    of_kinds = f" ({kinds})" if len(summary.kinds) > 1 else ""
    left_out = f" ({summary.left_out} unsolved tasks left out)" if summary.left_out else ""
    click.echo(f"wrote {summary.rows} demonstrations{of_kinds} to {summary.folder}{left_out}")


def method_of(spec: str) -> Method:
    """The method a `--callback`-style spec names; a callback that is no method is one line."""
    from lifelong_gym.run.method_callbacks import MethodCallback
    from lifelong_gym.run.registry import make_callback

    callback = make_callback(spec)
    if not isinstance(callback, MethodCallback):
        raise CallbackSpecError(
            f"--method {spec}: {type(callback).__name__} is a callback, not a method "
            "(lifelong_gym.methods.Method) that writes into prompts"
        )
    return callback.method


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
    from lifelong_gym.envs.os.harbor.export import export_harbor as write
    from lifelong_gym.envs.os.image import DEFAULT_IMAGE

    if env_id != "LifelongOS-v0":
        raise click.UsageError(f"--env {env_id}: Harbor tasks are shell tasks; use LifelongOS-v0")
    summary = write(tasks, out, image=image or DEFAULT_IMAGE, overwrite=overwrite)
    click.echo(f"wrote {summary.written} Harbor task folders to {summary.folder}")
    for record in summary.skipped:
        click.echo(f"left out task {record.key}: {record.reason}", err=True)
