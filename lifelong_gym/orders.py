"""The orders a lifelong run visits a task set in, from the set's own to controlled streams.

A controlled stream is built so that an effect can show: `blocks` plays one skill group
after another (so forgetting of an earlier group can be seen), `compositional` plays a
skill's parts before the skill, and replicates play the same tasks in K seeded orders (so
an order's effect can be told from a method's). Every order is a pure function of the
task set and its seed: the same seed gives the same order, in any process.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from lifelong_gym.errors import ConfigError, EnvArgumentError

if TYPE_CHECKING:
    from lifelong_gym.tasks import TaskSet

OrderName = Literal["sample", "shuffled", "curriculum", "blocks", "compositional"]
ORDERS: tuple[str, ...] = get_args(OrderName)
#: the orders that are random by design, so that a run without a seed could not be repeated
SEEDED_ORDERS = ("shuffled", "blocks")


def task_order(
    tasks: TaskSet,
    order: str = "sample",
    seed: int | None = None,
    stages: Sequence[Sequence[str]] | None = None,
) -> list[int]:
    """The sample indices of a lifelong run in `order` (one of `ORDERS`, defined in
    docs/runner.md, "Controlled streams"); `stages` shape the curriculum only."""
    check_order(order, seed)
    if order == "shuffled":
        permutation = np.random.default_rng(seed).permutation(len(tasks.order))
        return [tasks.order[int(i)] for i in permutation]
    if order == "curriculum":
        return curriculum_order(tasks, stages, seed)
    if order == "blocks":
        return blocks_order(tasks, seed)
    if order == "compositional":
        return compositional_order(tasks, seed)
    return list(tasks.order)


def check_order(order: str, seed: int | None) -> None:
    """Refuse an order that is not one of `ORDERS`, or a random one without its seed."""
    if order not in ORDERS:
        raise ConfigError(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
    if order in SEEDED_ORDERS and seed is None:
        raise ConfigError(f'order="{order}" needs a seed so that a run can be repeated')


def curriculum_order(
    tasks: TaskSet,
    stages: Sequence[Sequence[str]] | None = None,
    seed: int | None = None,
) -> list[int]:
    """The set's tasks easy to hard: by skill stage, then by number of skills.

    Without `stages` a task's level is its number of skills (fewer first). With `stages`
    (lists of skills, easiest first, each adding to the ones before) a task's level is the
    first stage by which every skill it uses has been introduced; tasks using a skill no
    stage names come last. Within a level, tasks with fewer skills come first; ties keep
    the set's sample order, or are shuffled with `seed`.
    """
    introduced: dict[str, int] = {}
    for level, stage in enumerate(stages or ()):
        for skill in stage:
            introduced.setdefault(skill, level)
    unstaged = len(stages or ())

    def level(index: int) -> int:
        skills = tasks[index].skills
        if stages is None:
            return len(skills)
        return max((introduced.get(skill, unstaged) for skill in skills), default=0)

    order = list(tasks.order)
    if seed is not None:
        random.Random(f"curriculum-{seed}").shuffle(order)
    return sorted(order, key=lambda i: (level(i), len(tasks[i].skills)))


def blocks_order(tasks: TaskSet, seed: int) -> list[int]:
    """The tasks in blocks of one skill group each (`SkillTaxonomy.group` of the tasks'
    taxonomy): the blocks in a seeded order, the tasks of each block in a seeded order."""
    blocks: dict[str, list[int]] = defaultdict(list)
    for index in tasks.order:
        task = tasks[index]
        blocks[task.taxonomy.group(task.skills)].append(index)
    rng = random.Random(f"blocks-{seed}")
    names = sorted(blocks)
    rng.shuffle(names)
    for name in names:
        rng.shuffle(blocks[name])
    return [index for name in names for index in blocks[name]]


def compositional_order(tasks: TaskSet, seed: int | None = None) -> list[int]:
    """The curriculum by prerequisite depth, each task held back until its parts were played.

    The base is `curriculum_order` with one stage per depth of the prerequisites of the
    tasks' taxonomy (`SkillTaxonomy.prerequisites`). A task is ready once every prerequisite
    of its skills (direct or through others) that another task of the set exercises has
    been exercised by an earlier task; each step plays the ready task that comes first in
    the base. When no task is ready (tasks that can only provide each other's
    prerequisites), the first remaining task of the base goes next, and unblocks the rest.
    """
    exercising = Counter(skill for task in tasks for skill in task.skills)
    taxonomy = tasks[tasks.indices[0]].taxonomy
    layers: dict[int, list[str]] = defaultdict(list)
    for skill in sorted(exercising):
        layers[taxonomy.depth(skill)].append(skill)
    base = curriculum_order(tasks, [layers[d] for d in sorted(layers)], seed)
    rank = {index: position for position, index in enumerate(base)}

    def needed(index: int) -> set[str]:
        own = tasks[index].skills
        wanted = set().union(*(taxonomy.all_prerequisites(skill) for skill in own))
        return {p for p in wanted if exercising[p] > (p in own)}

    played: list[int] = []
    done: set[int] = set()
    exercised: set[str] = set()
    waiting: dict[str, list[int]] = defaultdict(list)
    ready: list[int] = []  # ranks in the base, a heap

    def check(index: int) -> None:
        missing = needed(index) - exercised
        if missing:
            waiting[min(missing)].append(index)
        else:
            heapq.heappush(ready, rank[index])

    for index in base:
        check(index)
    first_left = 0
    while len(played) < len(base):
        if ready:
            index = base[heapq.heappop(ready)]
        else:
            while base[first_left] in done:
                first_left += 1
            index = base[first_left]
        played.append(index)
        done.add(index)
        for skill in tasks[index].skills:
            if skill not in exercised:
                exercised.add(skill)
                for other in waiting.pop(skill, ()):
                    if other not in done:
                        check(other)
    return played


def replicate_seeds(order: str, seed: int | None, count: int) -> list[int | None]:
    """The seeds of `count` replicates of a run in `order`: `seed`, `seed + 1`, ..."""
    check_order(order, seed)
    if count == 1:
        return [seed]
    if count < 1:
        raise ConfigError(f"replicates must be at least 1; got {count}")
    if order == "sample":
        raise ConfigError(
            'replicates of order="sample" would all be one order; choose one of '
            f"{', '.join(o for o in ORDERS if o != 'sample')}"
        )
    if seed is None:
        raise ConfigError("replicates need a seed: replicate i uses seed + i")
    return [seed + i for i in range(count)]


def order_replicates(tasks: TaskSet, order: str, seed: int, count: int) -> list[list[int]]:
    """The same tasks in `count` orders, seeded `seed`, `seed + 1`, ... (one per replicate)."""
    return [task_order(tasks, order, s) for s in replicate_seeds(order, seed, count)]


def shard_order(order: Sequence[int], shard: tuple[int, int]) -> list[int]:
    """Shard `index` of `count` of a task order: every count-th task from position `index`.

    The `count` shards are disjoint and together hold every task of `order` once; at any
    point the shards' next tasks are neighbours in `order`.
    """
    index, count = shard
    if not 0 < count <= len(order) or not 0 <= index < count:
        raise EnvArgumentError(
            f"shard=(index, count) needs 0 <= index < count <= {len(order)} (the tasks in "
            f"the order); got {tuple(shard)}"
        )
    return list(order[index::count])
