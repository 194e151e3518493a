"""Charts of the HTML report as inline SVG: curves of rates and of amounts, statuses along
the run, per-skill bars.

Every text that comes from a run (skill names, run names, statuses) is escaped here; the
charts need no script and no external file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from lifelong_gym.results.plots import StatusBin, status_color

WIDTH = 600  # the half-width charts; drawn at their size, shrunk on narrow screens
SKILL_WIDTH = 1000
MAX_POINTS = 800  # a curve of 10,000 sessions is drawn through this many points
LEFT, RIGHT, TOP = 52, 30, 46
PERCENT_TICKS = [(share, f"{share:.0%}") for share in (0, 0.25, 0.5, 0.75, 1)]


@dataclass(frozen=True)
class Series:
    """One line of a line chart."""

    label: str
    values: Sequence[float]
    color: str
    dashed: bool = False


@dataclass(frozen=True)
class SkillBar:
    """One bar of the per-skill chart: a run's success on one skill."""

    label: str
    correct: int
    count: int
    color: str

    @property
    def rate(self) -> float:
        """Success rate of the bar (0 for no tasks)."""
        return self.correct / self.count if self.count else 0.0


def line_chart(title: str, series: Sequence[Series], height: int = 270) -> str:
    """Success rate (0 to 100%) against the session number, one line per series."""
    return _lines(title, series, height, 1.0, PERCENT_TICKS)


def count_chart(title: str, series: Sequence[Series], height: int = 220) -> str:
    """Amounts (from 0 to a round maximum) against the session number, one line per series."""
    highest = max((v for s in series for v in s.values), default=0)
    step = _round_step(highest / 4) if highest > 4 else 1
    top = step * max(math.ceil(highest / step), 1)
    ticks = [(value / top, f"{value:,}") for value in range(0, top + 1, step)]
    return _lines(title, series, height, top, ticks)


def _lines(
    title: str,
    series: Sequence[Series],
    height: int,
    top_value: float,
    ticks: Sequence[tuple[float, str]],
) -> str:
    sessions = max((len(s.values) for s in series), default=0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - TOP - 36
    parts = [_title(title), *_grid(plot_w, plot_h, TOP, ticks)]
    parts += _session_ticks(sessions, plot_w, TOP + plot_h)

    def x(session: float) -> float:
        return LEFT + (session - 0.5) / max(sessions, 1) * plot_w

    for line in series:
        points = " ".join(
            f"{x(i + 1):.1f},{TOP + (1 - line.values[i] / top_value) * plot_h:.1f}"
            for i in _sampled(len(line.values))
        )
        dash = ' stroke-dasharray="5 3"' if line.dashed else ""
        parts.append(
            f'<polyline fill="none" stroke="{line.color}" stroke-width="2"{dash} '
            f'points="{points}"><title>{escape(line.label)}</title></polyline>'
        )
    parts.append(_legend([(s.label, s.color, s.dashed) for s in series], TOP - 18))
    return _svg(height, title, parts)


def status_chart(title: str, bins: Sequence[StatusBin], statuses: Sequence[str]) -> str:
    """How sessions ended along the run: stacked bars, one per stretch of sessions."""
    height = 220
    plot_w, plot_h = WIDTH - LEFT - RIGHT, height - TOP - 36
    sessions = bins[-1].last if bins else 0
    parts = [_title(title), *_grid(plot_w, plot_h, TOP, PERCENT_TICKS)]
    parts += _session_ticks(sessions, plot_w, TOP + plot_h)
    for stretch in bins:
        size = stretch.last - stretch.first + 1
        left = LEFT + (stretch.first - 1) / sessions * plot_w
        width = size / sessions * plot_w
        low = 0.0
        tip = ", ".join(f"{s} {n}" for s, n in stretch.counts.items())
        for status in statuses:
            share = stretch.counts.get(status, 0) / size
            if share:
                y = TOP + (1 - low - share) * plot_h
                parts.append(
                    f'<rect x="{left:.1f}" y="{y:.1f}" width="{max(width - 0.5, 0.5):.1f}" '
                    f'height="{share * plot_h:.1f}" fill="{status_color(status)}">'
                    f"<title>{escape(f'sessions {stretch.first}-{stretch.last}: {tip}')}</title>"
                    "</rect>"
                )
            low += share
    totals = {s: sum(b.counts.get(s, 0) for b in bins) for s in statuses}
    legend = [(f"{s} ({totals[s]})", status_color(s), False) for s in statuses]
    parts.append(_legend(legend, TOP - 18))
    return _svg(height, title, parts)


def skill_chart(title: str, skills: Sequence[tuple[str, Sequence[SkillBar]]]) -> str:
    """Success per skill: each bar on a grey full-width track, labelled rate (correct/tasks)."""
    label_w = min(460, 16 + 7 * max((len(name) for name, _ in skills), default=5))
    bar_h, gap = 16, 8
    per_skill = max((len(bars) for _, bars in skills), default=1)
    row_h = per_skill * bar_h + gap
    track_w = SKILL_WIDTH - label_w - 130
    height = TOP + len(skills) * row_h + 10
    parts = [_title(title)]
    for row, (name, bars) in enumerate(skills):
        top = TOP + row * row_h
        parts.append(
            f'<text x="{label_w - 8}" y="{top + per_skill * bar_h / 2 + 4:.1f}" '
            f'text-anchor="end" class="label">{escape(name)}</text>'
        )
        for k, bar in enumerate(bars):
            y = top + k * bar_h
            text = f"{bar.rate:.0%} ({bar.correct}/{bar.count})" if bar.count else "no tasks"
            parts.append(
                f'<rect x="{label_w}" y="{y}" width="{track_w}" height="{bar_h - 2}" '
                'fill="#ececec"/>'
                f'<rect x="{label_w}" y="{y}" width="{bar.rate * track_w:.1f}" '
                f'height="{bar_h - 2}" fill="{bar.color}"><title>{escape(bar.label)}: '
                f"{text}</title></rect>"
                f'<text x="{label_w + track_w + 6}" y="{y + bar_h - 5}" class="label">'
                f"{escape(text)}</text>"
            )
    return _svg(height, title, parts, SKILL_WIDTH)


def _svg(height: int, title: str, parts: list[str], width: int = WIDTH) -> str:
    return (
        f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )


def _title(title: str) -> str:
    return f'<text x="{LEFT}" y="14" class="chart-title">{escape(title)}</text>'


def _grid(plot_w: int, plot_h: int, top: int, ticks: Sequence[tuple[float, str]]) -> list[str]:
    """Horizontal grid lines at the given shares of the plot's height, labelled."""
    lines = []
    for share, label in ticks:
        y = top + (1 - share) * plot_h
        lines.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
            f"{escape(label)}</text>"
        )
    return lines


def _session_ticks(sessions: int, plot_w: int, bottom: int) -> list[str]:
    """Integer session numbers along the x axis, at a round step."""
    if sessions < 1:
        return []
    step = _round_step(sessions / 8)
    ticks = [1, *range(step, sessions + 1, step)] if step > 1 else range(1, sessions + 1)
    out = [
        f'<text x="{LEFT + (t - 0.5) / sessions * plot_w:.1f}" y="{bottom + 16}" '
        f'text-anchor="middle" class="tick">{t}</text>'
        for t in dict.fromkeys(ticks)
    ]
    out.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{bottom + 32}" text-anchor="middle" '
        'class="tick">session</text>'
    )
    return out


def _round_step(raw: float) -> int:
    if raw <= 1:
        return 1
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _legend(items: Sequence[tuple[str, str, bool]], y: int) -> str:
    out, x = [], LEFT
    for label, color, dashed in items:
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(
            f'<line x1="{x}" x2="{x + 18}" y1="{y}" y2="{y}" stroke="{color}" '
            f'stroke-width="{3 if not dashed else 2}"{dash}/>'
            f'<text x="{x + 22}" y="{y + 4}" class="legend">{escape(label)}</text>'
        )
        x += 34 + 6.5 * len(label)
    return "".join(out)


def _sampled(count: int) -> list[int]:
    """At most MAX_POINTS indices spread over `count`, the first and last included."""
    if count <= MAX_POINTS:
        return list(range(count))
    return sorted({round(k * (count - 1) / (MAX_POINTS - 1)) for k in range(MAX_POINTS)})
