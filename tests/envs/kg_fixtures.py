"""A knowledge graph on which a chain of joins explodes, for the tests of runaway queries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lifelong_gym.envs.kg import LifelongKGEnv
from lifelong_gym.envs.kg.backends.local import WORK
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


def dense_env(folder: Path, **kwargs: Any) -> LifelongKGEnv:
    """An environment on the dense graph, with one task of its own (the shipped tasks are
    bound to the shipped graph)."""
    task = {
        "question": "Which entities does a0 reach by x.y.out?",
        "entity_dict": {"a0": "m.0a0"},
        "action_list": ["get_neighbors(m.0a0, x.y.out)"],
        "answer_list": [f"m.0b{j}" for j in range(SIDE)],
    }
    tasks = folder / "dense.jsonl"
    tasks.write_text(json.dumps({"sample_index": 0, **task}) + "\n")
    return LifelongKGEnv(tasks=str(tasks), graph=dense_graph(folder), **kwargs)
