"""`lifelong-gym generate ENV`: each environment's task generator, imported when asked for."""

from __future__ import annotations

import importlib

import click

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


@click.group(cls=Generators)
def generate() -> None:
    """Make a fresh, verified task set in ./lifelong-gym-tasks/ENV/ (or --output).

    Every generator takes --output, --name, --count, --seed, --split and --exclude;
    `lifelong-gym generate db -h` lists all of an environment's options and defaults.
    """
