"""The embedded back-end answers an error in MySQL's words: its reply to each statement is
the MySQL back-end's reply on the real MariaDB (both real), the task database's name read as
`main` (random per task on MySQL). One test per kind of error."""

from __future__ import annotations

import pytest

from lifelong_gym.envs.db.backends import make_backend
from lifelong_gym.envs.db.env import format_result
from lifelong_gym.envs.db.tasks import ColumnInfo, TableInfo

pytestmark = pytest.mark.mysql

STAFF = TableInfo(
    name="staff",
    column_info_list=tuple(
        ColumnInfo(name=name, type=kind)
        for name, kind in [
            ("id", "INT"),
            ("name", "VARCHAR(50)"),
            ("salary", "DECIMAL(10,2)"),
            ("age", "INT"),
            ("score", "DOUBLE"),
        ]
    ),
    row_list=(
        (1, "Alice", 5200.5, 34, 1.5),
        (2, "bob", 7300.0, 41, None),
        (3, "Carla", 4800.25, 28, 2.25),
    ),
)


MEMBERS = TableInfo(  # keys declared with the types, as a task file may declare them
    name="members",
    column_info_list=(
        ColumnInfo(name="id", type="INT PRIMARY KEY"),
        ColumnInfo(name="email", type="VARCHAR(50) UNIQUE"),
        ColumnInfo(name="fee", type="DECIMAL(8,2) UNIQUE"),
        ColumnInfo(name="name", type="TEXT NOT NULL"),
    ),
    row_list=((1, "ann@club.org", 10.5, "Ann"), (2, "ben@club.org", 20.0, "Ben")),
)


@pytest.fixture(scope="module")
def backends(mysql_url):
    sqlite, mysql = make_backend("sqlite"), make_backend("mysql", mysql_url)
    yield sqlite, mysql
    sqlite.close()
    mysql.close()


def _replies(backends, statements: list[str], table: TableInfo) -> list[tuple[str, str, str]]:
    """(statement, SQLite's reply, MySQL's reply) for each statement, on a fresh table."""
    shown = []
    for sql in statements:
        replies = []
        for backend in backends:
            backend.start(table)
            reply = format_result(backend.execute(sql))
            replies.append(reply.replace(backend.database, "main"))
        shown.append((sql, *replies))
    return shown


def assert_same_replies(backends, statements: list[str], table: TableInfo = STAFF) -> None:
    differ = [
        f"{sql}\n  sqlite: {ours}\n  mysql:  {theirs}"
        for sql, ours, theirs in _replies(backends, statements, table)
        if ours != theirs
    ]
    assert not differ, "\n".join(differ)


def test_a_missing_table(backends):
    assert_same_replies(
        backends,
        [
            "SELECT * FROM patients",
            "SELECT * FROM Staff",  # MySQL's table names are case-sensitive
            "UPDATE employees SET age = 1",
            "DESCRIBE patients",
            "SELECT * FROM sqlite_master",  # SQLite's catalog: MySQL has no such table
        ],
    )


def test_an_unknown_column_names_its_clause(backends):
    assert_same_replies(
        backends,
        [
            "SELECT nme FROM staff",
            "SELECT s.nme FROM staff s",
            "SELECT name FROM staff WHERE department = 'Sales'",
            "SELECT name FROM staff ORDER BY surname",
            "SELECT name, COUNT(*) FROM staff GROUP BY dept",
            "SELECT name FROM staff GROUP BY name HAVING total > 1",
            "SELECT a.name FROM staff a JOIN staff b ON a.manager = b.id",
            "INSERT INTO staff (id, nme) VALUES (4, 'Dan')",
            "UPDATE staff SET wage = 1 WHERE id = 1",
            "UPDATE staff SET age = 1 WHERE employee_id = 1",
            "DELETE FROM staff WHERE employee_id = 1",
        ],
    )


def test_a_syntax_error_shows_where_mysql_stopped(backends):
    assert_same_replies(
        backends,
        [
            "SELECT * FROM staff WHERE",
            "SELECT * FROM staff WHERE id = = 1",
            "SELECT name FROM staff WHERE age > 30 AND;",
            "SELECT name FROM staff WHERE age > 30)",
            "SELECT COUNT(* FROM staff",
            "SELECT name, FROM staff",
            "SELECT * FROM 'staff'",
            "SELECT [name] FROM staff",  # SQL Server's quoting
            "SELECT name FROM staff WHERE id IN",  # sqlglot would read an empty list
            "SELECT a.name FROM staff a JOIN staff b ON;",  # and a join without a condition
            "SELECT * FROM staff GROUP",  # and GROUP as the table's alias
            "SELECT name\nFROM staff\nWHERE age = = 30",
            # a long near '...' is cut to 80 bytes of UTF-8, as MariaDB cuts it
            "SELECT name age salary FROM staff WHERE name IN ('Ålice', 'Bøb', 'Çarla', 'Dän', "
            "'Évé', 'Fäy', 'Güs', 'Häl') ORDER BY name",
        ],
    )


def test_a_quote_or_comment_left_open_is_mysqls_syntax_error(backends, monkeypatch):
    # the statement guard answers these before SQLite reads them; its reply must be the
    # server's own, so here the server gets them on MySQL (the guard lifted there)
    monkeypatch.setattr(
        "lifelong_gym.envs.db.backends.mysql.backend.refusal", lambda sql, **_: None
    )
    assert_same_replies(
        backends,
        [
            "SELECT * FROM staff WHERE name = 'Alice",
            'SELECT * FROM staff WHERE name = "Alice',
            "SELECT `name FROM staff",
            "SELECT * FROM staff /* the rest",
            "UPDATE staff SET name = 'it\\'s WHERE id = 1",
        ],
    )


def test_a_value_a_numeric_column_cannot_store(backends):
    assert_same_replies(
        backends,
        [
            "INSERT INTO staff (id, age) VALUES (4, 'thirty')",
            "INSERT INTO staff (id, salary) VALUES (4, '')",
            "INSERT INTO staff (id, score) VALUES (4, 'high')",
            "INSERT INTO staff (id, age) VALUES (4, '30 years')",
            "INSERT INTO staff (id, age) VALUES (4, 30), (5, 'forty')",
            "UPDATE staff SET age = 'old' WHERE id = 2",
            "UPDATE staff SET age = 1 WHERE name = 5",
            "UPDATE staff SET age = 1 WHERE name > 1.5",
            "DELETE FROM staff WHERE name = 0",  # a DELETE reads it as 0, with warnings only
            "INSERT INTO staff (id, age) VALUES (4, ' 30 ')",  # a number: stored, no error
        ],
    )


def test_a_division_by_zero_is_null_in_a_query_and_an_error_in_a_write(backends):
    assert_same_replies(
        backends,
        [
            "SELECT salary / 0, age % 0 FROM staff WHERE id = 1",
            "UPDATE staff SET salary = salary / 0 WHERE id = 1",
            "UPDATE staff SET age = age % (id - id)",
            "INSERT INTO staff (id, salary) VALUES (4, 100 / 0)",
        ],
    )


def test_a_function_mysql_lacks_or_a_wrong_argument_count(backends):
    assert_same_replies(
        backends,
        [
            "SELECT foo(name) FROM staff",
            "SELECT name FROM staff WHERE LEN(name) > 3",  # SQL Server's, which sqlglot reads
            "SELECT IIF(age > 30, 'old', 'young') FROM staff",  # SQLite's own
            "SELECT UPPER(name, 2) FROM staff",
            "SELECT abs() FROM staff",
            "SELECT name FROM staff WHERE COUNT(*) > 1",
        ],
    )


def test_an_ambiguous_column(backends):
    assert_same_replies(
        backends,
        [
            "SELECT id FROM staff a JOIN staff b ON a.id = b.id",
            "SELECT a.name FROM staff a JOIN staff b ON a.id = b.id WHERE age > 30",
            "SELECT a.name FROM staff a JOIN staff b ON id = 1",
            # MySQL reads a bare ORDER BY name as the select list's column: rows, no error
            "SELECT a.name FROM staff a, staff b WHERE a.id = b.id ORDER BY name",
        ],
    )


def test_a_wrong_column_count_in_an_insert(backends):
    assert_same_replies(
        backends,
        [
            "INSERT INTO staff VALUES (4, 'Dan')",
            "INSERT INTO staff (id, name) VALUES (4)",
            "INSERT INTO staff (id) VALUES (4, 'Dan')",
            "INSERT INTO staff (id, name) VALUES (4, 'Dan'), (5, 'Eve'), (6)",
        ],
    )


def test_a_duplicate_key_names_the_value_and_the_key(backends):
    assert_same_replies(
        backends,
        [
            "DESCRIBE members",
            "INSERT INTO members VALUES (1, 'dee@club.org', 40, 'Dee')",
            "INSERT INTO members VALUES (3, 'ANN@club.org', 40, 'Dee')",  # case-insensitive
            "INSERT INTO members VALUES (3, 'dee@club.org', 20, 'Dee')",  # shown as stored
            "INSERT INTO members VALUES (3, 'dee@club.org', 40, 'Dee'), (3, 'e@club.org', 5, 'E')",
            "UPDATE members SET id = id + 1",  # the first row meets the second's key
            "UPDATE members SET email = 'ben@club.org' WHERE name = 'Ann'",
            "INSERT INTO members VALUES (NULL, 'zed@club.org', 90, 'Zed')",
            "INSERT INTO members (id, email) VALUES (9, 'zed@club.org')",
            "UPDATE members SET name = NULL WHERE id = 2",
        ],
        MEMBERS,
    )
