"""The common statements are translated without sqlglot, into what the translation writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.db_fidelity import Side, load_corpus
from lifelong_gym.envs.db.backends.sqlite import translate as translation
from lifelong_gym.envs.db.backends.sqlite.translate import rewrite, translate
from lifelong_gym.envs.db.backends.sqlite.translate_quick import quick_translation
from lifelong_gym.envs.db.tasks import load_db_tasks

CORPUS = Path(__file__).parent / "data" / "db_fidelity_corpus.yaml"
DBBENCH = ("agentbench/data/dbbench/standard.jsonl", "agentbench/data/dbbench/dev.jsonl")
COLUMNS = {
    "id": "INT",
    "name": "VARCHAR(40)",
    "price": "DECIMAL(10,2)",
    "score": "FLOAT",
    "born": "DATE",
    "format": "VARCHAR(20)",
}
TABLES = ("items",)
CATALOG = (("items", tuple(COLUMNS.items())),)


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT name, COUNT(*) AS n FROM items WHERE name <> 'x' GROUP BY name", "SELECT"),
        (
            "select i.name from items i where i.id in (1, 2) order by i.name desc limit 2, 3",
            "SELECT",
        ),
        (
            "SELECT id FROM items WHERE price > (SELECT MAX(price) FROM items WHERE id < 9);",
            "SELECT",
        ),
        ("SELECT MAX(id) - MIN(id) FROM items HAVING COUNT(*) * 2 >= 4", "SELECT"),
        ("SELECT AVG(score), SUM(id) FROM items WHERE born IS NOT NULL", "SELECT"),
        ("SELECT format FROM items WHERE NOT (format LIKE 'E%' OR born BETWEEN 1 AND 2)", "SELECT"),
        ("INSERT INTO items (id, name) VALUES (1, 'It''s'), (2, NULL)", "INSERT"),
        ("UPDATE items SET name = 'y', born = '2020-01-01' WHERE id = 3", "UPDATE"),
        ("DELETE FROM items WHERE EXISTS (SELECT id FROM items WHERE price >= 2.5)", "DELETE"),
        # the translation's words inside strings are text
        ("SELECT id FROM items WHERE name IN ('all', 'any', 'some', 'database')", "SELECT"),
    ],
)
def test_plain_statements_run_as_written(sql, kind):
    found = quick_translation(sql, COLUMNS, TABLES)
    assert found is not None and found.split()[0].upper() == kind


@pytest.mark.parametrize(
    ("sql", "written"),
    [
        ("SELECT SUM(price) FROM items", "SELECT DEC(SUM(price), 2) FROM items"),
        ("SELECT AVG(id) AS a FROM items", "SELECT DEC(AVG(id), 4) AS a FROM items"),
        (
            "SELECT ROUND(AVG(price), 2) FROM items GROUP BY name HAVING SUM(price) > 5",
            "SELECT ROUND(DEC(AVG(price), 6), 2) FROM items GROUP BY SORT_KEY(name)"
            " HAVING DEC(SUM(price), 2) > 5",
        ),
        (
            "SELECT MAX(price) + MIN(price) * 2 FROM items",
            "SELECT DEC(MAX(price) + MIN(price) * 2, 2) FROM items",
        ),
        (
            "SELECT id FROM items WHERE born < '2020-01-01' AND 'a' = 'A'",
            "SELECT id FROM items WHERE born < '2020-01-01' COLLATE MYSQL_CI"
            " AND 'a' COLLATE MYSQL_CI = 'A' COLLATE MYSQL_CI",
        ),
        (
            "SELECT id FROM items WHERE price > (SELECT AVG(price) FROM items) - 1",
            "SELECT id FROM items WHERE price > DEC((SELECT DEC(AVG(price), 6) FROM items) - 1, 6)",
        ),
        ("UPDATE items SET price = price - 1.5", "UPDATE items SET price = DEC(price - 1.5, 2)"),
        (
            "SELECT name AS n FROM items ORDER BY name DESC, n, 1, items.name, id",
            "SELECT name AS n FROM items ORDER BY SORT_KEY(name) DESC, n, 1, items.name, id",
        ),
        (
            "SELECT ROUND(price, 1), ROUND(id) FROM items",
            "SELECT ROUND(price, 1), ROUND(id) FROM items",
        ),
    ],
)
def test_simple_rewrites_are_the_translations(sql, written):
    assert quick_translation(sql, COLUMNS, TABLES) == written
    assert rewrite(sql, CATALOG)[0].sql == written


@pytest.mark.parametrize(
    "sql",
    [
        # what sqlfeat and later work add to the translation must reach it
        "SELECT name, COUNT(*) FROM items GROUP BY name WITH ROLLUP",
        "SELECT id FROM items WHERE price > ALL (SELECT price FROM items)",
        "SELECT id FROM items WHERE price = ANY (SELECT price FROM items)",
        "SELECT id FROM items WHERE price > SOME (SELECT price FROM items)",
        "SELECT table_name FROM information_schema.tables",
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'items'",
        "SELECT id FROM items information_schema",
        "SELECT DATABASE()",
        "SELECT id FROM items WHERE name = schema()",
        "SHOW INDEX FROM items",
        "SHOW DATABASES",
        "WITH t AS (SELECT id FROM items) SELECT id FROM t",
        "SELECT id FROM items UNION SELECT id FROM items",
        "SELECT a.id FROM items a JOIN items b ON a.id = b.id",
        "SELECT ROW_NUMBER() OVER (ORDER BY id) FROM items",
        # MySQL's lexing that SQLite reads otherwise
        "SELECT `name` FROM items",
        'SELECT name FROM items WHERE name = "x"',
        "SELECT name FROM items WHERE name = 'a\\'b'",
        "SELECT name FROM items # a comment",
        "SELECT name FROM items -- a comment",
        "SELECT name /* a comment */ FROM items",
        "SELECT id FROM items WHERE id = 5--3",
        "SELECT id FROM items WHERE id = -5",
        "SELECT id FROM items WHERE id = 0x1F",
        "SELECT id FROM items WHERE name = x'41'",
        "SELECT id FROM items WHERE name = N'a'",
        "SELECT id FROM items WHERE id = 1e1",
        "SELECT id FROM items WHERE id <=> 1",
        "SELECT id FROM items WHERE id = 1 && id = 2",
        "SELECT id FROM items WHERE name || 'a' = 'b'",
        "SELECT id FROM items WHERE name REGEXP 'a'",
        "SELECT id DIV 2 FROM items",
        "SELECT id FROM items WHERE born > '2020-01-01' + INTERVAL 1 DAY",
        # what the translation rewrites in other ways
        "SELECT id FROM items WHERE name = 5",  # text read as a number
        "SELECT id FROM items WHERE name = id",
        "SELECT id FROM items WHERE name = (SELECT COUNT(*) FROM items)",
        "SELECT SUM(name) FROM items",
        "SELECT id / 2 FROM items",
        "SELECT UPPER(name) FROM items",
        "SELECT ROUND(score, 1) FROM items",  # a double's ROUND
        "SELECT AVG(name) FROM items",
        "SELECT id FROM items WHERE 'a' IN ('A')",
        "SELECT id FROM items WHERE id = 1 = 'x'",
        "SELECT id FROM items WHERE (id) = 1",
        "SELECT id FROM items WHERE id IS 5",
        "SELECT 'a' IN ('A') FROM items",
        "SELECT id FROM items ORDER BY total",  # a name that is neither column nor alias
        "SELECT id FROM Items",  # the table in the wrong case: MySQL refuses it
        "SELECT id FROM 'items'",
        "SELECT id FROM others",
        "SELECT 1",
        "DELETE FROM items LIMIT 1",
        "REPLACE INTO items (id) VALUES (1)",
        "INSERT INTO items VALUES (1, 'a'); SELECT 1",
    ],
)
def test_anything_unfamiliar_goes_through_the_translation(sql):
    assert quick_translation(sql, COLUMNS, TABLES) is None


def test_most_generated_statements_skip_sqlglot_and_read_as_translated():
    tasks = load_db_tasks("default")
    seen, quick = 0, []
    for index in tasks.order:
        table = tasks[index].table_info
        columns = {c.name.lower(): c.type for c in table.column_info_list}
        catalog = ((table.name, tuple(columns.items())),)
        for sql in tasks[index].reference_sql:
            seen += 1
            found = quick_translation(sql, columns, (table.name,))
            if found is not None:
                quick.append((found, rewrite(sql, catalog)[0].sql))
    assert len(quick) >= seen * 3 // 4
    assert [(a, b) for a, b in quick if a != b] == []


@pytest.fixture(scope="module")
def corpus(external_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("quick")
    return load_corpus(CORPUS, [external_dir / name for name in DBBENCH], folder)


def _observations(corpus) -> list[str]:
    side = Side("sqlite", None)
    translate.cache_clear()
    try:
        shown: list[str] = []
        for case in corpus.cases:
            path, index = corpus.task_files[case.task]
            shown += side.run(path, index, case.statements) or []
        return shown
    finally:
        side.close()
        translate.cache_clear()


def test_the_corpus_shows_the_same_with_and_without_the_quick_way(corpus, monkeypatch):
    with_scan = _observations(corpus)
    monkeypatch.setattr(translation, "quick_translation", lambda *_: None)
    without = _observations(corpus)
    assert len(with_scan) == len(without) > 900
    different = [(a, b) for a, b in zip(with_scan, without, strict=True) if a != b]
    assert different == []
