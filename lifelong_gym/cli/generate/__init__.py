"""`lifelong-gym generate ENV`: each environment's task generator, imported when asked for.

`lifelong-gym generate db|os|kg` each take `--output`, `--name`, `--count`, `--seed`,
`--split`, `--exclude` (and `-h`), with the defaults shown in `-h` (`generator_command`);
where and how a set is written is `lifelong_gym.generation`'s.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lifelong_gym.generation import (
    DEFAULT_NAME,
    DEFAULT_OUTPUT,
    TASKS_SUFFIX,
    split_name,
    task_file,
)
from lifelong_gym.splits import SPLITS, split_seed, task_texts

# each generator's command (imported when it runs or shows its help) and what it makes
GENERATORS = {
    "db": ("lifelong_gym.cli.generate.db", "SQL tasks over the 22 skills."),
    "os": ("lifelong_gym.cli.generate.os", "Shell tasks over the 29 commands."),
    "kg": ("lifelong_gym.cli.generate.kg", "A graph and questions of 2 to 9 actions."),
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


@click.group(cls=Generators)
def generate() -> None:
    """Make a fresh, verified task set in ./lifelong-gym-tasks/ENV/ (or --output).

    Every generator takes --output, --name, --count, --seed, --split and --exclude;
    `lifelong-gym generate db -h` lists all of an environment's options and defaults.
    """


@dataclass(frozen=True)
class GeneratorOptions:
    """What the flags every generator takes say: the file to write, how many, which seed."""

    path: Path  # the .jsonl file to write
    count: int
    seed: int  # --seed as given
    task_seed: int  # the seed the tasks are drawn from: --seed, or --split's own
    exclude: frozenset[str]  # the task texts (`text_key`) the set must not repeat
    split: str | None


def generator_command(
    environment: str, description: str, *, count: int, count_help: str
) -> Callable[[Callable[..., None]], click.Command]:
    """`lifelong-gym generate ENV` from a function of `GeneratorOptions` and its own flags
    (each given with `@click.option` under this decorator)."""

    def decorate(generate: Callable[..., None]) -> click.Command:
        def callback(**flags: Any) -> None:
            name, seed, split = flags.pop("name"), flags.pop("seed"), flags.pop("split")
            options = GeneratorOptions(
                path=task_file(flags.pop("output"), environment, split_name(name, split)),
                count=flags.pop("count"),
                seed=seed,
                task_seed=split_seed(seed, split),
                exclude=frozenset(task_texts(flags.pop("exclude"))),
                split=split,
            )
            generate(options, **flags)

        common = [
            click.Option(
                ["--output"],
                type=click.Path(path_type=Path),
                help=f"The folder to write into, or the {TASKS_SUFFIX} file to write "
                f"(default ./{DEFAULT_OUTPUT}/{environment}/).",
            ),
            click.Option(
                ["--name"],
                default=DEFAULT_NAME,
                show_default=True,
                help=f"The task set's name: its files are NAME{TASKS_SUFFIX} and "
                "NAME.order.json (with --split and no --name: the split's name).",
            ),
            click.Option(
                ["--count"],
                type=click.IntRange(min=1),
                default=count,
                show_default=True,
                help=count_help,
            ),
            click.Option(["--seed"], type=int, default=0, show_default=True, help="Random seed."),
            click.Option(
                ["--split"],
                type=click.Choice(SPLITS),
                help="Draw the tasks from a seed derived from --seed and this name "
                "(disjoint splits).",
            ),
            click.Option(
                ["--exclude"],
                type=click.Path(path_type=Path),
                multiple=True,
                metavar="FILE",
                help="A task file whose task texts this set must not repeat (repeatable).",
            ),
        ]
        return click.Command(
            environment,
            callback=callback,
            params=common + list(reversed(getattr(generate, "__click_params__", []))),
            help=description,
            context_settings={"help_option_names": ["-h", "--help"]},
        )

    return decorate
