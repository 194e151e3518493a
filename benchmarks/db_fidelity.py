"""How often the embedded SQLite back-end shows the agent what MariaDB shows, by kind.

Usage: python -m benchmarks.db_fidelity [--mysql-url URL] [--external DIR] [--misses]

Runs tests/envs/data/db_fidelity_corpus.yaml and AgentBench's dbbench statements (from
../shared/external) through LifelongDB-v0 on both back-ends, one turn a statement, and
prints by kind the share of statements whose observations match (the rule below; both
errors count as a match) and the share whose text is the same, an error's words
included. Target: >= 95% over all. The tests read the corpus and the rules from here
(tests/envs/test_db_fidelity.py, test_db_quick.py).

A corpus (YAML) names tables and cases; a case is one or more statements run in order on
a fresh copy of its table, one agent turn each, through `LifelongDB-v0` on both back-ends.
Cases can also come from AgentBench's dbbench files (its query statements, and its write
statements each followed by `SELECT *` of the table). Two observations match when:

- both are errors (the error texts of SQLite and MySQL differ; that an error happened is
  what the agent must see alike), or
- both are rows and the rows are equal as the agent reads them (the observation text),
  in order when the statement has a top-level ORDER BY, else as multisets.

The task database's name differs by design (random per task on MySQL, `main` on SQLite:
what `DATABASE()` shows); MySQL's is read as SQLite's before comparing.
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import sqlglot
import yaml
from sqlglot import exp
from sqlglot.errors import SqlglotError

from lifelong_gym.envs.db.actions import answer_reply, operation_reply
from lifelong_gym.envs.db.backends.sqlite.catalog import DATABASE


@dataclass(frozen=True)
class Case:
    """Statements run in order on a fresh copy of one table."""

    kind: str
    task: str  # a key into the task files made for the corpus
    statements: tuple[str, ...]


@dataclass
class Outcome:
    """One statement's observations on both back-ends."""

    kind: str
    sql: str
    sqlite: str
    mysql: str

    @property
    def match(self) -> bool:
        """Whether the agent is shown the same thing (see the module's rules)."""
        return observations_match(self.sql, self.sqlite, self.mysql)

    @property
    def same_text(self) -> bool:
        """Whether the agent reads the same text: as `match`, and an error in MySQL's words."""
        if self.sqlite.startswith("Error:") and self.mysql.startswith("Error:"):
            return self.sqlite == self.mysql
        return self.match


@dataclass
class Corpus:
    """The cases, and the task files their tables live in."""

    cases: list[Case]
    task_files: dict[str, tuple[Path, int]] = field(default_factory=dict)


def _ordered(sql: str) -> bool:
    try:
        tree = sqlglot.parse_one(sql, read="mysql")
    except (SqlglotError, RecursionError):
        return True
    return isinstance(tree, exp.Query) and tree.args.get("order") is not None


def observations_match(sql: str, sqlite: str, mysql: str) -> bool:
    """The comparison rule: both errors, or the same rows (in order where ORDER BY fixes it)."""
    if sqlite.startswith("Error:") or mysql.startswith("Error:"):
        return sqlite.startswith("Error:") and mysql.startswith("Error:")
    if sqlite == mysql or _ordered(sql):
        return sqlite == mysql
    try:
        a, b = ast.literal_eval(sqlite), ast.literal_eval(mysql)
    except (ValueError, SyntaxError):
        return False
    return Counter(map(repr, a)) == Counter(map(repr, b))


def load_corpus(path: Path, dbbench: list[Path], folder: Path) -> Corpus:
    """The corpus file's cases (task file written into `folder`) and the dbbench cases."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    records, keys = [], {}
    for number, (name, table) in enumerate(data["tables"].items()):
        keys[name] = number
        records.append(
            {
                "sample_index": number,
                "instruction": f"corpus table {name}",
                "table_info": {
                    "name": table.get("name", name),
                    "column_info_list": [{"name": c, "type": t} for c, t in table["columns"]],
                    "row_list": table["rows"],
                },
                "answer_info": {"direct": [[0]], "sql": "SELECT 0"},
                "skill_list": ["select"],
            }
        )
    own = folder / "fidelity-corpus.jsonl"
    own.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    corpus = Corpus([], {name: (own, key) for name, key in keys.items()})
    for case in data["cases"]:
        statements = case["sql"] if isinstance(case["sql"], list) else [case["sql"]]
        corpus.cases.append(Case(case["kind"], case["table"], tuple(statements)))
    for source in dbbench:
        corpus.cases += list(_dbbench_cases(source, corpus))
    return corpus


def _dbbench_cases(source: Path, corpus: Corpus) -> Iterator[Case]:
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        key = f"{source.name}:{number}"
        corpus.task_files[key] = (source, number)
        table = "`" + record["table"]["table_name"].replace("`", "``") + "`"
        if record.get("sql"):
            yield Case("dbbench query", key, (record["sql"]["query"],))
        elif record.get("label") and {t.upper() for t in record.get("type", [])} & {
            "INSERT",
            "UPDATE",
            "DELETE",
        }:
            write = record["label"][0] if isinstance(record["label"], list) else record["label"]
            yield Case("dbbench write", key, (write, f"SELECT * FROM {table}"))


class Side:
    """One back-end's environments, one per task file."""

    def __init__(self, backend: str, url: str | None):
        self.backend, self.url = backend, url
        self.envs: dict[Path, Any] = {}

    def run(
        self, path: Path, index: int, statements: tuple[str, ...], database: str | None = None
    ) -> list[str] | None:
        """The observations of `statements` on a fresh copy of the task's table (the task
        database's name shown as `database`, when given)."""
        env = self.envs.get(path)
        if env is None:
            env = gym.make(
                "LifelongDB-v0", tasks=str(path), backend=self.backend, url=self.url, max_turns=50
            ).unwrapped
            self.envs[path] = env
        if index not in env.tasks.indices:
            return None  # a record the loader skipped (it says why)
        try:
            env.reset(options={"task_index": index})
        except Exception:  # noqa: BLE001 - a table this server cannot create: no case
            return None
        shown = [env.step(operation_reply(sql))[0] for sql in statements]
        if database is not None:
            shown = [o.replace(env.backend.database, database) for o in shown]
        env.step(answer_reply("done"))
        return shown

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


def run_corpus(corpus: Corpus, mysql_url: str) -> tuple[list[Outcome], list[Case]]:
    """Every statement's observations on SQLite and MySQL; and the cases MySQL cannot set up."""
    sqlite, mysql = Side("sqlite", None), Side("mysql", mysql_url)
    outcomes: list[Outcome] = []
    skipped: list[Case] = []
    try:
        for case in corpus.cases:
            path, index = corpus.task_files[case.task]
            theirs = mysql.run(path, index, case.statements, database=DATABASE)
            if theirs is None:
                skipped.append(case)
                continue
            ours = sqlite.run(path, index, case.statements)
            assert ours is not None, f"SQLite could not set up {case.task}"
            for sql, a, b in zip(case.statements, ours, theirs, strict=True):
                outcomes.append(Outcome(case.kind, sql, a, b))
    finally:
        sqlite.close()
        mysql.close()
    return outcomes, skipped


def shares_by_kind(
    outcomes: list[Outcome], same: Callable[[Outcome], bool] = lambda o: o.match
) -> dict[str, tuple[int, int]]:
    """(statements the `same` rule holds for, total) by kind, and over all as "all"."""
    table: dict[str, list[int]] = {}
    for outcome in outcomes:
        for kind in (outcome.kind, "all"):
            counts = table.setdefault(kind, [0, 0])
            counts[0] += same(outcome)
            counts[1] += 1
    return {kind: (a, b) for kind, (a, b) in table.items()}


def temporary_folder() -> Path:
    """A folder for the corpus's task file."""
    return Path(tempfile.mkdtemp(prefix="lgym-fidelity-"))


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
    parser.add_argument(
        "--misses", action="store_true", help="print every statement whose text differs"
    )
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
            if not o.same_text:
                print(f"[{o.kind}] {o.sql}\n  sqlite: {o.sqlite[:300]}\n  mysql:  {o.mysql[:300]}")
    texts = shares_by_kind(outcomes, lambda o: o.same_text)
    print(f"{'kind':24} {'same':>5} {'text':>5} {'of':>5} {'share':>7} {'text':>7}")
    for kind, (same, total) in sorted(
        shares_by_kind(outcomes).items(), key=lambda i: i[0] == "all"
    ):
        text = texts[kind][0]
        print(f"{kind:24} {same:5d} {text:5d} {total:5d} {same / total:7.1%} {text / total:7.1%}")
    if skipped:
        print(f"({len(skipped)} cases skipped: MariaDB could not create their table)")


if __name__ == "__main__":
    main()
