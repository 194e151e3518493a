"""The `lifelong-gym` command: run, report, compare, generate, build-image, serve, export, model.

Each command lives in a module of its own here and is imported only when it runs or shows
its help, so that `lifelong-gym report RUN` and `compare` load the results and nothing of
the runner, the agents or the environments.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from lifelong_gym.errors import LifelongGymError

#: each command and where it is: `module:function`
COMMANDS = {
    "build-image": "lifelong_gym.cli.build_image:build_image",
    "compare": "lifelong_gym.cli.compare:compare",
    "export": "lifelong_gym.cli.export:export",
    "generate": "lifelong_gym.cli.generate:generate",
    "model": "lifelong_gym.cli.model:model",
    "report": "lifelong_gym.cli.report:report",
    "run": "lifelong_gym.cli.run:run",
    "serve": "lifelong_gym.cli.serve:serve",
}


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
    """The command group: each command imported from its module only when it runs or shows
    its help, and any command's user error one line `Error: ...`, exit code 1."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands, by name."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """The command `name`, imported from its module."""
        if name not in COMMANDS:
            return None
        module, _, function = COMMANDS[name].partition(":")
        return getattr(importlib.import_module(module), function)

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
