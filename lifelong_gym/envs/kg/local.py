"""Logical forms evaluated on the caller's thread, one index lookup at a time, with a budget.

Oxigraph cannot stop a SPARQL query once it runs, but a lookup of one pattern
(`store.quads_for_pattern`) hands back its matches one by one. `Evaluation` walks a
logical form itself: an entity is a set of one term, a JOIN one lookup per term of its
source's set, an AND the intersection of its two sets, a class the members read from
`type.object.type`. Every lookup and every match read is a step: past `WORK` steps the
evaluation gives up (`Exhausted`) and the caller sends the compiled SPARQL to the killable
store process instead; the clock is read at the first step and every `_CHECK` after, and
past the deadline it stops (`Overrun`). So this path costs at most `WORK` small steps of
time and `WORK` terms of memory, whatever the agent asks, and leaves nothing running when
it returns. The sets hold Oxigraph's own terms, so the answers are SPARQL's (DISTINCT,
joins on term equality), with the Freebase prefix cut as `short_name` cuts it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from lifelong_gym.envs.kg.sexpr import SExpr
from lifelong_gym.envs.kg.sparql import (
    ENTITY,
    NS,
    ORDERED_DATATYPES,
    TYPE_RELATION,
    XSD,
    check_relation,
    short_name,
)

WORK = 50_000  # matches and lookups one action may cost on the caller's thread
_CHECK = 64  # read the clock every this many steps


class Exhausted(Exception):
    """The form needs more than `WORK` steps: run it in the store process instead."""


class Overrun(Exception):
    """The evaluation passed its deadline."""


class Evaluation:
    """One action's evaluation on `store`, bounded by `WORK` steps and `deadline`."""

    def __init__(self, store: Any, deadline: float):
        import pyoxigraph

        self._ox = pyoxigraph
        self._store = store
        self._deadline = deadline
        self.spent = 0  # steps taken so far

    def entities(self, expr: SExpr, limit: int) -> list[str]:
        """The short names of at most `limit` of the terms `expr` denotes."""
        return _names(self._denote(expr, stop_at=limit), limit)

    def count(self, expr: SExpr) -> list[str]:
        """`COUNT(DISTINCT ?x)` over `expr`, as the one row of a count query."""
        return [str(len(self._denote(expr)))]

    def relations(self, subject: SExpr, limit: int, *, numeric: bool = False) -> list[str]:
        """The distinct relations leaving `subject` (an entity or a form), as short names.

        `numeric` keeps only relations with a value that argmax/argmin can order.
        """
        ordered = {XSD + name for name in ORDERED_DATATYPES}
        found: set[Any] = set()
        for term in self._subjects(self._denote(subject)):
            for quad in self._matches(term, None, None):
                value = quad.object
                if not numeric or (
                    isinstance(value, self._ox.Literal) and value.datatype.value in ordered
                ):
                    found.add(quad.predicate)
        return _names(found, limit)

    # -- the walk --------------------------------------------------------------------

    def _denote(self, expr: SExpr, stop_at: int | None = None) -> set[Any]:
        if isinstance(expr, str):
            if ENTITY.match(expr):  # as the compiler reads it (which checked every shape)
                return {self._ox.NamedNode(NS + expr)}
            members = self._matches(None, self._iri(TYPE_RELATION), self._iri(expr))
            return {quad.subject for quad in members}
        head = expr[0]
        if head == "AND":
            left = self._denote(expr[1])
            return left & self._denote(expr[2]) if left else set()
        if head == "JOIN":
            relation, source = expr[1], expr[2]
            reverse = isinstance(relation, tuple)
            predicate = self._iri(relation[1] if reverse else relation)
            found: set[Any] = set()
            sources = self._denote(source)
            for term in self._subjects(sources) if reverse else sources:
                pattern = (term, predicate, None) if reverse else (None, predicate, term)
                for quad in self._matches(*pattern):
                    found.add(quad.object if reverse else quad.subject)
                if stop_at is not None and len(found) >= stop_at:
                    break
            return found
        raise Exhausted  # argmax, argmin: Oxigraph's own ordering of literals, in the process

    def _subjects(self, terms: Iterable[Any]) -> Iterator[Any]:
        """The terms that can be a subject (a literal has no relations)."""
        return (t for t in terms if not isinstance(t, self._ox.Literal))

    def _iri(self, name: str) -> Any:
        return self._ox.NamedNode(NS + check_relation(name))

    def _matches(self, subject: Any, predicate: Any, obj: Any) -> Iterator[Any]:
        self._spend()
        quads = self._store.quads_for_pattern(subject, predicate, obj, self._ox.DefaultGraph())
        for quad in quads:
            self._spend()
            yield quad

    def _spend(self) -> None:
        self.spent += 1
        if self.spent > WORK:
            raise Exhausted
        if self.spent % _CHECK == 1 and time.monotonic() > self._deadline:
            raise Overrun


def _names(terms: set[Any], limit: int) -> list[str]:
    return sorted(short_name(term.value) for term in terms)[:limit]
