"""Compiling logical forms to SPARQL over Freebase-style IRIs, with strict argument checks."""

from __future__ import annotations

import re
from itertools import count

from lifelong_gym.envs.kg.sexpr import SExpr, dump_sexpr
from lifelong_gym.errors import ActionError

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
TYPE_RELATION = "type.object.type"
# Literal datatypes that argmax/argmin can order: what get_attributes lists.
ORDERED_DATATYPES = ("integer", "decimal", "double", "float", "date", "dateTime", "gYear")
# Triple patterns one query may hold: `intersection(#k, #k)` doubles a form at every step,
# so without a cap fifteen turns compile to a query of 2^15 patterns.
MAX_PATTERNS = 128

# Only these shapes ever reach a query, so no argument can close a brace or start a comment.
ENTITY = re.compile(r"^[mg]\.[0-9a-z_]{1,32}$")
RELATION = re.compile(r"^[a-z][a-z0-9_]{0,63}(?:\.[a-z0-9_]{1,64}){1,4}$")


class InvalidArgument(ActionError):
    """An entity, relation or logical form that the compiler refuses to put into a query."""


def check_entity(text: str) -> str:
    """`text` if it is a Freebase id such as `m.0abc12`, else `InvalidArgument`."""
    if not ENTITY.match(text):
        raise InvalidArgument(f"{text!r} is not an entity id (expected an id like m.0abc12)")
    return text


def check_relation(text: str) -> str:
    """`text` if it is a relation name such as `film.film.genre`, else `InvalidArgument`."""
    if not RELATION.match(text):
        raise InvalidArgument(
            f"{text!r} is not a relation name (expected a name like film.film.genre)"
        )
    return text


def short_name(value: str) -> str:
    """A Freebase IRI as its short name (`m.0abc12`); other values unchanged."""
    return value[len(NS) :] if value.startswith(NS) else value


def iri(name: str) -> str:
    """The full IRI of a Freebase name (full IRIs parse on every store; `ns:m.0hd1` does not)."""
    return f"<{NS}{name}>"


def entities_query(expr: SExpr, limit: int) -> str:
    """`SELECT DISTINCT ?x` over the entities (or values) a logical form denotes."""
    fresh = _Fresh()
    if isinstance(expr, tuple) and expr and expr[0] in ("ARGMAX", "ARGMIN"):
        return _extreme_query(expr, fresh, limit)
    lines: list[str] = []
    _bind(expr, "?x", lines, fresh)
    return f"SELECT DISTINCT ?x WHERE {{\n{_join(lines)}\n}} LIMIT {limit}"


def count_query(expr: SExpr) -> str:
    """`SELECT (COUNT(DISTINCT ?x) ...)` over a logical form's entities."""
    lines: list[str] = []
    _bind(expr, "?x", lines, _Fresh())
    return f"SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE {{\n{_join(lines)}\n}}"


def relations_query(expr: SExpr, limit: int) -> str:
    """The distinct outgoing relations of an entity or of a logical form's entities."""
    subject, lines = _subject(expr)
    lines.append(f"{subject} ?r ?o .")
    return f"SELECT DISTINCT ?r WHERE {{\n{_join(lines)}\n}} LIMIT {limit}"


def attributes_query(expr: SExpr, limit: int) -> str:
    """The distinct relations whose values are numbers or dates, for argmax and argmin."""
    subject, lines = _subject(expr)
    types = ", ".join(f"<{XSD}{t}>" for t in ORDERED_DATATYPES)
    lines.append(f"{subject} ?r ?o .")
    lines.append(f"FILTER(isLiteral(?o) && DATATYPE(?o) IN ({types}))")
    return f"SELECT DISTINCT ?r WHERE {{\n{_join(lines)}\n}} LIMIT {limit}"


def _subject(expr: SExpr) -> tuple[str, list[str]]:
    if isinstance(expr, str):
        return iri(check_entity(expr)), []
    lines: list[str] = []
    _bind(expr, "?x", lines, _Fresh())
    return "?x", lines


def _extreme_query(expr: tuple[SExpr, ...], fresh: _Fresh, limit: int) -> str:
    # Every entity that reaches the extreme value, so ties are kept rather than picked.
    operator, source, attribute = expr
    if not isinstance(attribute, str):
        raise InvalidArgument(f"the attribute of {operator} must be a relation name")
    relation = iri(check_relation(attribute))
    aggregate = "MAX" if operator == "ARGMAX" else "MIN"
    outer: list[str] = []
    _bind(source, "?x", outer, fresh)
    inner: list[str] = []
    _bind(source, "?y", inner, fresh)
    return (
        f"SELECT DISTINCT ?x WHERE {{\n{_join(outer)}\n?x {relation} ?value .\n"
        f"{{ SELECT ({aggregate}(?inner) AS ?best) WHERE {{\n{_join(inner)}\n"
        f"?y {relation} ?inner .\n}} }}\nFILTER(?value = ?best)\n}} LIMIT {limit}"
    )


def _bind(expr: SExpr, var: str, lines: list[str], fresh: _Fresh) -> None:
    """Append patterns that bind `var` to exactly the denotation of `expr`."""
    if len(lines) > MAX_PATTERNS:
        raise InvalidArgument(
            f"the logical form is too large (more than {MAX_PATTERNS} patterns in one query)"
        )
    if isinstance(expr, str):
        if ENTITY.match(expr):
            lines.append(f"VALUES {var} {{ {iri(expr)} }}")
        else:  # a class name, as in (AND film.film ...)
            lines.append(f"{var} {iri(TYPE_RELATION)} {iri(check_relation(expr))} .")
        return
    head = expr[0] if expr else None
    if head == "JOIN" and len(expr) == 3:
        relation, source = expr[1], expr[2]
        reverse = isinstance(relation, tuple) and len(relation) == 2 and relation[0] == "R"
        name = relation[1] if reverse else relation
        if not isinstance(name, str):
            raise InvalidArgument(f"a JOIN needs a relation name, not {dump_sexpr(name)!r}")
        predicate = iri(check_relation(name))
        if isinstance(source, str) and ENTITY.match(source):
            node = iri(source)
        else:
            node = fresh()
            _bind(source, node, lines, fresh)
        lines.append(f"{node} {predicate} {var} ." if reverse else f"{var} {predicate} {node} .")
        return
    if head == "AND" and len(expr) == 3:
        _bind(expr[1], var, lines, fresh)
        _bind(expr[2], var, lines, fresh)
        return
    if head in ("COUNT", "ARGMAX", "ARGMIN"):
        raise InvalidArgument(f"{head} yields a final answer and cannot be used inside a query")
    raise InvalidArgument(f"unsupported logical form {dump_sexpr(expr)!r}")


def _join(lines: list[str]) -> str:
    return "\n".join(lines)


class _Fresh:
    """Fresh SPARQL variable names ?v0, ?v1, ... for one query."""

    def __init__(self) -> None:
        self._numbers = count()

    def __call__(self) -> str:
        return f"?v{next(self._numbers)}"
