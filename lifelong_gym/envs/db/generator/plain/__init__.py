"""The plain-question style: questions and changes worded as people ask for them, over one
table with human column names (`docs/db-tasks.md`, "Styles")."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from ..context import Built
from ..domains import TableMaker
from ..sheets import MadeSheet
from . import questions, writes
from .base import Plain

#: The skills plain tasks use (one table, flat conditions, one sort key, LIMIT 1, writes).
PLAIN_SKILLS = (
    "select", "insert", "update", "delete", "where_single_condition",
    "where_multiple_conditions", "order_by_single_column", "limit_only",
)  # fmt: skip

KINDS: dict[str, Callable[[Plain], Built | None]] = {
    "lookup": questions.lookup,
    "how_many": questions.how_many,
    "count": questions.count,
    "aggregate": questions.aggregate,
    "extreme": questions.extreme,
    "extreme_among": questions.extreme_among,
    "comparison": questions.compared,
    "listing": questions.listing,
    "short_lookup": questions.short_lookup,
    "name_for": questions.name_for,
    "count_of": questions.count_of,
    "short_aggregate": questions.short_aggregate,
    "earliest": questions.earliest,
    "insert": writes.insert,
    "update": writes.update,
    "delete": writes.delete,
}

#: How often each kind is drawn against 1 for any other: inserts and updates are two thirds of
#: AgentBench's DB tasks, so they come 8 draws in 21 (38%) here, not 2 in 16.
WEIGHTS = {"insert": 4, "update": 4}

#: How often a question is written all in lower case, values too, as many crowd-written ones
#: are ("how many floors does the capitol square have?"); its SQL then writes the values as
#: the question does, since MySQL compares text without regard to case.
LOWER_CASE_SHARE = 0.15
_TEXT_LITERAL = re.compile(r"'(?:[^']|'')*'")
#: How often a task names its table and headers in a sentence of its own, on a line after the
#: question, as AgentBench's DB tasks do (its `add_description` field).
NAMED_TABLE_SHARE = 0.3
TABLE_SENTENCE = "The name of this table is {table}, and the headers of this table are {headers}."


def plain_task(rng: random.Random, maker: TableMaker, made: MadeSheet) -> Built | None:
    """A plain task of a random kind over `made`, its wording varied in case and ending;
    None when the drawn kind does not fit the table."""
    kind = rng.choices(tuple(KINDS.values()), [WEIGHTS.get(k, 1) for k in KINDS])[0]
    built = kind(Plain(rng, maker, made))
    if built is None:
        return None
    text, statements = built.instruction, built.statements
    if statements[0].startswith("SELECT") and rng.random() < LOWER_CASE_SHARE:
        text = text.lower()
        statements = tuple(_TEXT_LITERAL.sub(lambda m: m.group(0).lower(), s) for s in statements)
    elif rng.random() < 0.6:
        text = text[0].upper() + text[1:]
    else:
        text = text[0].lower() + text[1:]
    if rng.random() < 0.2:
        text = text.rstrip("?.")
    if rng.random() < NAMED_TABLE_SHARE:
        headers = ",".join(c.name for c in made.columns)
        text += f"\n{TABLE_SENTENCE.format(table=made.table.name, headers=headers)}"
    return Built(statements, text, built.empty)
