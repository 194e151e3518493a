"""What MySQL refuses in a statement that sqlglot reads and SQLite would run.

- a table named by a string (`FROM "t"`: double quotes make a string in MySQL), and a
  table named in the wrong case (MySQL's table names are case-sensitive on Linux);
- a comma before a clause or a closing parenthesis (`SELECT a, FROM t`), which sqlglot
  drops, a bracket (`[name]`, SQL Server's quoting), where MariaDB's parser stops, and a
  statement that ends where it must go on (`... WHERE id IN`, `... ON`, `... t GROUP`),
  which sqlglot may complete as it likes;
- a call of a function MariaDB does not have that sqlglot or SQLite know (`LEN`,
  `STRFTIME`, `IIF`, ...): SQLite's own functions stay callable for the translation.

Each is refused with MySQL's reply (`../error_replies.py`).
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.tokens import Token, TokenType

from ..error_replies import missing_table, syntax_error, unknown_function
from .catalog import DATABASE
from .translate_expand import Refused

# functions an agent may call that sqlglot reads or SQLite runs, and MariaDB lacks
# (each answers 1305 there)
NOT_MYSQL_FUNCTIONS = frozenset(
    """LEN STRFTIME JULIANDAY PRINTF TYPEOF TOTAL IIF GLOB LIKELIHOOD LIKELY UNLIKELY
    CHANGES TOTAL_CHANGES LAST_INSERT_ROWID RANDOM COSH SINH TANH GETDATE DATEPART DATEADD
    CHARINDEX DATE_PART STR""".split()
)
_CLAUSE_TOKENS = {
    TokenType.FROM,
    TokenType.WHERE,
    TokenType.GROUP_BY,
    TokenType.ORDER_BY,
    TokenType.HAVING,
    TokenType.LIMIT,
    TokenType.R_PAREN,
}
_TABLE_KEYWORDS = {
    TokenType.FROM,
    TokenType.JOIN,
    TokenType.INTO,
    TokenType.UPDATE,
    TokenType.TABLE,
}
_NAME_TOKENS = {TokenType.VAR, TokenType.IDENTIFIER}
# reserved words a statement cannot end with: MariaDB's parser meets the end where it
# needs more (sqlglot reads GROUP or ORDER alone as a name)
_CONTINUED = frozenset(
    """SELECT DISTINCT FROM JOIN ON USING WHERE AND OR NOT IN IS LIKE BETWEEN GROUP ORDER BY
    HAVING LIMIT AS UNION SET VALUES INTO""".split()
)
_QUOTED = (TokenType.IDENTIFIER, TokenType.STRING)
_LAST_WORD = re.compile(rf"\b(?:{'|'.join(sorted(_CONTINUED))})[\s;]*$", re.I)
# a hint only (it may be inside a string): the tokens decide
_HINT = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+[\"']"
    r"|,\s*(?:FROM|WHERE|GROUP|ORDER|HAVING|LIMIT|\))|\["
    rf"|\b(?:{'|'.join(sorted(NOT_MYSQL_FUNCTIONS))})\s*\(",
    re.I,
)


def refused_token(sql: str) -> tuple[int, str] | None:
    """Where in the statement MySQL refuses a token, and its reply (None: it refuses none).
    sqlglot may read past such a token or stop before it: the caller takes whichever
    comes first, as MySQL's parser would."""
    if _HINT.search(sql) is None and _LAST_WORD.search(sql) is None:
        return None
    tokens = MySQL().tokenize(sql)
    for before, token in zip(tokens, tokens[1:], strict=False):
        reply = _refusal_of(sql, before, token)
        if reply is not None:
            return token.start, reply
    if tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if tokens and tokens[-1].text.upper() in _CONTINUED and tokens[-1].token_type not in _QUOTED:
        return len(sql), syntax_error(sql, len(sql))
    return None


def refuse_by_tables(tree: exp.Expression, tables: tuple[str, ...]) -> None:
    """Raise `Refused` with MySQL's reply for a table named in the wrong case."""
    known = set(tables)
    folded = {t.lower() for t in tables}
    defined = {cte.alias for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        name = table.name
        if (
            name
            and not table.db
            and name not in known
            and name not in defined
            and name.lower() in folded
        ):
            raise Refused(missing_table(DATABASE, name))


def _refusal_of(sql: str, before: Token, token: Token) -> str | None:
    """MySQL's reply to `token` after `before`, when it refuses them."""
    if token.token_type == TokenType.L_BRACKET:
        return syntax_error(sql, token.start)
    if before.token_type in _TABLE_KEYWORDS and token.token_type == TokenType.STRING:
        return syntax_error(sql, token.start)
    if before.token_type == TokenType.COMMA and token.token_type in _CLAUSE_TOKENS:
        return syntax_error(sql, token.start)
    if (
        token.token_type == TokenType.L_PAREN
        and before.token_type in _NAME_TOKENS
        and before.text.upper() in NOT_MYSQL_FUNCTIONS
    ):
        return unknown_function(DATABASE, before.text)
    return None
