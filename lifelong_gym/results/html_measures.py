"""The cost and the gain over a stateless run as HTML panels, for report.html and the
comparison page (the same figures as the text of `report` and `compare`)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from lifelong_gym.results.cost_summary import (
    CostSummary,
    cost_comparison_rows,
    cost_rows,
    price_text,
)
from lifelong_gym.results.gain import RESAMPLES, Gain, GainFigure, paired_gains
from lifelong_gym.results.run_record import RunRecord


def cost_panel(cost: CostSummary) -> str:
    """A run's cost per task and in total."""
    if not cost.costed:
        body = f"<p class='note'>No cost was recorded for these {cost.sessions} sessions.</p>"
    else:
        rows = "".join(
            f"<tr><td>{escape(label)}</td><td class='num'>{mean}</td><td class='num'>{total}</td>"
            "</tr>"
            for label, mean, total in cost_rows(cost)
        )
        share = cost.memory_share
        note = (
            f"<p class='note'>The memory's share of the agent's prompt tokens: {share:.1%}.</p>"
            if share is not None
            else ""
        )
        price = f", at {price_text(cost.price)}" if cost.price is not None else ""
        body = (
            f"<p class='note'>Over {cost.costed} of {cost.sessions} sessions{escape(price)}.</p>"
            "<table class='skills-table' id='cost-table'><tr><th>cost</th>"
            f"<th class='num'>per task</th><th class='num'>total</th></tr>{rows}</table>{note}"
        )
    return f"<section class='panel' id='cost'><h2>Cost</h2>{body}</section>"


def cost_comparison_panel(runs: Sequence[tuple[str, CostSummary]]) -> str:
    """Runs' cost per task side by side, one column per run's letter."""
    head = "<th>cost</th>" + "".join(f"<th class='num'>{escape(letter)}</th>" for letter, _ in runs)
    rows = "".join(
        f"<tr><td>{escape(label)}</td>"
        + "".join(f"<td class='num'>{escape(cell)}</td>" for cell in cells)
        + "</tr>"
        for label, cells in cost_comparison_rows(runs)
    )
    return (
        "<section class='panel' id='cost'><h2>Cost per task</h2>"
        f"<table class='skills-table' id='cost-table'><tr>{head}</tr>{rows}</table></section>"
    )


def gain_table(gain: Gain) -> str:
    """The gain overall and per skill, with its interval, as a table."""

    def row(name: str, figure: GainFigure, head: bool = False) -> str:
        cell = "th" if head else "td"
        noise = " <small>within noise</small>" if figure.within_noise else ""
        css = "" if figure.within_noise else " gain-up" if figure.gain > 0 else " gain-down"
        return (
            f"<tr><{cell}>{escape(name)}</{cell}><td class='num'>{figure.tasks}</td>"
            f"<td class='num'>{figure.stateful:.1%}</td><td class='num'>{figure.stateless:.1%}</td>"
            f"<td class='num{css}'>{figure.gain * 100:+.1f}</td>"
            f"<td class='num'>{figure.interval}{noise}</td></tr>"
        )

    head = "".join(
        f"<th>{h}</th>"
        for h in ("skill", "tasks", "stateful", "stateless", "gain (points)", "95% interval")
    )
    rows = [row("overall", gain.overall, head=True)]
    rows += [row(skill, figure) for skill, figure in gain.per_skill.items()]
    left_out = f"<p class='note errored'>{escape(note)}</p>" if (note := gain.left_out()) else ""
    return (
        f"<p class='note'>Paired bootstrap over the tasks both runs finished, {RESAMPLES:,} "
        "resamples; a gain whose interval holds 0 is within noise.</p>"
        f"<table class='skills-table gain-table'><tr>{head}</tr>{''.join(rows)}</table>{left_out}"
    )


def gain_panel(title: str, gain: Gain | str) -> str:
    """A panel with the gain's table, or the one line saying why there is none."""
    body = gain_table(gain) if isinstance(gain, Gain) else f"<p class='note'>{escape(gain)}</p>"
    return f"<section class='panel gain'><h2>{escape(title)}</h2>{body}</section>"


def paired_gain_panels(runs: Sequence[tuple[str, RunRecord]]) -> str:
    """The gain of the first run over each other run (or why there is none), as panels."""
    return "".join(
        gain_panel(f"Gain of {first} over {other} ({first} − {other})", gain)
        for first, other, gain in paired_gains(runs)
    )


def twin_gain_panel(gain: Gain | str | None) -> str:
    """The gain over the run's stateless twin (`twin_gain`), or why it cannot be had; "" for
    a run without a twin."""
    return "" if gain is None else gain_panel("Gain over the stateless run", gain)
