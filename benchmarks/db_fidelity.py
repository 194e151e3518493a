"""How often the embedded SQLite back-end shows the agent what MariaDB shows, by kind.

Usage: python benchmarks/db_fidelity.py [--mysql-url URL] [--external DIR] [--misses]

Runs tests/envs/data/db_fidelity_corpus.yaml and AgentBench's dbbench statements (from
../shared/external) through LifelongDB-v0 on both back-ends, one turn a statement, and
prints the share of statements whose observations match (rule: lifelong_gym.envs.db.fidelity;
both errors count as a match). Target: >= 95% over all.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from lifelong_gym.envs.db.fidelity import load_corpus, run_corpus, shares_by_kind, temporary_folder

ROOT = Path(__file__).resolve().parents[1]
# ../shared/external beside the checkout (searched upwards, as the tests search it)
EXTERNAL = next(
    (d / "shared" / "external" for d in ROOT.parents if (d / "shared" / "external").is_dir()),
    ROOT.parent / "shared" / "external",
)
CORPUS = ROOT / "tests" / "envs" / "data" / "db_fidelity_corpus.yaml"
DBBENCH = ("standard.jsonl", "dev.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mysql-url", default="mysql://root@127.0.0.1:3306")
    parser.add_argument("--external", type=Path, default=EXTERNAL)
    parser.add_argument("--misses", action="store_true", help="print every statement that differs")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # sqlglot's notes on statements it reads as commands
    folder = args.external / "agentbench" / "data" / "dbbench"
    dbbench = [folder / name for name in DBBENCH if (folder / name).is_file()]
    if len(dbbench) < len(DBBENCH):
        print(f"(AgentBench's dbbench files are not all in {folder}: --external DIR names them)")
    corpus = load_corpus(CORPUS, dbbench, temporary_folder())
    outcomes, skipped = run_corpus(corpus, args.mysql_url)
    if args.misses:
        for o in outcomes:
            if not o.match:
                print(f"[{o.kind}] {o.sql}\n  sqlite: {o.sqlite[:300]}\n  mysql:  {o.mysql[:300]}")
    print(f"{'kind':16} {'same':>5} {'of':>5} {'share':>7}")
    for kind, (same, total) in sorted(
        shares_by_kind(outcomes).items(), key=lambda i: i[0] == "all"
    ):
        print(f"{kind:16} {same:5d} {total:5d} {same / total:7.1%}")
    if skipped:
        print(f"({len(skipped)} cases skipped: MariaDB could not create their table)")


if __name__ == "__main__":
    main()
