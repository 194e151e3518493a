"""The embedded back-end shows the agent what MariaDB shows, on the fidelity corpus.

Comparison rule (benchmarks/db_fidelity.py): two observations match when both are
errors (that the statement failed is what must agree), or when they show the same rows as
the agent reads them, in order where a top-level ORDER BY fixes it and as multisets
otherwise. The text rule asks more: an error in MySQL's very words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.db_fidelity import (
    Outcome,
    load_corpus,
    observations_match,
    run_corpus,
    shares_by_kind,
)
from lifelong_gym.envs.db.skills import SKILLS, skills_of

CORPUS = Path(__file__).parent / "data" / "db_fidelity_corpus.yaml"
DBBENCH = ("agentbench/data/dbbench/standard.jsonl", "agentbench/data/dbbench/dev.jsonl")


@pytest.fixture(scope="module")
def corpus(external_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fidelity")
    return load_corpus(CORPUS, [external_dir / name for name in DBBENCH], folder)


def test_corpus_covers_every_skill_and_300_statements(corpus):
    statements = [sql for case in corpus.cases for sql in case.statements]
    own = [
        sql
        for case in corpus.cases
        if not case.kind.startswith("dbbench")
        for sql in case.statements
    ]
    assert len(own) >= 300
    found = set()
    for sql in own:
        try:
            found |= set(skills_of(sql))
        except Exception:  # noqa: BLE001 - the corpus holds deliberate syntax errors
            continue
    assert found == set(SKILLS)
    assert len(statements) > len(own)  # the dbbench statements came in too


def test_comparison_rule():
    assert observations_match("SELECT 1", "Error: no such table: t", "Error: (1146) Table")
    assert not observations_match("SELECT 1", "[(1,)]", "Error: (1146) Table")
    assert observations_match("SELECT a FROM t", "[(1,), (2,)]", "[(2,), (1,)]")
    assert not observations_match("SELECT a FROM t ORDER BY a", "[(1,), (2,)]", "[(2,), (1,)]")
    assert not observations_match("SELECT AVG(a) FROM t", "[(9.416666666666666,)]", "[(9.4167,)]")


def test_the_text_rule_compares_an_errors_words():
    def same_text(sqlite: str, mysql: str) -> bool:
        return Outcome("errors", "SELECT a FROM t", sqlite, mysql).same_text

    assert same_text(
        "Error: (1146) Table 'main.t' doesn't exist", "Error: (1146) Table 'main.t' doesn't exist"
    )
    assert not same_text("Error: no such table: t", "Error: (1146) Table 'main.t' doesn't exist")
    assert same_text("[(1,), (2,)]", "[(2,), (1,)]")
    assert not same_text("[(1,)]", "Error: (1146) Table 'main.t' doesn't exist")


@pytest.mark.mysql
def test_at_least_95_percent_of_the_corpus_looks_the_same(corpus, mysql_url):
    outcomes, skipped = run_corpus(corpus, mysql_url)
    shares = shares_by_kind(outcomes)
    matching, total = shares["all"]
    missed = [
        f"[{o.kind}] {o.sql}\n  sqlite: {o.sqlite[:200]}\n  mysql:  {o.mysql[:200]}"
        for o in outcomes
        if not o.match
    ]
    print("\n".join(missed))
    assert total >= 600 and len(skipped) <= 2
    assert matching / total >= 0.95, f"{matching}/{total} match"
    for kind, (a, b) in shares.items():
        assert a / b >= 0.9, f"{kind}: {a}/{b}"
    # the error kinds' replies in MySQL's words (the near '...' of a syntax error may differ)
    texts = shares_by_kind(outcomes, lambda o: o.same_text)
    worded = [texts[kind] for kind in texts if kind.startswith("error: ")]
    same, of = sum(a for a, _ in worded), sum(b for _, b in worded)
    assert of >= 80 and same / of >= 0.95, f"{same}/{of} error replies in MySQL's words"
