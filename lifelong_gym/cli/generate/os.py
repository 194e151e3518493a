"""`lifelong-gym generate os`: OS tasks, each verified in a fresh container, and their order."""

from __future__ import annotations

from collections import Counter

import click

from lifelong_gym.cli.generate import GeneratorOptions, generator_command
from lifelong_gym.envs.os.generator import (
    KINDS,
    generate_tasks,
    kind_skills,
    sample_order,
    verify_tasks,
)
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.generation import coverage_line, write_task_set


@generator_command(
    "os",
    "Make an OS task set (Linux administration over the 29 command skills); every task is "
    "verified in a fresh container: its check fails before the reference solution and "
    "passes after it.",
    count=300,
    count_help="Number of tasks.",
)
@click.option(
    "--image",
    default=DEFAULT_IMAGE,
    show_default=True,
    help="The sandbox image the tasks are verified in (lifelong-gym build-image os).",
)
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default="change",
    show_default=True,
    help="change: tasks that ask for a change, judged by a script; question: tasks that ask "
    "a question, answered with `Act: answer(VALUE)`; mixed: both.",
)
@click.option("--no-verify", is_flag=True, help="Skip the check in containers.")
def main(options: GeneratorOptions, image: str, kind: str, no_verify: bool) -> None:
    """Command line: generate, verify in containers, and write the task set."""
    tasks = generate_tasks(options.count, options.task_seed, exclude=options.exclude, kind=kind)
    if not no_verify:
        problems = verify_tasks(tasks, image)
        if problems:
            for index, problem in sorted(problems.items()):
                click.echo(f"task {index}: {problem}", err=True)
            raise click.ClickException(
                f"{len(problems)} of {len(tasks)} tasks failed their check (listed above); "
                "nothing written"
            )
    records = [task.model_dump(exclude_defaults=True) for task in tasks]
    path, order_path = write_task_set(records, sample_order(tasks, options.task_seed), options.path)
    coverage = Counter(s for t in tasks for s in t.skills)
    click.echo(f"wrote {len(tasks)} tasks to {path} and the order to {order_path}")
    click.echo(coverage_line({skill: coverage[skill] for skill in kind_skills(kind)}))
    click.echo(f'use them: gym.make("LifelongOS-v0", tasks="{path}")')
