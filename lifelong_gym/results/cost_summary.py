"""A run's cost summed: totals and means per task, the memory's share, money; as text.

`cost.json` holds these sums with the price they were priced at; `report` and `compare`
recompute them from `costs.jsonl` (lifelong_gym.results.costs).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from lifelong_gym.results.costs import (
    CallCost,
    MemoryUnit,
    Price,
    SessionCost,
    costs_of,
    plus_known,
)
from lifelong_gym.results.folder import COST_SUMMARY_FILE, write_json_atomic
from lifelong_gym.session import Session


class CostSummary(BaseModel):
    """A run's cost, summed over its sessions that have a cost record (`costed`)."""

    sessions: int
    costed: int
    agent: CallCost
    methods: CallCost
    memory: int
    memory_unit: MemoryUnit | None
    memory_prompt_tokens: int | None  # the memory's tokens in every agent call's prompt
    wall_seconds: float
    price: Price | None = None

    @property
    def prompt_tokens(self) -> int | None:
        """Prompt tokens of every call, the agent's and the methods'."""
        return plus_known(self.agent.prompt_tokens, self.methods.prompt_tokens)

    @property
    def generated_tokens(self) -> int | None:
        """Generated tokens of every call, the agent's and the methods'."""
        return plus_known(self.agent.generated_tokens, self.methods.generated_tokens)

    @property
    def dollars(self) -> float | None:
        """What the tokens cost at `price`; None without a price or with unknown tokens."""
        prompt, generated = self.prompt_tokens, self.generated_tokens
        if self.price is None or prompt is None or generated is None:
            return None
        return self.price.dollars(prompt, generated)

    @property
    def memory_share(self) -> float | None:
        """The memory's share of the agent's prompt tokens (known in tokens only)."""
        if self.memory_prompt_tokens is None or not self.agent.prompt_tokens:
            return None
        return self.memory_prompt_tokens / self.agent.prompt_tokens

    def per_task(self, total: float | None) -> float | None:
        """A total as a mean per costed task."""
        return None if total is None or not self.costed else total / self.costed


def summarize_costs(costs: Sequence[SessionCost | None], price: Price | None = None) -> CostSummary:
    """The totals of the sessions' costs (None: a session without a record, not counted).

    The memory's tokens in the prompts are each task's memory times its agent calls: every
    reply is asked with the whole history, the opening prompt included.
    """
    known = [cost for cost in costs if cost is not None]
    agent, methods = (
        CallCost(calls=0, prompt_tokens=0, generated_tokens=0),
        CallCost(calls=0, prompt_tokens=0, generated_tokens=0),
    )
    memory_tokens: int | None = 0
    for cost in known:
        _add_cost(agent, cost.agent)
        _add_cost(methods, cost.methods)
        in_tokens = cost.memory_unit == "tokens" and cost.agent.calls is not None
        memory_tokens = plus_known(
            memory_tokens, cost.memory * cost.agent.calls if in_tokens else None
        )
    return CostSummary(
        sessions=len(costs),
        costed=len(known),
        agent=agent,
        methods=methods,
        memory=sum(cost.memory for cost in known),
        memory_unit=known[0].memory_unit if known else None,
        memory_prompt_tokens=memory_tokens if known else None,
        wall_seconds=sum(cost.wall_seconds for cost in known),
        price=price,
    )


def _add_cost(total: CallCost, more: CallCost) -> None:
    total.calls = plus_known(total.calls, more.calls)
    total.prompt_tokens = plus_known(total.prompt_tokens, more.prompt_tokens)
    total.generated_tokens = plus_known(total.generated_tokens, more.generated_tokens)


def cost_rows(summary: CostSummary) -> list[tuple[str, str, str]]:
    """(what, per task, total) for each figure of a run's cost, as text."""
    unit = summary.memory_unit or "characters"
    rows = [
        ("agent model calls", summary.agent.calls, "{:,.0f}"),
        ("method model calls", summary.methods.calls, "{:,.0f}"),
        ("prompt tokens", summary.prompt_tokens, "{:,.0f}"),
        ("generated tokens", summary.generated_tokens, "{:,.0f}"),
        (f"memory added to the prompt ({unit})", summary.memory, "{:,.0f}"),
        ("wall time (s)", summary.wall_seconds, "{:,.3f}"),
    ]
    if summary.price is not None:
        rows.append(("dollars", summary.dollars, "{:,.6f}"))
    return [
        (label, _cell(summary.per_task(total), "{:,.2f}" if form == "{:,.0f}" else form),
         _cell(total, form))
        for label, total, form in rows
    ]  # fmt: skip


def price_text(price: Price) -> str:
    """A price as the reports print it."""
    return f"${price.prompt:g} / ${price.generated:g} per million prompt / generated tokens"


def format_cost(summary: CostSummary) -> str:
    """The cost per task and in total, as a plain-text table."""
    if not summary.costed:
        return f"cost: not recorded for these {summary.sessions} sessions (an older run)"
    unrecorded = summary.sessions - summary.costed
    note = f" ({unrecorded} sessions without a cost record left out)" if unrecorded else ""
    priced = f", at {price_text(summary.price)}" if summary.price is not None else ""
    rows = cost_rows(summary)
    width = max(len(label) for label, _mean, _total in rows)
    lines = [
        f"cost over {summary.costed} tasks{note}{priced}:",
        f"{'':<{width}}  {'per task':>14}  {'total':>14}",
    ]
    lines += [f"{label:<{width}}  {mean:>14}  {total:>14}" for label, mean, total in rows]
    if (share := summary.memory_share) is not None:
        lines.append(f"the memory's share of the agent's prompt tokens: {share:.1%}")
    return "\n".join(lines)


def _cell(value: float | None, form: str) -> str:
    return "unknown" if value is None else form.format(value)


def cost_comparison_rows(runs: Sequence[tuple[str, CostSummary]]) -> list[tuple[str, list[str]]]:
    """(what, one cell per run) for each figure of runs' cost per task, side by side."""
    rows = [
        ("tasks costed", lambda c: c.costed, "{:,.0f}"),
        ("agent calls / task", lambda c: c.per_task(c.agent.calls), "{:,.2f}"),
        ("method calls / task", lambda c: c.per_task(c.methods.calls), "{:,.2f}"),
        ("prompt tokens / task", lambda c: c.per_task(c.prompt_tokens), "{:,.1f}"),
        ("generated tokens / task", lambda c: c.per_task(c.generated_tokens), "{:,.1f}"),
        (f"memory / task ({_units(runs)})", lambda c: c.per_task(c.memory), "{:,.1f}"),
        ("memory share of prompt", lambda c: c.memory_share, "{:.1%}"),
        ("wall s / task", lambda c: c.per_task(c.wall_seconds), "{:,.3f}"),
        ("dollars, total", lambda c: c.dollars, "{:,.6f}"),
    ]
    return [
        (label, [_cell(value(cost), form) if cost.costed else "-" for _, cost in runs])
        for label, value, form in rows
    ]


def format_cost_table(runs: Sequence[tuple[str, CostSummary]]) -> str:
    """Runs' cost per task side by side (each named by its letter), as plain text."""
    rows = cost_comparison_rows(runs)
    width = max(len(label) for label, _cells in rows)
    lines = [f"{'cost':<{width}}  " + "  ".join(f"{letter:>14}" for letter, _ in runs)]
    for label, cells in rows:
        lines.append(f"{label:<{width}}  " + "  ".join(f"{cell:>14}" for cell in cells))
    return "\n".join(lines)


def _units(runs: Sequence[tuple[str, CostSummary]]) -> str:
    """The unit the runs' memory is counted in: one for all, or each run's."""
    units = {cost.memory_unit or "characters" for _, cost in runs}
    if len(units) == 1:
        return units.pop()
    return ", ".join(f"{letter}: {cost.memory_unit or 'characters'}" for letter, cost in runs)


def write_cost_summary(folder: Path, summary: CostSummary) -> None:
    """Write the run's `cost.json`: the sums, with the price they were priced at."""
    write_json_atomic(folder / COST_SUMMARY_FILE, summary.model_dump(mode="json"))


def load_cost(folder: Path, sessions: Sequence[Session], price: Price | None = None) -> CostSummary:
    """The cost of a run folder's sessions, at `price` or else the one the run was given."""
    if price is None:
        saved = folder / COST_SUMMARY_FILE
        try:
            price = CostSummary.model_validate_json(saved.read_text(encoding="utf-8")).price
        except (OSError, ValueError):
            price = None  # no summary yet, or an unreadable one: no price
    return summarize_costs(costs_of(folder, sessions), price)
