"""Logical forms evaluated on the caller's thread, one index lookup at a time, with a budget.

Oxigraph cannot stop a SPARQL query once it runs, but a lookup of one pattern
(`store.quads_for_pattern`) hands back its matches and returns. `Evaluation` walks a
logical form itself: an entity is a set of one term, a JOIN one lookup per term of its
source's set, an AND the intersection of its two sets, a class the members read from
`type.object.type`, a count a set's size. The relations of one entity are the one-pattern
query from that fixed entity; argmax/argmin read the values by lookups and leave their
ordering to Oxigraph, in queries over inline VALUES only. Every lookup, match and row is
a step, and no lookup reads past the steps left: past `WORK` steps the evaluation gives
up (`Exhausted`) and the caller sends the compiled SPARQL to the killable store process
instead; the clock is read at every lookup, and past the deadline it stops (`Overrun`).
So this path costs at most `WORK` small steps of time and memory whatever the agent asks,
and leaves nothing running when it returns. The sets hold Oxigraph's own terms, so the
answers are SPARQL's (DISTINCT, joins on term equality), with the Freebase prefix cut as
`short_name` cuts it. `Known` keeps the sets of forms already evaluated, so an action
pays only for its own lookups.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from itertools import islice
from operator import attrgetter
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

WORK = 20_000  # lookups and matches one action may cost on the caller's thread (the
# shipped tasks need at most 8,571)

_SUBJECT, _PREDICATE, _OBJECT = (attrgetter(part) for part in ("subject", "predicate", "object"))


class Exhausted(Exception):
    """The form needs more than `WORK` steps: run it in the store process instead."""


class Overrun(Exception):
    """The evaluation passed its deadline."""


class Evaluation:
    """One action's evaluation on `store`, bounded by `WORK` steps and `deadline`."""

    def __init__(self, store: Any, deadline: float, known: Known | None = None):
        import pyoxigraph

        self._ox = pyoxigraph
        self._store = store
        self._deadline = deadline
        self._known = known if known is not None else Known()
        self.spent = 0  # steps taken so far

    def entities(self, expr: SExpr, limit: int) -> list[str]:
        """The short names of at most `limit` of the terms `expr` denotes."""
        self._spend(1)
        if isinstance(expr, tuple) and expr[0] in ("ARGMAX", "ARGMIN"):
            return _names(self._extremes(*expr), limit)
        return _names(self._denote(expr, stop_at=limit), limit)

    def count(self, expr: SExpr) -> list[str]:
        """`COUNT(DISTINCT ?x)` over `expr`, as the one row of a count query."""
        self._spend(1)
        return [str(len(self._denote(expr)))]

    def relations(
        self, subject: SExpr, limit: int, query: str, *, numeric: bool = False
    ) -> list[str]:
        """The distinct relations leaving `subject` (an entity or a form), as short names.

        `query` is the compiled SPARQL; of one entity, that is one pattern from a fixed
        term, which Oxigraph runs (DISTINCT in its own code) at a step per row it returns.
        `numeric` keeps only relations with a value that argmax/argmin can order.
        """
        self._spend(1)
        if isinstance(subject, str):
            return _names(self._rows(query), limit)
        ordered = {XSD + name for name in ORDERED_DATATYPES}
        literal = self._ox.Literal
        found: set[Any] = set()
        for term in self._subjects(self._denote(subject)):
            quads = self._lookup(term, None, None)
            if numeric:
                found.update(
                    q.predicate
                    for q in quads
                    if isinstance(q.object, literal) and q.object.datatype.value in ordered
                )
            else:
                found.update(map(_PREDICATE, quads))
        return _names(found, limit)

    def _extremes(self, operator: str, source: SExpr, attribute: str) -> set[Any]:
        """The terms of `source` whose `attribute` value is the largest (or smallest).

        The values are read by lookups; Oxigraph orders and compares them (SPARQL's MAX
        over mixed types, `=` by value) in two queries over inline VALUES only, which read
        nothing of the store: their cost is linear in what the lookups read.
        """
        predicate = self._iri(attribute)
        pairs = [
            (term, quad.object)
            for term in self._subjects(self._denote(source))
            for quad in self._lookup(term, predicate, None)
        ]
        if not pairs:
            return set()
        inline = (self._ox.NamedNode, self._ox.Literal)
        if not all(isinstance(t, inline) for pair in pairs for t in pair):
            raise Exhausted  # VALUES holds no blank node: the store process runs the form
        values = " ".join(str(value) for _, value in pairs)
        aggregate = "MAX" if operator == "ARGMAX" else "MIN"
        best = self._rows(f"SELECT ({aggregate}(?v) AS ?b) WHERE {{ VALUES ?v {{ {values} }} }}")
        if not best:
            return set()
        rows = " ".join(f"({term} {value})" for term, value in pairs)
        return set(
            self._rows(f"SELECT ?x WHERE {{ VALUES (?x ?v) {{ {rows} }} FILTER(?v = {best[0]}) }}")
        )

    # -- the walk --------------------------------------------------------------------

    def _denote(self, expr: SExpr, stop_at: int | None = None) -> frozenset[Any]:
        terms = self._known.get(expr)
        if terms is None:
            terms = frozenset(self._walk(expr, stop_at))
            if stop_at is None or len(terms) < stop_at:  # the whole denotation
                self._known.add(expr, terms)
        return terms

    def _walk(self, expr: SExpr, stop_at: int | None) -> AbstractSet[Any]:
        if isinstance(expr, str):
            if ENTITY.match(expr):  # as the compiler reads it (which checked every shape)
                return {self._ox.NamedNode(NS + expr)}
            members = self._lookup(None, self._iri(TYPE_RELATION), self._iri(expr))
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
                if reverse:
                    found.update(map(_OBJECT, self._lookup(term, predicate, None)))
                else:
                    found.update(map(_SUBJECT, self._lookup(None, predicate, term)))
                if stop_at is not None and len(found) >= stop_at:
                    break
            return found
        raise Exhausted  # not a form the compiler lets through: the store process says why

    def _subjects(self, terms: Iterable[Any]) -> Iterator[Any]:
        """The terms that can be a subject (a literal has no relations)."""
        return (t for t in terms if not isinstance(t, self._ox.Literal))

    def _iri(self, name: str) -> Any:
        return self._ox.NamedNode(NS + check_relation(name))

    def _lookup(self, subject: Any, predicate: Any, obj: Any) -> list[Any]:
        """The quads of one pattern: a step for the lookup and one per quad."""
        self._spend(1)
        pattern = self._store.quads_for_pattern(subject, predicate, obj, self._ox.DefaultGraph())
        quads = list(islice(pattern, WORK - self.spent + 1))
        self._spend(len(quads))
        return quads

    def _rows(self, query: str) -> list[Any]:
        """The values of a query whose cost is linear in its rows: a step per row."""
        try:
            solutions = self._store.query(query)
        except SyntaxError:  # a term Oxigraph cannot write back: the store process reports it
            raise Exhausted from None
        rows = [row[0] for row in islice(solutions, WORK - self.spent + 1)]
        self._spend(len(rows) + 1)
        return [value for value in rows if value is not None]

    def _spend(self, steps: int) -> None:
        self.spent += steps
        if self.spent > WORK:
            raise Exhausted
        if time.monotonic() > self._deadline:
            raise Overrun


class Known:
    """The sets of the forms evaluated lately (the graph never changes), at most `TERMS` terms.

    An action builds on the variables before it, so its form's parts were evaluated by the
    actions that made them: with this, an action costs only its own lookups.
    """

    TERMS = 100_000

    def __init__(self) -> None:
        self._sets: dict[SExpr, frozenset[Any]] = {}
        self._size = 0

    def get(self, expr: SExpr) -> frozenset[Any] | None:
        return self._sets.get(expr)

    def add(self, expr: SExpr, terms: frozenset[Any]) -> None:
        if len(terms) > self.TERMS:
            return
        self._sets[expr] = terms
        self._size += len(terms)
        while self._size > self.TERMS:  # the oldest go first
            oldest = next(iter(self._sets))
            self._size -= len(self._sets.pop(oldest))


def _names(terms: Iterable[Any], limit: int) -> list[str]:
    return sorted(short_name(term.value) for term in terms)[:limit]
