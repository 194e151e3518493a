"""A knowledge graph on which a chain of joins explodes, for the tests of runaway queries."""

from __future__ import annotations

from itertools import count
from pathlib import Path

from lifelong_gym.envs.kg.local import WORK
from lifelong_gym.envs.kg.sparql import NS

# n a-nodes and n b-nodes, every a to every b (x.y.out) and back (x.y.back). Walking from
# m.0a0, hop k > 1 costs the lookups n + n^2 steps: the least n for which four hops pass
# `WORK` while three stay within it, so `get_neighbors(#2, x.y.back)` goes to the store
# process as SPARQL, whose n^4 paths run for minutes.
SIDE = next(n for n in count(1) if 3 * n * n + 3 * n + 1 > WORK)
assert 2 * SIDE * SIDE + 2 * SIDE + 1 <= WORK


def dense_graph(folder: Path) -> Path:
    """Write the graph to `folder` and return its path."""
    lines = []
    for i in range(SIDE):
        for j in range(SIDE):
            lines.append(f"<{NS}m.0a{i}> <{NS}x.y.out> <{NS}m.0b{j}> .")
            lines.append(f"<{NS}m.0b{j}> <{NS}x.y.back> <{NS}m.0a{i}> .")
    path = folder / "dense.nt"
    path.write_text("\n".join(lines) + "\n")
    return path
