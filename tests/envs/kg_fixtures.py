"""A knowledge graph on which a chain of joins explodes, for the tests of runaway queries."""

from __future__ import annotations

from pathlib import Path

from lifelong_gym.envs.kg.local import WORK
from lifelong_gym.envs.kg.sparql import NS

# SIDE a-nodes and SIDE b-nodes, every a to every b (x.y.out) and back (x.y.back), and
# every b to the same WIDE c-nodes (x.y.wide). From m.0a0, the hops out, back and out
# cost the lookups about SIDE^2 steps each, but the fourth, wide, SIDE * WIDE: past
# `WORK`, so `get_neighbors(#2, x.y.wide)` runs as SPARQL in the store process, where
# its SIDE^3 * WIDE paths (160 million) take minutes.
SIDE = 90
WIDE = WORK // SIDE + 1
FOUR_HOPS = ("x.y.out", "x.y.back", "x.y.out", "x.y.wide")


def dense_graph(folder: Path) -> Path:
    """Write the graph to `folder` and return its path."""
    lines = []
    for i in range(SIDE):
        for j in range(SIDE):
            lines.append(f"<{NS}m.0a{i}> <{NS}x.y.out> <{NS}m.0b{j}> .")
            lines.append(f"<{NS}m.0b{j}> <{NS}x.y.back> <{NS}m.0a{i}> .")
        lines.extend(f"<{NS}m.0b{i}> <{NS}x.y.wide> <{NS}m.0c{k}> ." for k in range(WIDE))
    path = folder / "dense.nt"
    path.write_text("\n".join(lines) + "\n")
    return path
