"""`lifelong-gym generate db`: write a fresh DB task set and its sample order."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from lifelong_gym.splits import add_split_arguments, split_options

from ..backends import BackendError, make_backend
from ..tasks import to_record
from . import MIN_PER_SKILL, generate_tasks, sample_order, skill_counts

DEFAULT_MYSQL = "mysql://root@127.0.0.1:3306"


def main(argv: list[str] | None = None) -> int:
    """Generate tasks, check them on MySQL when reachable, and write the JSONL and order."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=500, help="number of tasks (500)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--out", type=Path, required=True, help="the .jsonl file to write")
    parser.add_argument(
        "--mysql",
        default=DEFAULT_MYSQL,
        help=f"server whose results every task must match ({DEFAULT_MYSQL}); '' for none",
    )
    add_split_arguments(parser)
    args = parser.parse_args(argv)
    seed, exclude = split_options(parser, args)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if args.out.suffix != ".jsonl":
        parser.error(f"--out {args.out} must end in .jsonl")
    check = None
    if args.mysql:
        try:
            check = make_backend("mysql", args.mysql)
        except BackendError as error:
            print(f"not checking on MySQL: {error}", file=sys.stderr)
    try:
        tasks = generate_tasks(args.count, seed, check=check, exclude=exclude)
    finally:
        if check is not None:
            check.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        for task in tasks:
            handle.write(json.dumps(to_record(task), ensure_ascii=False) + "\n")
    order_path = args.out.with_suffix(".order.json")
    order_path.write_text(json.dumps(sample_order([t.index for t in tasks], seed)) + "\n")
    counts = skill_counts(tasks)
    for skill, count in counts.items():
        flag = "" if count >= MIN_PER_SKILL else f"  (fewer than {MIN_PER_SKILL})"
        print(f"{skill:50s} {count:4d}{flag}")
    checked = "checked on MySQL" if check is not None else "not checked on MySQL"
    print(f"wrote {len(tasks)} tasks ({checked}) to {args.out} and the order to {order_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
