"""MySQL constructs the embedded back-end spells out for SQLite: quantified comparisons,
WITH ROLLUP, information_schema, SHOW INDEX and SHOW DATABASES (translate_expand,
catalog, schema_answers). The expected answers are MariaDB's (the fidelity corpus
compares with the server itself); these run without one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlglot
import yaml
from sqlglot import exp

from lifelong_gym.envs.db.backends.sqlite import SqliteBackend
from lifelong_gym.envs.db.backends.sqlite.translate_quick import TRANSLATED_WORDS
from lifelong_gym.envs.db.tasks import ColumnInfo, TableInfo

CORPUS = Path(__file__).parent / "data" / "db_fidelity_corpus.yaml"
TABLE = TableInfo(
    name="Staff List",
    column_info_list=(
        ColumnInfo(name="Id", type="INT"),
        ColumnInfo(name="dept", type="VARCHAR(20)"),
        ColumnInfo(name="salary", type="DECIMAL(10,2)"),
        ColumnInfo(name="hired", type="DATE"),
    ),
    row_list=(
        (1, "Sales", 5200.5, "2019-03-15"),
        (2, "Eng", 7300.0, "2018-07-01"),
        (3, "sales", 4800.25, "2020-01-31"),
        (4, "Eng", None, "2021-06-10"),
    ),
)
T = "`Staff List`"


@pytest.fixture(scope="module")
def backend():
    made = SqliteBackend()
    made.start(TABLE)
    yield made
    made.close()


def rows(backend, sql):
    result = backend.execute(sql)
    assert result.error is None, result.error
    return result.rows


def error(backend, sql):
    result = backend.execute(sql)
    assert result.error is not None, result.rows
    return result.error


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # a NULL among the rows leaves ALL open (NULL) unless a comparison fails
        (f"SELECT Id, salary > ALL (SELECT salary FROM {T} WHERE Id IN (1, 4)) FROM {T}",
         [(1, 0), (2, None), (3, 0), (4, None)]),
        (f"SELECT Id, salary < ANY (SELECT salary FROM {T} WHERE Id IN (1, 4)) FROM {T}",
         [(1, None), (2, None), (3, 1), (4, None)]),
        (f"SELECT Id, salary = ALL (SELECT salary FROM {T} WHERE Id = 1) FROM {T}",
         [(1, 1), (2, 0), (3, 0), (4, None)]),
        (f"SELECT Id, salary <> ANY (SELECT salary FROM {T} WHERE Id IN (1, 3)) FROM {T}",
         [(1, 1), (2, 1), (3, 1), (4, None)]),
        # of no rows, ALL is true and ANY false, even for NULL
        (f"SELECT NULL > ALL (SELECT 1 FROM {T} WHERE 0), 1 > ANY (SELECT 1 FROM {T} WHERE 0)",
         [(1, 0)]),
        (f"SELECT Id FROM {T} WHERE dept = SOME (SELECT 'SALES')", [(1,), (3,)]),
        (f"SELECT Id FROM {T} WHERE dept <> ALL (SELECT dept FROM {T} WHERE Id = 2)", [(1,), (3,)]),
        # the compared value may be an aggregate of the outer query
        (f"SELECT dept FROM {T} GROUP BY dept HAVING SUM(salary) >= ALL "
         f"(SELECT SUM(salary) FROM {T} GROUP BY dept)", [("Sales",)]),
        ("SELECT 'ALICE' >= ALL (SELECT 'alice'), 'a' = ANY (SELECT 'A')", [(1, 1)]),
    ],
)  # fmt: skip
def test_quantified_comparisons_answer_as_mysql(backend, sql, expected):
    assert rows(backend, sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT Id FROM {T} WHERE salary > ALL (SELECT salary FROM {T} LIMIT 2)",
        f"SELECT Id FROM {T} WHERE salary > ALL (SELECT salary, Id FROM {T})",
        f"SELECT dept, COUNT(*) FROM {T} GROUP BY dept WITH ROLLUP ORDER BY dept",
        f"SELECT dept, COUNT(*) FROM {T} GROUP BY dept WITH CUBE",
    ],
)
def test_what_mariadb_refuses_is_refused(backend, sql):
    error(backend, sql)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # keys in MySQL's order (text case-insensitively), subtotals after their group
        (f"SELECT YEAR(hired) > 2019 AS recent, dept, COUNT(*) FROM {T} "
         "GROUP BY recent, dept WITH ROLLUP",
         [(0, "Eng", 1), (0, "Sales", 1), (0, None, 2),
          (1, "Eng", 1), (1, "sales", 1), (1, None, 2), (None, None, 4)]),
        # the rolled-up key is NULL outside aggregates, in the select list and HAVING
        (f"SELECT IFNULL(hired, 'All'), CONCAT(hired, '!'), MAX(Id), SUM(salary) FROM {T} "
         "GROUP BY hired WITH ROLLUP",
         [("2018-07-01", "2018-07-01!", 2, 7300.0), ("2019-03-15", "2019-03-15!", 1, 5200.5),
          ("2020-01-31", "2020-01-31!", 3, 4800.25), ("2021-06-10", "2021-06-10!", 4, None),
          ("All", None, 4, 17300.75)]),
        (f"SELECT dept, COUNT(*) FROM {T} GROUP BY dept WITH ROLLUP HAVING dept IS NULL",
         [(None, 4)]),
        (f"SELECT dept AS d, AVG(salary) FROM {T} GROUP BY d WITH ROLLUP LIMIT 1, 2",
         [("Sales", 5000.375), (None, 5766.916667)]),
        (f"SELECT dept, COUNT(*) FROM {T} WHERE Id > 9 GROUP BY 1 WITH ROLLUP", []),
        (f"SELECT n FROM (SELECT dept, COUNT(*) AS n FROM {T} GROUP BY dept WITH ROLLUP) t "
         "WHERE dept IS NULL", [(4,)]),
    ],
)  # fmt: skip
def test_rollup_adds_mariadbs_subtotals_in_its_order(backend, sql, expected):
    assert rows(backend, sql) == expected


def test_information_schema_describes_the_declared_table(backend):
    assert rows(backend, "SELECT DATABASE()") == [("main",)]
    tables = rows(
        backend,
        "SELECT table_schema, table_name, table_type, engine, table_rows FROM "
        "information_schema.TABLES WHERE table_schema = DATABASE()",
    )
    assert tables == [("main", "Staff List", "BASE TABLE", "InnoDB", 4)]
    columns = rows(
        backend,
        "SELECT column_name, ordinal_position, data_type, column_type, numeric_precision, "
        "numeric_scale, character_maximum_length, collation_name FROM "
        "information_schema.columns WHERE table_name = 'Staff List' ORDER BY ordinal_position",
    )
    assert columns == [
        ("Id", 1, "int", "int(11)", 10, 0, None, None),
        ("dept", 2, "varchar", "varchar(20)", None, None, 20, "utf8mb4_general_ci"),
        ("salary", 3, "decimal", "decimal(10,2)", 10, 2, None, None),
        ("hired", 4, "date", "date", None, None, None, None),
    ]
    # MariaDB looks table names up case-sensitively, but compares column names without case
    assert (
        rows(backend, "SELECT * FROM information_schema.columns WHERE table_name = 'staff list'")
        == []
    )
    assert rows(
        backend, "SELECT column_name FROM information_schema.columns WHERE column_name = 'ID'"
    ) == [("Id",)]
    assert rows(
        backend, "SELECT column_name FROM information_schema.COLUMNS ORDER BY column_name"
    ) == [("dept",), ("hired",), ("Id",), ("salary",)]
    assert rows(backend, "SELECT schema_name FROM information_schema.schemata") == [
        ("information_schema",),
        ("main",),
    ]
    assert rows(backend, "SELECT * FROM information_schema.statistics") == []  # no keys
    # TABLE_ROWS counts the table when read, not when the statement was first translated
    assert backend.execute(f"DELETE FROM {T} WHERE Id = 4").error is None
    assert rows(backend, "SELECT table_rows FROM information_schema.tables") == [(3,)]
    backend.start(TABLE)  # the next tests see the four rows again


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SHOW DATABASES", [("information_schema",), ("main",)]),
        ("SHOW SCHEMAS LIKE 'INFO%';", [("information_schema",)]),
        (f"SHOW INDEX FROM {T}", []),
        (f"SHOW KEYS IN {T} WHERE Key_name = 'PRIMARY'", []),
        (f"SHOW INDEXES FROM {T} FROM main", []),
    ],
)
def test_show_index_and_databases_answer_as_mariadb(backend, sql, expected):
    assert rows(backend, sql) == expected


def test_missing_tables_and_views_are_errors(backend):
    assert "doesn't exist" in error(backend, "SHOW INDEX FROM nope")
    assert "not available" in error(backend, "SELECT * FROM information_schema.PROCESSLIST")


def _needs_expansion(sql: str) -> bool:
    try:
        trees = sqlglot.parse(sql, read="mysql")
    except sqlglot.errors.SqlglotError:
        return False
    for tree in filter(None, trees):
        groups = [g for g in tree.find_all(exp.Group) if g.args.get("rollup") or g.args.get("cube")]
        views = [t for t in tree.find_all(exp.Table) if t.db.lower() == "information_schema"]
        if groups or views or tree.find(exp.All, exp.Any):
            return True
    return False


def test_every_new_construct_is_marked_for_the_translator():
    """A fast path that skips sqlglot must send these statements to the translator: each
    statement of the corpus that the expansions change holds a word of TRANSLATED_WORDS."""
    cases = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["cases"]
    statements = [
        sql
        for case in cases
        for sql in ([case["sql"]] if isinstance(case["sql"], str) else case["sql"])
        if _needs_expansion(sql)
    ]
    assert len(statements) >= 50
    for sql in statements:
        words = {w.upper() for w in re.findall(r"\w+", sql)}
        assert words & TRANSLATED_WORDS, sql


SORTED_VALUES = [
    "b", "B", "a", "A ", "a", "_x", "[", "`", "Zeta", "zeta  ", "é", "E", "Ë", "ß", "ss",
    "", " ", "a b", "A\tb", "1", "10", "9", "ñandú", "Nandu", "Ωmega", "ωmega", None, None,
]  # fmt: skip


@pytest.mark.parametrize(
    "query",
    [
        "SELECT v, rowid FROM t ORDER BY {key}, rowid",
        "SELECT v, rowid FROM t ORDER BY {key} DESC, rowid",
        "SELECT v, count(*) FROM t GROUP BY {key} ORDER BY {key}, min(rowid)",
    ],
)
def test_sorting_by_sort_key_is_sorting_by_the_collation(query):
    """SORT_KEY (a Python call a row) orders and groups text as the collation does (a Python
    call a comparison): the translation sorts a text column alone by it."""
    table = TableInfo(
        name="t",
        column_info_list=(ColumnInfo(name="v", type="VARCHAR(20)"),),
        row_list=tuple((value,) for value in SORTED_VALUES) + ((12,), (b"\xff",)),
    )
    backend = SqliteBackend()
    try:
        backend.start(table)
        by_collation = backend._require().execute(query.format(key="v")).fetchall()
        by_key = backend._require().execute(query.format(key="SORT_KEY(v)")).fetchall()
    finally:
        backend.close()
    assert by_key == by_collation
    assert len(by_collation) > 15  # the values do not all tie
