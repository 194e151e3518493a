"""A seeded generator of OS tasks covering the benchmark's 29 command skills, each verified.

Every task is checked in a fresh container: its evaluation must fail right after the
initialization and pass after the reference solution ran. Run:

    lifelong-gym generate os --count 300 --seed 0 [--output DIR]
"""

from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from lifelong_gym.envs.os.backends.docker import ContainerPool
from lifelong_gym.envs.os.backends.shell import Mode

# `text` and `users` add their templates to TEMPLATES when imported
from lifelong_gym.envs.os.generator.templates import TEMPLATES, text, users  # noqa: F401
from lifelong_gym.envs.os.judge import judge, prepare
from lifelong_gym.envs.os.skills import SKILLS
from lifelong_gym.envs.os.tasks import OSTask, ScriptItem
from lifelong_gym.generation import (
    progress_bar,
)
from lifelong_gym.splits import text_key


def generate_tasks(count: int, seed: int, *, exclude: frozenset[str] = frozenset()) -> list[OSTask]:
    """Draw `count` distinct tasks, none with an instruction in `exclude`; the least
    covered skill picks the next template."""
    missing = set(SKILLS) - {s for skills, _ in TEMPLATES.values() for s in skills}
    if missing:
        raise RuntimeError(f"no template covers the skills {sorted(missing)}")
    rng = random.Random(seed)
    covered: Counter[str] = Counter()
    tasks: list[OSTask] = []
    seen: set[str] = set(exclude)
    names = sorted(TEMPLATES)
    for _ in range(count * 1000):
        if len(tasks) == count:
            return tasks
        lowest = min(covered[s] for s in SKILLS)
        needy = sorted(s for s in SKILLS if covered[s] == lowest)
        skill = rng.choice(needy)
        name = rng.choice([n for n in names if skill in TEMPLATES[n][0]])
        skills, make = TEMPLATES[name]
        draft = make(rng)
        if text_key(draft.instruction) in seen:
            continue
        seen.add(text_key(draft.instruction))
        covered.update(skills)
        tasks.append(
            OSTask(
                index=len(tasks),
                skills=skills,
                instruction=draft.instruction,
                initialization=ScriptItem(script=draft.init),
                evaluation=ScriptItem(script=draft.evaluation),
                ground_truth=ScriptItem(script=draft.solution),
            )
        )
    raise RuntimeError(f"made only {len(tasks)} of {count} tasks with instructions not yet taken")


def verify_task(pool: ContainerPool, task: OSTask) -> str | None:
    """None if the task is sound, else what is wrong with it."""
    assert task.ground_truth is not None
    sandbox = pool.acquire()
    try:
        prepare(sandbox, task)
        if judge(sandbox, task, None):
            return "the evaluation passes before the solution ran"
        result = sandbox.run(task.ground_truth.script, Mode.PERSISTENT, timeout=30, limit=2000)
        if result.exit_code != 0:
            return f"the solution failed ({result.exit_code}): {result.output.strip()}"
        if not judge(sandbox, task, None):
            return "the evaluation fails after the solution ran"
        return None
    finally:
        pool.discard(sandbox)


def verify_tasks(tasks: list[OSTask], image: str, workers: int = 3) -> dict[int, str]:
    """Verify every task in fresh containers; return the problems by task index."""
    pool = ContainerPool(image, size=workers + 1)
    try:
        with ThreadPoolExecutor(workers) as executor:
            checked = executor.map(lambda t: verify_task(pool, t), tasks)
            verdicts = list(progress_bar(len(tasks), "verifying os tasks", checked))
    finally:
        pool.close()
    return {t.index: v for t, v in zip(tasks, verdicts, strict=True) if v is not None}


def sample_order(tasks: list[OSTask], seed: int) -> list[int]:
    """The lifelong order of a task set: its indices shuffled by `seed`."""
    order = [task.index for task in tasks]
    random.Random(seed + 1).shuffle(order)
    return order
