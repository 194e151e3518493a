"""One MySQL statement rewritten for SQLite so that it answers as MySQL would.

sqlglot parses the MySQL statement; the tree is then rewritten, children before parents:
MySQL functions whose SQLite namesakes differ (or are missing) become calls of the user
functions in `mysql_functions`; exact-number results are rounded to MySQL's scale
(`9.4167` for an AVG of integers, `2.5000` for 5/2); text literals in comparisons get the
case-insensitive collation. Before the rewrite, what SQLite lacks (`ALL`/`ANY`, `WITH
ROLLUP`) is spelled out (`translate_expand`); after it, information_schema views become derived
tables of the declared schema (`catalog`). DDL never gets here: the statement guard
refuses it first.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError

from .catalog import SCHEMA, Catalog, serve_views, view_types, views_of
from .mysql_functions import COLLATION
from .mysql_replies import parse_error_position
from .mysql_types import NumericType, is_text, numeric_type
from .translate_expand import EXPANDED_WORDS, NotServed, Refused, expand
from .translate_quick import quick_translation
from .translate_refusals import refuse_by_tables, refused_token

# a statement without these words needs neither expansions nor views (a hint only: the
# tree decides; a word inside a string costs only the search)
_EXPANDED = re.compile(rf"\b(?:{'|'.join((*EXPANDED_WORDS, SCHEMA.upper()))})\b", re.I)


@dataclass(frozen=True)
class Translation:
    """A statement in SQLite's dialect."""

    sql: str


_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg, exp.Paren)
_AGGREGATES = (
    exp.Avg,
    exp.Sum,
    exp.Stddev,
    exp.StddevPop,
    exp.StddevSamp,
    exp.Variance,
    exp.VariancePop,
)
_DIVISIONS = (exp.Div, exp.Mod, exp.IntDiv)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
_DATE_PARTS = {
    exp.Year: "YEAR",
    exp.Month: "MONTH",
    exp.Day: "DAYOFMONTH",
    exp.DayOfMonth: "DAYOFMONTH",
    exp.DayOfWeek: "DAYOFWEEK",
    exp.DayOfYear: "DAYOFYEAR",
    exp.Quarter: "QUARTER",
    exp.Dayname: "DAYNAME",
    exp.LastDay: "LAST_DAY",
    exp.Hour: "HOUR",
    exp.Minute: "MINUTE",
    exp.Second: "SECOND",
}
_EXTRACT = {"YEAR", "MONTH", "QUARTER", "HOUR", "MINUTE", "SECOND", "WEEK"}
_RENAMED = {
    "NOW": "NOW",
    "SYSDATE": "NOW",
    "LOCALTIME": "NOW",
    "LOCALTIMESTAMP": "NOW",
    "MID": "SUBSTR",
    "LCASE": "LOWER",
    "UCASE": "UPPER",
}
_NAMED = {
    exp.CurrentDate: "CURDATE",
    exp.CurrentTimestamp: "NOW",
    exp.CurrentTime: "CURTIME",
    exp.UnixToTime: "FROM_UNIXTIME",
    exp.TsOrDsToDate: "MYSQL_DATE",
    exp.IntDiv: "MYSQL_DIV",
    exp.Pi: "MYSQL_PI",
    exp.SHA: "SHA1",
    exp.VariancePop: "VAR_POP",
    exp.Variance: "VAR_SAMP",
    exp.Ceil: "CEILING",
    exp.Floor: "FLOOR",
    exp.Rand: "RAND",
    exp.Left: "MYSQL_LEFT",
    exp.Right: "MYSQL_RIGHT",
}


def _sorts_a_query(node: exp.Expression) -> bool:
    """Whether `node` is a whole GROUP BY or ORDER BY term of a SELECT (not of a window or
    of a compound query, whose ORDER BY names result columns)."""
    parent = node.parent
    if isinstance(parent, exp.Ordered):
        parent = parent.parent
        return isinstance(parent, exp.Order) and isinstance(parent.parent, exp.Select)
    return isinstance(parent, exp.Group) and isinstance(parent.parent, exp.Select)


def call(name: str, *arguments: exp.Expression) -> exp.Anonymous:
    """A call of a function by name."""
    return exp.Anonymous(this=name, expressions=list(arguments))


def _text(value: str) -> exp.Literal:
    return exp.Literal.string(value)


def _number(value: int) -> exp.Literal:
    return exp.Literal.number(value)


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, (exp.TsOrDsToDate, exp.TsOrDsToTimestamp, exp.TsOrDsToTime)):
        if node.args.get("format"):
            break
        node = node.this
    return node


def _unit(node: exp.Expression, default: str = "DAY") -> str:
    unit = node.args.get("unit")
    return unit.name.upper() if unit is not None else default


def _date_add(target: exp.Expression, amount: exp.Expression, unit: str, sign: int):
    amount = exp.Neg(this=exp.Paren(this=amount)) if sign < 0 else amount
    return call("DATE_ADD", _unwrap(target), amount, _text(unit))


class _Rewriter:
    """Rewrites one parsed statement; `columns` are the declared types by column name."""

    def __init__(self, columns: dict[str, str], strict: bool = False):
        self.columns = columns
        # MySQL's strict mode in an INSERT or UPDATE: text that is no number read as one,
        # and (ERROR_FOR_DIVISION_BY_ZERO) a division by zero, stop it; a query's is NULL
        self.strict = strict
        self.aliases: dict[str, NumericType | None] = {}
        self._types: dict[int, NumericType | None] = {}

    def type_of(self, node: exp.Expression) -> NumericType | None:
        key = id(node)
        if key not in self._types:
            self._types[key] = numeric_type(node, self.columns, self.aliases, self.type_of)
        return self._types[key]

    def run(self, tree: exp.Expression) -> exp.Expression:
        nodes = list(tree.dfs())
        # columns of derived tables and CTEs are typed by the expressions they alias
        for node in reversed(nodes):
            if isinstance(node, exp.Alias) and isinstance(node.parent, exp.Select):
                self.aliases.setdefault(node.alias.lower(), self.type_of(node.this))
        for node in nodes:
            self.type_of(node)
        rounded = {id(n): scale for n in nodes if (scale := self._result_scale(n)) is not None}
        for node in reversed(nodes):
            new = self.rewrite(node)
            if new is not node:
                if node is tree:
                    tree = new
                else:
                    node.replace(new)
            if id(node) in rounded:
                new = self._wrap(new, "DEC", _number(rounded[id(node)]))
                tree = new if node is tree else tree
            self._types[id(new)] = self._types[id(node)]
        return tree

    def _result_scale(self, node: exp.Expression) -> int | None:
        """The scale to round an outermost exact-number expression to, if it needs it."""
        if not isinstance(node, (*_ARITHMETIC, *_AGGREGATES, exp.Coalesce, exp.Window)):
            return None
        if isinstance(node, _AGGREGATES) and isinstance(node.parent, exp.Window):
            return None
        if isinstance(node, exp.Window) and not isinstance(node.this, _AGGREGATES):
            return None
        if isinstance(node.parent, _ARITHMETIC):
            return None
        kind = self.type_of(node)
        if kind is None or kind[0] != "decimal":
            return None
        return kind[1]

    @staticmethod
    def _wrap(node: exp.Expression, name: str, *extra: exp.Expression) -> exp.Expression:
        holder = call(name)
        node.replace(holder)
        holder.set("expressions", [node, *extra])
        return holder

    def _as_text(self, node: exp.Expression) -> exp.Expression:
        kind = self.type_of(node)
        if kind is not None and kind[0] == "decimal":
            return call("DEC_TEXT", node, _number(kind[1]))
        return node

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        """The SQLite form of one node whose children are already rewritten."""
        kind = type(node)
        if kind in _DATE_PARTS:
            return call(_DATE_PARTS[kind], _unwrap(node.this))
        if kind in _NAMED:
            return call(
                _NAMED[kind], *[a for a in node.args.values() if isinstance(a, exp.Expression)]
            )
        if self.strict and isinstance(node, _DIVISIONS):
            self._wrap(node.expression, "STRICT_DIVISOR")
        if isinstance(node, exp.Anonymous) and node.name.upper() in _RENAMED:
            return call(_RENAMED[node.name.upper()], *node.expressions)
        if isinstance(node, exp.Anonymous) and node.name.upper() in ("ADDDATE", "SUBDATE"):
            target, amount = node.expressions[0], node.expressions[1]
            sign = -1 if node.name.upper() == "SUBDATE" else 1
            if isinstance(amount, exp.Interval):
                return _date_add(target, amount.this, _unit(amount), sign)
            return _date_add(target, amount, "DAY", sign)
        handler = _HANDLERS.get(kind)
        return handler(self, node) if handler else node

    # -- handlers by node type -------------------------------------------------------

    def _week(self, node: exp.Week) -> exp.Expression:
        mode = node.args.get("mode")
        return call("WEEK", _unwrap(node.this), *([mode] if mode else []))

    def _week_of_year(self, node: exp.WeekOfYear) -> exp.Expression:
        return call("WEEK", _unwrap(node.this), _number(3))

    def _time_to_str(self, node: exp.TimeToStr) -> exp.Expression:
        return call("DATE_FORMAT", _unwrap(node.this), node.args["format"])

    def _str_to_date(self, node: exp.StrToDate | exp.StrToTime) -> exp.Expression:
        return call("STR_TO_DATE", node.this, node.args["format"])

    def _datediff(self, node: exp.DateDiff) -> exp.Expression:
        return call("DATEDIFF", _unwrap(node.this), _unwrap(node.expression))

    def _timestampdiff(self, node: exp.TimestampDiff) -> exp.Expression:
        unit = _text(_unit(node))
        return call("TIMESTAMPDIFF", unit, _unwrap(node.expression), _unwrap(node.this))

    def _date_add_node(self, node: exp.DateAdd | exp.DateSub) -> exp.Expression:
        sign = -1 if isinstance(node, exp.DateSub) else 1
        return _date_add(node.this, node.expression, _unit(node), sign)

    def _plus_minus(self, node: exp.Add | exp.Sub) -> exp.Expression:
        sign = -1 if isinstance(node, exp.Sub) else 1
        if isinstance(node.expression, exp.Interval):
            interval = node.expression
            return _date_add(node.this, interval.this, _unit(interval), sign)
        if isinstance(node.this, exp.Interval) and sign > 0:
            return _date_add(node.expression, node.this.this, _unit(node.this), sign)
        return node

    def _extract(self, node: exp.Extract) -> exp.Expression:
        unit = node.this.name.upper()
        if unit == "DAY":
            return call("DAYOFMONTH", _unwrap(node.expression))
        if unit not in _EXTRACT:
            raise NotServed(f"EXTRACT({unit} FROM ...) is not supported by the embedded back-end")
        return call(unit, _unwrap(node.expression))

    def _format(self, node: exp.NumberToStr) -> exp.Expression:
        return call("FORMAT", node.this, node.args["format"])

    def _trunc(self, node: exp.Trunc) -> exp.Expression:
        return call("TRUNCATE", node.this, node.args.get("decimals") or _number(0))

    def _sort_column(self, node: exp.Column) -> exp.Expression:
        """A text column alone as a query's GROUP BY or ORDER BY term is sorted by SORT_KEY:
        the collation's order at a Python call a row, where the collation makes one a
        comparison (as `translate_quick` writes it). A bare name that a qualified column of
        the select list has is that column, as MySQL reads it (SQLite would find it
        ambiguous between two tables)."""
        if node.table or not _sorts_a_query(node):
            return node
        select, name = node.find_ancestor(exp.Select), node.name.lower()
        for shown in select.expressions if select is not None else ():
            if isinstance(shown, exp.Column) and shown.table and shown.name.lower() == name:
                node.set("table", shown.args["table"].copy())
                return node
        declared = self.columns.get(node.name.lower())
        if declared is None or not is_text(declared) or node.name.lower() in self.aliases:
            return node
        return call("SORT_KEY", node.copy())

    def _mod(self, node: exp.Mod) -> exp.Expression:
        if self.type_of(node) == ("int", 0):
            return node  # SQLite's % on integers already follows MySQL
        return call("MYSQL_MOD", node.this, node.expression)

    def _round(self, node: exp.Round) -> exp.Expression:
        kind = self.type_of(node.this)
        name = "ROUND_DOUBLE" if kind is not None and kind[0] == "float" else "ROUND"
        places = node.args.get("decimals")
        return call(name, node.this, *([places] if places else []))

    def _cast(self, node: exp.Cast) -> exp.Expression:
        target = node.to
        if target.is_type(*exp.DataType.INTEGER_TYPES):
            return call("CAST_SIGNED", node.this)
        if target.is_type(exp.DataType.Type.DECIMAL):
            parameters = target.expressions
            scale = int(parameters[1].name) if len(parameters) == 2 else 0
            return call("DEC", node.this, _number(scale))
        if target.is_type(*exp.DataType.TEXT_TYPES):
            shown = self._as_text(node.this)
            return node if shown is node.this else shown
        if target.is_type(exp.DataType.Type.DATE):
            return call("MYSQL_DATE", node.this)
        return node

    def _concat(self, node: exp.Concat) -> exp.Expression:
        node.set("expressions", [self._as_text(e) for e in node.expressions])
        return node

    def _concat_ws(self, node: exp.ConcatWs) -> exp.Expression:
        return call("CONCAT_WS", *[self._as_text(e) for e in node.expressions])

    def _group_concat(self, node: exp.GroupConcat) -> exp.Expression:
        value, order = node.this, []
        if isinstance(value, exp.Order):
            order, value = value.expressions, value.this
        distinct = isinstance(value, exp.Distinct)
        if distinct:
            value = value.expressions[0]
        separator = node.args.get("separator") or _text(",")
        value = self._as_text(value)
        if not order and not distinct:
            return exp.GroupConcat(this=value, separator=separator)
        keys: list[exp.Expression] = []
        for ordered in order:
            keys += [ordered.this, _number(int(bool(ordered.args.get("desc"))))]
        return call("GROUP_CONCAT_ORDERED", value, separator, _number(int(distinct)), *keys)

    def _position(self, node: exp.StrPosition) -> exp.Expression:
        position = node.args.get("position")
        return call("LOCATE", node.args["substr"], node.this, *([position] if position else []))

    def _collate(self, node: exp.Collate) -> exp.Expression:
        name = node.expression.name.lower()
        collation = "BINARY" if name.endswith("_bin") or name == "binary" else COLLATION
        return exp.Collate(this=node.this, expression=exp.Var(this=collation))

    def _comparison(self, node: exp.Binary) -> exp.Expression:
        """Text literals compared case-insensitively, as MySQL's default collation does;
        text compared with a number is read as a number, as MySQL does."""
        if isinstance(node.parent, exp.Update) and node.arg_key == "expressions":
            return node  # `SET column = value` is an assignment
        for side, other in ((node.this, node.expression), (node.expression, node.this)):
            if isinstance(side, exp.Literal) and side.is_string and self.type_of(other) is None:
                self._wrap_collate(side)
            kind, other_kind = self.type_of(side), self.type_of(other)
            if kind == ("text", 0) and other_kind is not None and other_kind[0] != "text":
                self._as_number(side, "DECIMAL" if other_kind[0] == "int" else "DOUBLE")
        return node

    def _as_number(self, node: exp.Expression, kind: str = "DOUBLE") -> None:
        """Text read as a number; in a write, text that is none stops the statement, named
        as MySQL reads it (DECIMAL beside an integer, else DOUBLE)."""
        if self.strict:
            self._wrap(node, "STRICT_NUMBER", _text(kind))
            return
        holder = exp.Cast(this=exp.Null(), to=exp.DataType.build("DOUBLE"))
        node.replace(holder)
        holder.set("this", node)

    def _sum(self, node: exp.Sum | exp.Avg) -> exp.Expression:
        if self.type_of(node.this) == ("text", 0):
            self._as_number(node.this)
        return node

    def _in(self, node: exp.In) -> exp.Expression:
        """An untyped value compared with text literals or a subquery's values (`= ANY`
        becomes IN) is compared case-insensitively: a subquery of literals has no column
        collation for SQLite to use."""
        if not isinstance(node.this, exp.Column) and self.type_of(node.this) is None:
            texts = any(isinstance(e, exp.Literal) and e.is_string for e in node.expressions)
            if texts or node.args.get("query") is not None:
                self._wrap_collate(node.this)
        return node

    @staticmethod
    def _wrap_collate(node: exp.Expression) -> None:
        holder = exp.Collate(this=exp.Null(), expression=exp.Var(this=COLLATION))
        node.replace(holder)
        holder.set("this", node)


_HANDLERS = {
    exp.Week: _Rewriter._week,
    exp.WeekOfYear: _Rewriter._week_of_year,
    exp.TimeToStr: _Rewriter._time_to_str,
    exp.StrToDate: _Rewriter._str_to_date,
    exp.StrToTime: _Rewriter._str_to_date,
    exp.DateDiff: _Rewriter._datediff,
    exp.TimestampDiff: _Rewriter._timestampdiff,
    exp.DateAdd: _Rewriter._date_add_node,
    exp.DateSub: _Rewriter._date_add_node,
    exp.Add: _Rewriter._plus_minus,
    exp.Sub: _Rewriter._plus_minus,
    exp.Extract: _Rewriter._extract,
    exp.NumberToStr: _Rewriter._format,
    exp.Trunc: _Rewriter._trunc,
    exp.Mod: _Rewriter._mod,
    exp.Column: _Rewriter._sort_column,
    exp.Round: _Rewriter._round,
    exp.Cast: _Rewriter._cast,
    exp.Concat: _Rewriter._concat,
    exp.ConcatWs: _Rewriter._concat_ws,
    exp.GroupConcat: _Rewriter._group_concat,
    exp.StrPosition: _Rewriter._position,
    exp.Collate: _Rewriter._collate,
    exp.In: _Rewriter._in,
    exp.Sum: _Rewriter._sum,
    exp.Avg: _Rewriter._sum,
    **{kind: _Rewriter._comparison for kind in _COMPARISONS},
}


_SQLITE = Dialect.get_or_raise("sqlite")


@functools.lru_cache(maxsize=4096)
def translate(sql: str, catalog: Catalog = ()) -> tuple[Translation, ...]:
    """MySQL statements in SQLite's dialect, over the tables of `catalog` (cached: RL loops
    send the same ones again).

    The common statements are translated without sqlglot (`translate_quick`); a statement
    holding one of `TRANSLATED_WORDS` outside its strings always goes to sqlglot."""
    quick = quick_translation(sql, *_names(catalog))
    if quick is not None:
        return (Translation(quick),)
    return rewrite(sql, catalog)


@functools.lru_cache(maxsize=1024)
def _names(catalog: Catalog) -> tuple[dict[str, str], tuple[str, ...]]:
    """The catalog's columns by lower-case name with their declared types, and its tables
    (computed once a catalog: the translation of every new statement reads them; not to be
    changed by the caller)."""
    declared = {c.lower(): t for _, columns in catalog for c, t in columns}
    return declared, tuple(name for name, _ in catalog)


def clear_translations() -> None:
    """Forget the translated statements and the catalogs' names (a benchmark measures cold
    translations)."""
    translate.cache_clear()
    _names.cache_clear()


def rewrite(sql: str, catalog: Catalog) -> tuple[Translation, ...]:
    """The statements read by sqlglot, rewritten and generated for SQLite."""
    declared, tables = _names(catalog)
    found: list[Translation] = []
    expanded = _EXPANDED.search(sql) is not None
    refused = refused_token(sql)
    try:
        trees = sqlglot.parse(sql, read="mysql")
    except ParseError as error:
        stopped = parse_error_position(error, sql)
        if refused is None or (stopped is not None and stopped <= refused[0]):
            raise
    if refused is not None:  # MySQL's parser stops there, before anything sqlglot missed
        raise Refused(refused[1])
    for tree in trees:
        if tree is None:
            continue
        refuse_by_tables(tree, tables)
        columns = dict(declared)
        if expanded:
            for table in views_of(tree):  # the views' columns are typed as MariaDB's
                columns = {**view_types(table.name.upper()), **columns}
            tree = expand(tree, columns)
        # strict mode stops an INSERT or UPDATE, not a DELETE (MariaDB warns there)
        strict = isinstance(tree, (exp.Update, exp.Insert))
        rewritten = _Rewriter(columns, strict).run(tree)
        if expanded:
            serve_views(rewritten, catalog)
        # the tree is ours alone: no copy before generating
        text = _SQLITE.generate(rewritten, copy=False, unsupported_level=ErrorLevel.RAISE)
        found.append(Translation(text))
    return tuple(found)
