"""A run's probes as `report` and `compare` show them: the matrix (points x skills) as a
table of text and as an HTML heatmap, with forgetting, BWT and FWT per skill and the AULC."""

from __future__ import annotations

from html import escape

from lifelong_gym.results.folder import PROBES_FILE
from lifelong_gym.results.gain import twin_folder
from lifelong_gym.results.probe_measures import ProbeMeasures, load_probes, probe_measures
from lifelong_gym.results.run_record import RunRecord

MEASURES = (("forgetting", "forgetting"), ("BWT", "backward"), ("FWT", "forward"))
"""The per-skill measures shown beside the matrix: their heading and attribute."""


def run_probes(run: RunRecord) -> ProbeMeasures | None:
    """The measures of a run's probes (FWT against its stateless twin's probes when it has
    them), or None when the run has no `probes.jsonl`."""
    if not (run.folder / PROBES_FILE).is_file():
        return None
    twin = twin_folder(run.folder)
    baseline = load_probes(twin) if (twin / PROBES_FILE).is_file() else None
    return probe_measures(load_probes(run.folder), [s.skills for s in run.sessions], baseline)


def _signed(value: float | None) -> str:
    return "" if value is None else f"{value * 100:+.1f}"


def format_probes(measures: ProbeMeasures, title: str = "probes") -> str:
    """The matrix as text, one row per skill and a column per point, then the measures."""
    points = measures.points
    width = max(len("skill"), len("mean"), *(len(skill) for skill in measures.skills))
    head = "".join(f"{'@' + str(p):>7}" for p in points)
    lines = [
        f"{title}: accuracy at each probe point (@N: after N stream tasks); measures in points",
        f"{'skill':<{width}}{head}" + "".join(f"{name:>12}" for name, _ in MEASURES),
    ]
    for skill in measures.skills:
        cells = "".join(
            f"{measures.matrix[p][skill]:>7.0%}" if skill in measures.matrix[p] else f"{'':>7}"
            for p in points
        )
        values = "".join(f"{_signed(getattr(measures, a).get(skill)):>12}" for _, a in MEASURES)
        lines.append(f"{skill:<{width}}{cells}{values}")
    means = "".join(f"{_signed(measures.mean(getattr(measures, a))):>12}" for _, a in MEASURES)
    lines.append(f"{'mean':<{width}}{' ' * 7 * len(points)}{means}")
    lines.append(f"AULC (mean accuracy over points and skills) {measures.aulc:.1%}")
    return "\n".join(lines)


def _heat(accuracy: float) -> str:
    """A cell's colour: from red (0%) through yellow to green (100%)."""
    return f"background: hsl({accuracy * 120:.0f}, 65%, 78%)"


def probe_panel(measures: ProbeMeasures, title: str = "Probes") -> str:
    """The matrix as a heatmap table (a row per skill, a column per point) with the
    per-skill measures beside it and the AULC under it."""
    points = measures.points
    head = "<th>skill</th>" + "".join(f"<th class='num'>@{p}</th>" for p in points)
    head += "".join(f"<th class='num'>{name}</th>" for name, _ in MEASURES)
    rows = []
    for skill in measures.skills:
        cells = "".join(
            f"<td class='num heat' style='{_heat(row[skill])}'>{row[skill]:.0%}</td>"
            if skill in (row := measures.matrix[p])
            else "<td></td>"
            for p in points
        )
        values = "".join(
            f"<td class='num'>{_signed(getattr(measures, a).get(skill))}</td>" for _, a in MEASURES
        )
        rows.append(f"<tr><td>{escape(skill)}</td>{cells}{values}</tr>")
    means = "".join(
        f"<th class='num'>{_signed(measures.mean(getattr(measures, a)))}</th>" for _, a in MEASURES
    )
    rows.append(f"<tr><th>mean</th>{'<td></td>' * len(points)}{means}</tr>")
    return (
        f"<section class='panel probes'><h2>{escape(title)}</h2>"
        "<p class='note'>Accuracy on the probe set at each probe point (@N: after N stream "
        "tasks); forgetting, backward (BWT) and forward transfer (FWT) in points, as "
        "docs/metrics.md defines them.</p>"
        f"<table class='skills-table probe-matrix'><tr>{head}</tr>{''.join(rows)}</table>"
        f"<p class='note'>AULC (mean accuracy over points and skills): "
        f"<strong class='aulc'>{measures.aulc:.1%}</strong></p></section>"
    )
