"""A seeded generator of DB tasks covering the 22 skills, with truth found by execution."""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable

from faker import Faker

from lifelong_gym.errors import ConfigError
from lifelong_gym.generation import progress_bar
from lifelong_gym.splits import text_key

from ..backends import DatabaseBackend, SqliteBackend
from ..skills import SKILLS, skills_of
from ..tasks import DBTask, TableInfo
from .context import Built, Context
from .domains import DOMAINS, TableMaker
from .grouped import grouped
from .plain import PLAIN_SKILLS, plain_task
from .queries import aggregate, listing
from .sheets import SHEETS, make_sheet
from .truth import agrees, execute_truth
from .writes import delete, insert, update

logger = logging.getLogger(__name__)

Builder = Callable[[Context, set[str]], Built | None]
MIN_ROWS, MAX_ROWS = 5, 60
MIN_PER_SKILL = 20
#: How tasks are worded: our templates over snake_case tables, questions as people ask them
#: over tables with human column names, or both drawn half and half.
STYLES = ("templated", "plain", "mixed")
# Faker's name lists change between releases: the shipped set was made with this one.
SHIPPED_WITH_FAKER = "40.63.0"

_QUERIES: tuple[Builder, ...] = (listing, aggregate, grouped)
_SORTED: tuple[Builder, ...] = (listing, grouped)
_FILTERED: tuple[Builder, ...] = (listing, aggregate, update, delete)
_SUBQUERIES: tuple[Builder, ...] = (listing, aggregate)


def builders_for(skill: str) -> tuple[Builder, ...]:
    """The builders that can make a task using `skill`."""
    if skill in ("insert", "update", "delete"):
        return ({"insert": insert, "update": update, "delete": delete}[skill],)
    if skill.startswith("where_"):
        return _FILTERED
    if skill.startswith(("order_by_", "limit_")):
        return _SORTED
    if skill.startswith(("group_by_", "having_")):
        return (grouped,)
    if skill.startswith("subquery_"):
        return _SUBQUERIES
    return _QUERIES


class Generator:
    """Makes tasks one by one, sampling rarely used skills more often.

    No two tasks share an instruction, nor does any task use one of `exclude` (texts of
    another split, as `lifelong_gym.splits.text_key` folds them).
    """

    def __init__(
        self,
        seed: int,
        check: DatabaseBackend | None = None,
        exclude: frozenset[str] = frozenset(),
        style: str = "templated",
    ):
        if style not in STYLES:
            raise ConfigError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
        self.style = style
        self.rng = random.Random(seed)
        faker = Faker("en_US")
        faker.seed_instance(seed)
        self.maker = TableMaker(self.rng, faker)
        self.counts: Counter[str] = Counter()
        self.truth_backend = SqliteBackend()
        self.check = check
        self.disagreements = 0
        self.seen = set(exclude)

    def next_task(self, index: int) -> DBTask:
        """The next task, tried until one is sound (and agrees on the check back-end)."""
        for _ in range(1000):
            task = self._attempt(index)
            if task is None or text_key(task.instruction) in self.seen:
                continue
            if self.check is not None and not agrees(self.check, task):
                self.disagreements += 1
                logger.info(
                    "dropped a task the check back-end scores differently: %s", task.reference_sql
                )
                continue
            self.counts.update(task.skills)
            self.seen.add(text_key(task.instruction))
            return task
        raise RuntimeError(
            "the generator failed to make a new task in 1000 attempts "
            f"({len(self.seen)} instructions are taken)"
        )

    def _attempt(self, index: int) -> DBTask | None:
        if self.style == "plain" or (self.style == "mixed" and self.rng.random() < 0.5):
            return self._plain_attempt(index)
        rng = self.rng
        weights = [1.0 / (1 + self.counts[skill]) ** 2 for skill in SKILLS]
        skill = rng.choices(SKILLS, weights)[0]
        build = rng.choice(builders_for(skill))
        domain = rng.choice(DOMAINS)
        table = self.maker.table(domain, rng.randint(MIN_ROWS, MAX_ROWS))
        context = Context(rng, domain, table, self.maker)
        try:
            built = build(context, {skill})
        finally:
            context.close()
        if built is None:
            return None
        skills = skills_of(built.statements)
        if skill not in skills:
            return None
        return self._task(index, table, built, skills)

    def _plain_attempt(self, index: int) -> DBTask | None:
        rng = self.rng
        made = make_sheet(rng, self.maker, rng.choice(SHEETS), rng.randint(MIN_ROWS, MAX_ROWS))
        built = plain_task(rng, self.maker, made)
        if built is None:
            return None
        return self._task(index, made.table, built, skills_of(built.statements))

    def _task(
        self, index: int, table: TableInfo, built: Built, skills: tuple[str, ...]
    ) -> DBTask | None:
        """The task with its truth found by execution; None when it would be degenerate."""
        query = "select" in skills
        answer = execute_truth(self.truth_backend, table, built.statements, query, built.empty)
        if answer is None:
            return None
        return DBTask(
            index=index,
            skills=skills,
            instruction=built.instruction,
            table_info=table,
            answer_info=answer,
            reference_sql=built.statements,
        )


def generate_tasks(
    count: int,
    seed: int,
    *,
    check: DatabaseBackend | None = None,
    exclude: frozenset[str] = frozenset(),
    style: str = "templated",
    progress: bool = False,
) -> list[DBTask]:
    """`count` tasks of `style` (one of `STYLES`) made from `seed`; with `check`, only tasks
    it scores the same way; none with an instruction in `exclude`."""
    generator = Generator(seed, check, exclude, style)
    indices = progress_bar(count, "db tasks", range(count)) if progress else range(count)
    tasks = [generator.next_task(index) for index in indices]
    if generator.disagreements:
        logger.warning("dropped %d tasks the check back-end disagreed on", generator.disagreements)
    return tasks


def sample_order(indices: list[int], seed: int) -> list[int]:
    """The lifelong order of a task set: a fixed permutation of its indices made from `seed`."""
    order = list(indices)
    random.Random(f"order-{seed}").shuffle(order)
    return order


def skill_counts(tasks: list[DBTask], style: str = "templated") -> dict[str, int]:
    """How many tasks use each skill that `style` can make (all 22 unless it is plain)."""
    counts = Counter(skill for task in tasks for skill in task.skills)
    return {skill: counts[skill] for skill in (PLAIN_SKILLS if style == "plain" else SKILLS)}


__all__ = [
    "MIN_PER_SKILL",
    "PLAIN_SKILLS",
    "SHIPPED_WITH_FAKER",
    "SKILLS",
    "STYLES",
    "generate_tasks",
    "sample_order",
    "skill_counts",
    "skills_of",
]
