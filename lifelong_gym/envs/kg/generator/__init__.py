"""Generate the shipped KG: a seeded graph and questions answered by running their logical form.

Usage: lifelong-gym generate kg [--seed 0] [--count 416] [--scale 1.0] [--output DIR]
    [--split train|validation|test] [--exclude FILE]

`--count` questions are spread evenly over the eight lengths of action list, 2 to 9 (the
shorter lengths get the remainder). The graph is made from `--seed` alone, so every split
of one seed asks about one graph (`graph.nt.gz` beside the splits); the questions of a
split are drawn from a seed derived from `--seed` and `--split`. Every question records
its graph's content hash, and a graph that other task files beside it are played on is
never replaced by another (`graph_binding`).
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from lifelong_gym.envs.kg.backends import OxigraphBackend, graph_files
from lifelong_gym.envs.kg.generator import phrases
from lifelong_gym.envs.kg.generator.synthetic_graph import (
    RELATIONS,
    Graph,
    build_graph,
    ntriples,
    write_ntriples,
)
from lifelong_gym.envs.kg.graph_binding import content_sha256, keep_graph_in_use
from lifelong_gym.envs.kg.sexpr import SExpr, dump_sexpr, parse_action, sexpr_to_actions
from lifelong_gym.envs.kg.sparql import count_query, entities_query
from lifelong_gym.generation import (
    DEFAULT_NAME,
    TASKS_SUFFIX,
    progress_bar,
    write_task_set,
)
from lifelong_gym.splits import text_key

MAX_ANSWERS = 25  # list questions with more answers than this are not asked
# Shapes of logical form by the length of their action list (2..9).
SHAPES: dict[int, list[tuple[str, tuple[int, ...]]]] = {
    2: [("list", (1,))],
    3: [("count", (1,))],
    4: [("list", (2,)), ("extreme", (1,))],
    5: [("list", (1, 1)), ("count", (2,))],
    6: [("list", (3,)), ("extreme", (2,)), ("count", (1, 1))],
    7: [("list", (2, 1)), ("extreme", (1, 1)), ("count", (3,))],
    8: [("count", (2, 1)), ("extreme", (3,))],
    9: [("list", (2, 2)), ("extreme", (2, 1)), ("list", (3, 1))],
}
REVERSE = {r: spec[3] for r, spec in RELATIONS.items()} | {
    spec[3]: r for r, spec in RELATIONS.items()
}


class QuestionMaker:
    """Samples logical forms backwards from a target entity and keeps well-posed ones."""

    def __init__(self, graph: Graph, store: OxigraphBackend, rng: random.Random):
        self.graph, self.store, self.rng = graph, store, rng
        self.incoming: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for s, r, o in graph.edges:
            self.incoming[o].append((r, s))
        self.targets = sorted(self.incoming)

    def make(self, shape: str, branches: tuple[int, ...]) -> dict[str, Any] | None:
        """One question of the given shape, or None when this draw is not well posed."""
        target = self.rng.choice(self.targets)
        parts = []
        for hops in branches:
            chain = self._chain(target, hops, avoid={a for p in parts for a in p[1]})
            if chain is None:
                return None
            parts.append(chain)
        exprs = [p[0] for p in parts]
        base: SExpr = exprs[0] if len(exprs) == 1 else ("AND", exprs[0], exprs[1])
        base_values = self._values(base)
        if len(exprs) == 2 and not all(len(base_values) < len(self._values(e)) for e in exprs):
            return None  # an intersection that removes nothing is not a question
        phrase = phrases.describe(base, self.graph.names)
        if shape == "list":
            if not 1 <= len(base_values) <= MAX_ANSWERS:
                return None
            expr, answers, question = base, base_values, phrases.list_question(phrase, self.rng)
        elif shape == "count":
            if not 2 <= len(base_values) <= 2000:
                return None
            expr = ("COUNT", base)
            answers = self.store.select(count_query(base))
            question = phrases.count_question(phrase)
        else:
            made = self._extreme(base, base_values, phrase)
            if made is None:
                return None
            expr, answers, question = made
        anchors = [a for p in parts for a in p[1]]
        entity_dict = {self.graph.names[a]: a for a in anchors}
        if len(entity_dict) != len(anchors):
            return None  # two anchors share a name: the question would be ambiguous
        s_expression = dump_sexpr(expr)
        actions = sexpr_to_actions(s_expression)
        return {
            "question": question,
            "entity_dict": entity_dict,
            "s_expression": s_expression,
            "action_list": actions,
            "answer_list": sorted(answers),
            "skill_list": list(dict.fromkeys(parse_action(a).name for a in actions)),
        }

    def _chain(self, target: str, hops: int, avoid: set) -> tuple[SExpr, list[str]] | None:
        """A path of `hops` relations from an anchor entity into `target`."""
        node, path, previous = target, [], None
        for _ in range(hops):
            options = [
                (r, s)
                for r, s in self.incoming.get(node, [])
                if r != previous and REVERSE.get(r) != previous
            ]
            if not options:
                return None
            relation, node = self.rng.choice(options)
            path.append(relation)
            previous = relation
        if node in avoid or node == target:
            return None
        expr: SExpr = node
        for relation in reversed(path):
            expr = ("JOIN", ("R", relation), expr)
        return expr, [node]

    def _extreme(
        self, base: SExpr, values: list[str], phrase: str
    ) -> tuple[SExpr, list[str], str] | None:
        if not 2 <= len(values) <= 500:
            return None
        counts: dict[str, int] = defaultdict(int)
        for mid in values:
            for attr in self.graph.attributes.get(mid, {}):
                counts[attr] += 1
        usable = sorted(a for a, n in counts.items() if n >= 2)
        if not usable:
            return None
        attribute = self.rng.choice(usable)
        operator = self.rng.choice(["ARGMAX", "ARGMIN"])
        expr = (operator, base, attribute)
        answers = self._values(expr)
        if len(answers) != 1:
            return None
        return expr, answers, phrases.extreme_question(phrase, attribute, operator, self.rng)

    def _values(self, expr: SExpr) -> list[str]:
        return sorted(set(self.store.select(entities_query(expr, 100_000))))


def graph_file(tasks_path: Path, shared: bool = False) -> Path:
    """The graph written beside a task file: `graph.nt.gz` for the default set and for
    splits (which share their seed's graph), else NAME's own."""
    own, shared_graph = graph_files(tasks_path)
    return shared_graph if shared or tasks_path.name == DEFAULT_NAME + TASKS_SUFFIX else own


def generate(
    seed: int,
    count: int,
    path: Path,
    scale: float = 1.0,
    *,
    question_seed: int | None = None,
    exclude: frozenset[str] = frozenset(),
    shared_graph: bool = False,
) -> tuple[int, int]:
    """Write the graph (from `seed`), `count` questions (`path`) and their order; return
    the number of triples and of questions.

    Questions are drawn from `question_seed` (default `seed`); none repeats another's text
    or one of `exclude`. Each records the graph's content hash (`graph_sha256`). A graph
    that other task files beside it are played on is not replaced by another (ConfigError).
    """
    graph = build_graph(seed, scale)
    data = ntriples(graph)
    sha256 = content_sha256(data)
    graph_path = graph_file(path, shared_graph)
    keep_graph_in_use(graph_path, sha256, path)
    write_ntriples(data, graph_path)
    rng = random.Random((seed if question_seed is None else question_seed) + 1)
    store = OxigraphBackend(graph_path, timeout=60)
    try:
        maker = QuestionMaker(graph, store, rng)
        records = make_questions(maker, seed, count, exclude)
    finally:
        store.close()
    order = list(range(len(records)))
    rng.shuffle(order)
    write_task_set([record | {"graph_sha256": sha256} for record in records], order, path)
    return data.count(b"\n"), len(records)


def make_questions(
    maker: QuestionMaker, seed: int, count: int, exclude: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """`count` distinct questions spread over the lengths of action list, 2 to 9.

    No question repeats another's text or one of `exclude` (texts as `text_key` folds them).
    """
    rng = maker.rng
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    texts = set(exclude)
    with progress_bar(count, "kg questions") as bar:
        for length, wanted in length_quotas(count).items():
            made, tries = 0, 0
            while made < wanted:
                tries += 1
                if tries > wanted * 400:
                    raise RuntimeError(f"could not make {wanted} questions of length {length}")
                record = maker.make(*rng.choice(SHAPES[length]))
                if record is None or record["s_expression"] in seen:
                    continue
                if text_key(record["question"]) in texts:
                    continue
                assert len(record["action_list"]) == length
                seen.add(record["s_expression"])
                texts.add(text_key(record["question"]))
                record = {"sample_index": len(records), "qid": f"synthetic-{len(records)}"} | record
                records.append(record | {"source": f"lifelong-gym synthetic graph, seed {seed}"})
                made += 1
                bar.update()
    return records


def length_quotas(count: int) -> dict[int, int]:
    """How many of `count` questions each length of action list gets: an even share, the
    shorter lengths one more until the remainder is used."""
    share, extra = divmod(count, len(SHAPES))
    return {length: share + (i < extra) for i, length in enumerate(SHAPES)}
