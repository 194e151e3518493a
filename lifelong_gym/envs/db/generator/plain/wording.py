"""How plain questions are worded: the phrasings of each kind, and the voices of a condition
(plain "the Goals is 5"; crowd-written table QA "Goals of 5", "Goals larger than 5")."""

from __future__ import annotations

# (SQL operator, ways to say it)
COMPARISONS = (
    (">", ("more than", "greater than", "over", "above")),
    ("<", ("less than", "fewer than", "below", "under")),
    (">=", ("at least", "no less than")),
    ("<=", ("at most", "no more than")),
)
#: A comparison as short table questions say it, after "a" ("a Goals smaller than 5").
WIKI_COMPARISONS = {
    ">": ("{} larger than {}", "{} greater than {}", "{} bigger than {}", "{} more than {}"),
    "<": ("{} smaller than {}", "{} less than {}", "{} lower than {}", "{} fewer than {}"),
    ">=": ("{} of at least {}", "{} of {} or more"),
    "<=": ("{} of at most {}", "{} of {} or less"),
}
CONDITION_VOICES = (
    "the {} is {}", "{} is {}", "the {} was {}", "{} equals {}", "the {} is listed as {}",
)  # fmt: skip
WIKI_VOICES = ("{} of {}", "{} of {}", "{} listed as {}")
AGGREGATES = {
    "SUM": ("total", "combined", "overall"),
    "AVG": ("average", "mean"),
    "MAX": ("highest", "largest", "maximum", "biggest"),
    "MIN": ("lowest", "smallest", "minimum"),
}
#: Where a question names its table, if it does (after the column it asks for).
IN_TABLE = ("", "", "", " in the {table} table", " of the `{table}` table", " in {table}")
#: The most (True) and the least (False) of a number, as a question says it.
EXTREMES = {True: ("most", "highest", "largest"), False: ("least", "lowest", "fewest")}
EARLIEST = ("earliest", "earliest", "first")
LATEST = ("latest", "latest", "most recent", "last")

#: How each kind of question may be worded. {condition} and {tests} are a condition in the
#: plain voice, {has} one in the short voice after "a", {lead} one in the short voice leading a
#: question, {first} one naming the value first, after "for" or "with" ("11 Points").
PHRASINGS: dict[str, tuple[str, ...]] = {
    "lookup": (
        "What is the {column} when {condition}?",
        "What are the {column} values where {condition}?",
        "Tell me the {column} when {condition}.",
        "Name the {column} for which {condition}.",
        "What {column} is listed where {condition}?",
        "Which {column} goes with the row where {condition}?",
        "What is the {column} for {first}?",
        "What {column} did {first} have?",
        "Which {column} goes with {first}?",
        "Give the {column} for {first}.",
        "When {condition}, what is the {column}?",
        "With {first}, what was the {column}?",
    ),
    "how_many": (
        "How many {column} did {first} have?",
        "How many {column} does {first} have?",
        "How many {column} were there for {first}?",
        "What number of {column} went with {first}?",
        "How many {column} for {first}?",
    ),
    "count": (
        "How many {rows} are there where {condition}?",
        "What is the number of {rows} when {condition}?",
        "Count the {rows} for which {condition}.",
        "How many entries are listed when {condition}?",
        "What is the total number of {rows} where {condition}?",
        "How many {rows} have {first}?",
        "How many {rows} are there for {first}?",
    ),
    "aggregate": (
        "What is the {aggregate} {column}{scope}?",
        "What was the {aggregate} {column}{scope}?",
        "Give the {aggregate} {column}{scope}.",
        "Tell me the {aggregate} {column}{scope}.",
        "Name the {aggregate} {column}{scope}.",
    ),
    "extreme": (
        "Which {row} has the {extreme} {column}?",
        "What {label} has the {extreme} {column}?",
        "Name the {row} with the {extreme} {column}.",
        "Tell me which {row} had the {extreme} {column}.",
        "Which {label} comes with the {extreme} {column}?",
    ),
    "extreme_among": (
        "Of the {rows} that had {first}, which {row} had the {extreme} {column}?",
        "Among the {rows} with a {has}, which one has the {extreme} {column}?",
        "Which {label} had the {extreme} {column} when {condition}?",
        "When {condition}, which {row} has the {extreme} {column}?",
    ),
    "count_compared": (
        "How many {rows} have {compared} {bound} {column}?",
        "What is the number of {rows} with {column} {compared} {bound}?",
        "Count the {rows} whose {column} is {compared} {bound}.",
        "How many rows have {column} {compared} {bound}?",
    ),
    "list_compared": (
        "Which {rows} have {compared} {bound} {column}?",
        "List the {label} with {compared} {bound} {column}.",
        "What are the {label} values where {column} is {compared} {bound}?",
        "Show every {row} whose {column} is {compared} {bound}.",
    ),
    "listing": (
        "List all {shown} where {condition}{order}.",
        "Show the {shown} of the {rows} when {condition}{order}.",
        "Which {shown} are there where {condition}{order}?",
        "Give me every {shown} for which {condition}{order}.",
        "List the {shown} for {first}{order}.",
        "Which {shown} had {first}{order}?",
    ),
    "short_lookup": (
        "What is the {column}{in_table} when {tests}?",
        "What was the {column} when {tests}?",
        "Which {column} has {has}?",
        "What {column}{in_table} has {has}?",
        "{lead} has what {column}?",
        "Name the {column}{in_table} when {tests}.",
        "Tell me the {column} that has {has}.",
        "What is the {column} with {has}?",
        "What is the {column} for {first}?",
        "Which {column} had {first}?",
    ),
    "name_for": (
        "Name the {column} for {value}",
        "What is the {column} of {value}{in_table}?",
        "{value} has what {column}?",
        "Tell me the {column} for {value}.",
        "What {column} does {value} have?",
        "Which {column} is listed for {value}{in_table}?",
    ),
    "count_of": (
        "What is the total number of {column}{in_table} when {tests}?",
        "How many {column} have {has}?",
        "What is the number of {column} when {tests}?",
        "How many {column} are listed when {tests}?",
        "Count the {column}{in_table} with {has}.",
        "How many {column} are listed for {first}?",
    ),
    "short_aggregate": (
        "What is the {aggregate} {column}{in_table} when {tests}?",
        "What was the {aggregate} {column} with {has}?",
        "Which {aggregate} {column} has {has}?",
        "Tell me the {aggregate} {column} for {has}.",
        "{lead} has what {aggregate} {column}?",
        "When {tests}, what is the {aggregate} {column}?",
        "With {first}, what was the {aggregate} {column}?",
    ),
    "earliest": (
        "What was the {earliest} {column}{in_table} when {tests}?",
        "Which {earliest} {column} has {has}?",
        "Tell me the {earliest} {column} for {has}.",
        "What is the {earliest} {column}{in_table}?",
        "Name the {earliest} {column} with {has}.",
        "What was the {earliest} {column} for {first}?",
    ),
}
