"""`lifelong-gym generate db`: write a fresh DB task set and its sample order."""

from __future__ import annotations

import logging

import click

from lifelong_gym.cli.generate import GeneratorOptions, generator_command
from lifelong_gym.envs.db.backends import BackendError, make_backend
from lifelong_gym.envs.db.generator import STYLES, generate_tasks, sample_order, skill_counts
from lifelong_gym.envs.db.tasks import to_record
from lifelong_gym.generation import coverage_line, write_task_set

DEFAULT_MYSQL = "mysql://root@127.0.0.1:3306"


@generator_command(
    "db",
    "Make a DB task set (SQL questions and changes over the 22 skills); every task's "
    "answer is checked on a MySQL server when one answers at --mysql.",
    count=500,
    count_help="Number of tasks.",
)
@click.option(
    "--mysql",
    default=DEFAULT_MYSQL,
    show_default=True,
    help="Server whose results every task must match; '' for none.",
)
@click.option(
    "--style",
    type=click.Choice(STYLES),
    default="templated",
    show_default=True,
    help="Wording: our templates, questions as people ask them over tables with human "
    "column names (plain), or both (mixed).",
)
def main(options: GeneratorOptions, mysql: str, style: str) -> None:
    """Generate tasks, check them on MySQL when reachable, and write the JSONL and order."""
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    check = None
    if mysql:
        click.echo(f"checking every task on MySQL at {mysql} (--mysql '' for none)", err=True)
        try:
            check = make_backend("mysql", mysql)
        except BackendError as error:
            click.echo(f"not checking on MySQL: {error}", err=True)
    try:
        tasks = generate_tasks(
            options.count,
            options.task_seed,
            check=check,
            exclude=options.exclude,
            style=style,
            progress=True,
        )
    finally:
        if check is not None:
            check.close()
    order = sample_order([task.index for task in tasks], options.task_seed)
    path, order_path = write_task_set([to_record(task) for task in tasks], order, options.path)
    checked = "checked on MySQL" if check is not None else "not checked on MySQL"
    click.echo(f"wrote {len(tasks)} tasks ({checked}) to {path} and the order to {order_path}")
    click.echo(coverage_line(skill_counts(tasks, style)))
    click.echo(f'use them: gym.make("LifelongDB-v0", tasks="{path}")')
