"""What a memory method put into the prompts, for report.html: the characters inserted per
task along the stream, and which retrieved items (replayed tasks, reasoning-memory items)
were followed by a success.

It reads what the sessions recorded: `details["memory"]` (`Session.insert_memory`: the
characters inserted and the items retrieved, named by their method), and for runs of earlier
versions `details["replayed"]` and `details["reasoning_memory"]["retrieved"]`.
A run that recorded none of them gets no panel.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape

from lifelong_gym.methods.reasoning_memory import DETAILS as REASONING_MEMORY
from lifelong_gym.results.svg_charts import Series, count_chart
from lifelong_gym.session import Session

TOP_RETRIEVED = 10  # rows of the most-retrieved table
CHARS_COLOR, ITEMS_COLOR = "#1f5f99", "#54a24b"


def has_memory(sessions: Sequence[Session]) -> bool:
    """Whether any session recorded an insertion into its prompt."""
    return any("memory" in s.details for s in sessions)


def inserted_chars(session: Session) -> int:
    """How many characters the methods inserted into the session's prompt."""
    return sum(record["chars"] for record in session.details.get("memory", ()))


def retrieved(session: Session) -> list[str] | None:
    """What was retrieved into the session's prompt, named as its method names it ("task 3",
    "item 7"); None when the session records no retrieval."""
    records = session.details.get("memory", ())
    if any("items" in record for record in records):
        return [item for record in records for item in record.get("items", ())]
    return _retrieved_before_items(session)


def _retrieved_before_items(session: Session) -> list[str] | None:
    """What a run of an earlier version (memory records without `items`) retrieved."""
    replayed = session.details.get("replayed")
    reasoning = session.details.get(REASONING_MEMORY)
    items = reasoning.get("retrieved") if isinstance(reasoning, dict) else None
    if replayed is None and items is None:
        return None
    return [f"task {t}" for t in replayed or ()] + [f"item {n}" for n in items or ()]


def memory_panel(sessions: Sequence[Session]) -> str:
    """The growth chart and the most-retrieved table, or "" for a run without memory."""
    retrievals = [retrieved(s) for s in sessions]
    kept = any(r is not None for r in retrievals)
    if not (has_memory(sessions) or kept):
        return ""
    charts = [
        count_chart(
            "Memory inserted per task",
            [Series("characters inserted", [inserted_chars(s) for s in sessions], CHARS_COLOR)],
        )
    ]
    if kept:
        counts = [len(r or ()) for r in retrievals]
        charts.append(
            count_chart("Items retrieved per task", [Series("items", counts, ITEMS_COLOR)])
        )
    boxes = "".join(f'<div class="chart-box">{chart}</div>' for chart in charts)
    growth = f"<section class='charts' id='memory-growth'>{boxes}</section>"
    return growth + (_retrieved_table(sessions, retrievals) if kept else "")


def _retrieved_table(sessions: Sequence[Session], retrievals: list[list[str] | None]) -> str:
    times: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    solved: Counter[str] = Counter()
    for session, items in zip(sessions, retrievals, strict=True):
        for item in items or ():
            times[item] += 1
            if not session.errored:
                judged[item] += 1
                solved[item] += session.solved
    if not times:
        return ""
    rows = "".join(
        f"<tr><td>{escape(item)}</td><td class='num'>{count}</td>"
        f"<td class='num'>{_rate(solved[item], judged[item])}</td></tr>"
        for item, count in times.most_common(TOP_RETRIEVED)  # ties: first retrieved first
    )
    return (
        "<section class='panel' id='retrieved-items'><h2>Most retrieved</h2>"
        f"<p class='note'>The {min(len(times), TOP_RETRIEVED)} items put into the most "
        "prompts, and the success of the tasks they were put into (errored tasks left "
        "out).</p><table class='skills-table'><tr><th>retrieved</th>"
        f"<th class='num'>times</th><th class='num'>success</th></tr>{rows}</table></section>"
    )


def _rate(solved: int, judged: int) -> str:
    return f"{solved / judged:.1%}" if judged else "no judged task"
