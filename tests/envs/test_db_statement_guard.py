"""The statement guard's plain-statement scan against its lexer."""

from __future__ import annotations

import re

import pytest

from lifelong_gym.envs.db.backends import statement_guard
from lifelong_gym.envs.db.tasks import load_db_tasks

TRICKY = [
    "SELECT 'GET_LOCK(' FROM t",
    "SELECT a FROM t WHERE b = 'it''s' AND c = ''",
    "SELECT a FROM t WHERE b = 'x'' OR GET_LOCK('y', 0) = '1'",
    "SELECT 'x'' OR GET_LOCK(''y'', 0) = ''1' FROM t",
    "SELECT GET_LOCK('y', 0), RELEASE_LOCK('y')",
    "SELECT a:b FROM t",
    "SELECT\ta\x0bFROM\x1ct;",
    "  (SELECT 1)  ",
    "SELECT 'a' 'b' FROM `t`",
    "SELECT 'unterminated FROM t",
    "SELECT a FROM t WHERE b = 'x\\' OR 1",
    "SELECT a FROM t -- ' GET_LOCK",
    "SELECT a\u00a0FROM t",
    "SELECT 'caf\u00e9' FROM t",
    "DELETE FROM t WHERE a = 1 # '",
    "SELECT 1/2, 3-4 FROM t",
    'SELECT "x" FROM t',
]


def _statements() -> list[str]:
    tasks = load_db_tasks("default")
    return [*TRICKY, *(sql for task in tasks for sql in task.reference_sql)]


@pytest.mark.parametrize("backslash_escapes", [True, False])
def test_the_plain_scan_finds_the_words_the_lexer_finds(backslash_escapes):
    plain = 0
    for sql in _statements():
        if statement_guard._PLAIN.fullmatch(sql) is None:
            continue
        plain += 1
        words = statement_guard._words(sql, backslash_escapes)
        assert words == statement_guard._lexed_words(sql, backslash_escapes), sql
    assert plain > 400  # most shipped statements take the plain scan


DENIED_SPELLINGS = [
    "SELECT get_lock('y', 0)",
    "SELECT `GET_LOCK`('y', 0)",
    "SELECT * FROM t INTO DUMP\ufb01LE '/tmp/x'",  # the ligature upper-cases to FI
    "SELECT load_\ufb01le('/etc/passwd')",
    "SELECT \u0131s_free_lock('y')",  # dotless i upper-cases to I
    "SELECT MA\ufb05ER_POS_WAIT('x', 1)",  # the ligature upper-cases to ST
]


def test_the_denied_words_are_found_as_the_words_are():
    # the guard looks at the words only when the upper-cased text holds a denied word; its
    # verdict must be the one the words give (each word without its backtick, upper-cased)
    for sql in [*_statements(), *DENIED_SPELLINGS]:
        words = statement_guard._words(sql, True)
        if isinstance(words, str):
            continue
        denied = {w.lstrip("`").upper() for w in words} & statement_guard.DENIED_WORDS
        reason = statement_guard.refusal(sql)
        assert bool(denied) == bool(reason and reason.endswith("is not allowed")), sql
    assert all(statement_guard.refusal(sql) for sql in DENIED_SPELLINGS)


def test_the_plain_pattern_accepts_what_a_character_at_a_time_accepts():
    one_at_a_time = re.compile(r"(?:[^\x80-\U0010ffff#\-/\"`'\\]|'[^'\\\x80-\U0010ffff]*')*")
    for sql in [*_statements(), "a" * 5000 + "#", "'" * 501, "x'y'z'"]:
        found = statement_guard._PLAIN.fullmatch(sql) is not None
        assert found == (one_at_a_time.fullmatch(sql) is not None), sql
