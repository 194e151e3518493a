"""`lifelong-gym generate db`: write a fresh DB task set and its sample order."""

from __future__ import annotations

import logging
import sys

from lifelong_gym.generation import generator_parser, set_name, task_file, write_task_set
from lifelong_gym.splits import split_options

from ..backends import BackendError, make_backend
from ..tasks import to_record
from . import MIN_PER_SKILL, generate_tasks, sample_order, skill_counts

DEFAULT_MYSQL = "mysql://root@127.0.0.1:3306"


def main(argv: list[str] | None = None) -> int:
    """Generate tasks, check them on MySQL when reachable, and write the JSONL and order."""
    parser = generator_parser("db", __doc__)
    parser.add_argument("--count", type=int, default=500, help="number of tasks (500)")
    parser.add_argument(
        "--mysql",
        default=DEFAULT_MYSQL,
        help=f"server whose results every task must match ({DEFAULT_MYSQL}); '' for none",
    )
    args = parser.parse_args(argv)
    seed, exclude = split_options(parser, args)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    path = task_file(args.output, "db", set_name(args))
    check = None
    if args.mysql:
        try:
            check = make_backend("mysql", args.mysql)
        except BackendError as error:
            print(f"not checking on MySQL: {error}", file=sys.stderr)
    try:
        tasks = generate_tasks(args.count, seed, check=check, exclude=exclude, progress=True)
    finally:
        if check is not None:
            check.close()
    order = sample_order([task.index for task in tasks], seed)
    path, order_path = write_task_set([to_record(task) for task in tasks], order, path)
    for skill, count in skill_counts(tasks).items():
        flag = "" if count >= MIN_PER_SKILL else f"  (fewer than {MIN_PER_SKILL})"
        print(f"{skill:50s} {count:4d}{flag}")
    checked = "checked on MySQL" if check is not None else "not checked on MySQL"
    print(f"wrote {len(tasks)} tasks ({checked}) to {path} and the order to {order_path}")
    print(f'use them: gym.make("LifelongDB-v0", tasks="{path}")')
    return 0


if __name__ == "__main__":
    sys.exit(main())
