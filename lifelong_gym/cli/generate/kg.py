"""`lifelong-gym generate kg`: a seeded graph, questions over it, and their order."""

from __future__ import annotations

import click
from click.core import ParameterSource

from lifelong_gym.cli.generate import GeneratorOptions, generator_command
from lifelong_gym.envs.kg.generator import SHAPES, generate, graph_file
from lifelong_gym.errors import ConfigError


@generator_command(
    "kg",
    "Make a KG task set: a seeded Freebase-shaped graph (written beside the tasks) and "
    "questions answered by running their logical form.",
    count=52 * len(SHAPES),
    count_help=f"Number of questions, spread evenly over the {len(SHAPES)} lengths of "
    "action list (2 to 9).",
)
@click.option(
    "--scale", type=float, default=1.0, show_default=True, help="Entity counts multiplier."
)
# N questions of every length: --count 8N said another way (hidden)
@click.option("--per-length", type=click.IntRange(min=1), hidden=True)
@click.pass_context
def main(
    context: click.Context, options: GeneratorOptions, scale: float, per_length: int | None
) -> None:
    """Write the graph, the questions and their order; say how to use them."""
    count = options.count
    if per_length is not None:
        if context.get_parameter_source("count") is not ParameterSource.DEFAULT:
            raise ConfigError(f"--per-length N is --count {len(SHAPES)}N; give one of them")
        count = per_length * len(SHAPES)
    shared = options.split is not None
    triples, questions = generate(
        options.seed,
        count,
        options.path,
        scale,
        question_seed=options.task_seed,
        exclude=options.exclude,
        shared_graph=shared,
    )
    graph_path = graph_file(options.path, shared=shared)
    click.echo(
        f"wrote {triples} triples to {graph_path} and {questions} questions to {options.path}"
    )
    click.echo(f'use them: gym.make("LifelongKG-v0", tasks="{options.path}", graph="{graph_path}")')
