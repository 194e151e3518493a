"""A seeded generator of OS tasks covering the benchmark's 29 command skills, each verified.

Every task is checked in a fresh container: a change task's evaluation must fail right
after the initialization and pass after the reference solution ran; a question task's
solution must print its answer. Run:

    lifelong-gym generate os --count 300 --seed 0 [--kind change|question|mixed] [--output DIR]
"""

from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from lifelong_gym.envs.os.backends.docker import ContainerPool
from lifelong_gym.envs.os.backends.sandbox import Sandbox
from lifelong_gym.envs.os.backends.shell import Mode

# `text` and `users` add their templates to TEMPLATES, the `questions_*` to QUESTIONS
from lifelong_gym.envs.os.generator.templates import (  # noqa: F401
    QUESTIONS,
    TEMPLATES,
    Draft,
    Question,
    Template,
    questions_files,
    questions_text,
    text,
    users,
)
from lifelong_gym.envs.os.judge import judge, prepare
from lifelong_gym.envs.os.skills import SKILLS
from lifelong_gym.envs.os.tasks import AnswerCheck, OSTask, ScriptItem
from lifelong_gym.generation import progress_bar
from lifelong_gym.splits import text_key

KINDS = ("change", "question", "mixed")


def kind_skills(kind: str) -> tuple[str, ...]:
    """The skills the tasks of `kind` cover: all 29, or those the question templates use."""
    if kind == "question":
        return tuple(sorted({s for skills, _ in QUESTIONS.values() for s in skills}))
    return SKILLS


class _Draw:
    """Templates of one kind drawn in turn: the least covered skill picks the next template
    (for questions, which cover few skills, the least drawn template comes next)."""

    def __init__(self, kind: str):
        self.templates = {"change": TEMPLATES, "question": QUESTIONS}[kind]
        missing = set(kind_skills(kind)) - {s for sk, _ in self.templates.values() for s in sk}
        if missing:
            raise RuntimeError(f"no template covers the skills {sorted(missing)}")
        self.balance = {
            n: (n,) if kind == "question" else skills for n, (skills, _) in self.templates.items()
        }
        self.targets = sorted({unit for units in self.balance.values() for unit in units})
        self.names = sorted(self.templates)
        self.covered: Counter[str] = Counter()

    def pick(self, rng: random.Random) -> str:
        lowest = min(self.covered[s] for s in self.targets)
        unit = rng.choice(sorted(s for s in self.targets if self.covered[s] == lowest))
        return rng.choice([n for n in self.names if unit in self.balance[n]])


def generate_tasks(
    count: int, seed: int, *, exclude: frozenset[str] = frozenset(), kind: str = "change"
) -> list[OSTask]:
    """Draw `count` distinct tasks of `kind` (change: each judged by an evaluation script;
    question: each answered with one value; mixed: each a change or a question by a coin
    flip), none with an instruction in `exclude`. Each kind's templates are drawn in turn
    (`_Draw`)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    draws = [_Draw(k) for k in (("change", "question") if kind == "mixed" else (kind,))]
    rng = random.Random(seed)
    tasks: list[OSTask] = []
    seen: set[str] = set(exclude)
    for _ in range(count * 1000):
        if len(tasks) == count:
            return tasks
        draw = rng.choice(draws) if len(draws) > 1 else draws[0]
        name = draw.pick(rng)
        skills, make = draw.templates[name]
        draft = make(rng)
        if text_key(draft.instruction) in seen:
            continue
        seen.add(text_key(draft.instruction))
        draw.covered.update(draw.balance[name])
        tasks.append(_task(len(tasks), skills, draft))
    raise RuntimeError(f"made only {len(tasks)} of {count} tasks with instructions not yet taken")


def _task(index: int, skills: tuple[str, ...], draft: Draft | Question) -> OSTask:
    """The task of a drawn template: judged by its evaluation, or by its answer."""
    if isinstance(draft, Question):
        judged = {"answer_check": AnswerCheck(match=draft.answer)}
    else:
        judged = {"evaluation": ScriptItem(script=draft.evaluation)}
    return OSTask(
        index=index,
        skills=skills,
        instruction=draft.instruction,
        initialization=ScriptItem(script=draft.init),
        ground_truth=ScriptItem(script=draft.solution),
        **judged,
    )


def verify_task(pool: ContainerPool, task: OSTask) -> str | None:
    """None if the task is sound, else what is wrong with it. A change task's evaluation
    must fail before the solution and pass after it; a question task's solution must print
    its answer, which passes the judge where a wrong answer fails."""
    assert task.ground_truth is not None
    sandbox = pool.acquire()
    try:
        prepare(sandbox, task)
        if task.answer_check is None and judge(sandbox, task, None):
            return "the evaluation passes before the solution ran"
        result = sandbox.run(task.ground_truth.script, Mode.PERSISTENT, timeout=30, limit=2000)
        if result.exit_code != 0:
            return f"the solution failed ({result.exit_code}): {result.output.strip()}"
        if task.answer_check is not None:
            return _answer_problem(sandbox, task, result.output.strip())
        if not judge(sandbox, task, None):
            return "the evaluation fails after the solution ran"
        return None
    finally:
        pool.discard(sandbox)


def wrong_answers(answer: str) -> list[str]:
    """Answers a question task must reject: none, and one next to the right one."""
    near = str(int(answer) + 1) if answer.lstrip("-").isdigit() else f"{answer}x"
    return ["", near]


def _answer_problem(sandbox: Sandbox, task: OSTask, printed: str) -> str | None:
    assert task.answer_check is not None and task.answer_check.match is not None
    expected = task.answer_check.match
    if printed != expected:
        return f"the solution printed {printed!r}, not the answer {expected!r}"
    if not judge(sandbox, task, printed):
        return "the judge rejects the solution's answer"
    for wrong in wrong_answers(expected):
        if judge(sandbox, task, wrong):
            return f"the judge accepts the wrong answer {wrong!r}"
    return None


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
