"""Procedural memory with update: procedures built from trajectories, revised on failure.

After Memp (Fang et al., arXiv 2508.06433), whose memory goes through three stages:
build, retrieve, update. Build: a solved task becomes a procedure holding both of Memp's
forms, its trajectory (the task and the actions that solved it, verbatim) and an abstract
script (a title and steps with placeholders, by the agent's model, or by the rule of
`steps.py` for an agent without one). Retrieve: the `k` procedures most similar to the
new task (BM25 over their tasks and scripts) go into its prompt, within a budget. Update:
a procedure retrieved into a solved task is reinforced; one retrieved into a failed task
is corrected by the model from the failure (the best of them, one call) or demoted, and a
procedure that failed `patience` more times than it helped is removed. Failed tasks build
nothing (Memp's validation filter).
"""

from __future__ import annotations

from typing import Any

from lifelong_gym.session import EvaluationOutcome, Session

from .item_memory import ItemMemoryMethod, StoredItem
from .memory_items import clip, ending
from .steps import actions, learn_recipe, render_steps

DETAILS = "procedural_memory"
"""The key of the method's record in `session.details` (and in a wrapper's `info`)."""
HEADING = (
    "Here are procedures from earlier tasks: each task, the actions that solved it, its steps."
)
CLOSING = "That is the end of the procedures. Now solve the new task below."
ACTION_CHARS = 600
"""Characters kept of each action of a procedure's trajectory."""
BUILD = (
    "The judge found your answer correct. Write the procedure you followed as a script "
    "for tasks like this one: its goal and its steps."
)
REVISE = (
    "The judge found your answer wrong{status}. This procedure was in your prompt:\n"
    "Title: {title}\nSteps:\n{steps}\n"
    "Correct it so that it would have led to a correct answer, and write it out whole."
)


class Procedure(StoredItem):
    """A solved task's trajectory and its abstract script, with how it fared since."""

    task_index: int
    task: str
    actions: list[str]
    """The actions that solved the task, verbatim (each cut at `ACTION_CHARS`)."""
    title: str
    steps: list[str]
    successes: int = 1
    """Solved tasks it took part in: the one it was built from and those it was given to."""
    failures: int = 0
    """Failed tasks it was given to and not corrected after."""
    revisions: int = 0

    def render(self) -> str:
        """The procedure as prompt text: its task, its actions, its steps."""
        done = "\n".join(self.actions)
        return (
            f"### Procedure {self.number}: {self.title}\nTask:\n{self.task}\n\n"
            f"Actions that solved it:\n{done}\n\nSteps:\n{render_steps(self.steps)}"
        )

    def searchable(self) -> str:
        """Its task, title, steps and skills."""
        return " ".join([self.task, self.title, *self.steps, *self.skills])


class ProceduralMemoryMethod(ItemMemoryMethod):
    """Procedures built from solved tasks, the `k` most similar put into each prompt, and
    updated by how the tasks they were given to went.

    `finish(session)` records in `session.details["procedural_memory"]["update"]` what it
    did: `reinforced` (procedures given to a solved task), `revised` (the first one given
    to a failed task, rewritten by the model), `demoted` (the others, or all of them without
    a model or when the revision was junk), `dropped` (those `patience` more failures than
    successes), and `built` (the new procedure of a solved task, or `rejected`: why none).
    Beyond `max_items`, the procedure that helped least is dropped (then the least
    retrieved, the oldest).
    """

    item_class = Procedure
    details_key = DETAILS
    learning = "update"
    title = "procedural memory"
    label = "procedure"
    heading = HEADING
    closing = CLOSING
    counts = ("built", "rejected", "reinforced", "revised", "demoted", "dropped")

    def __init__(
        self,
        k: int = 2,
        budget: int = 1024,
        max_items: int = 100,
        patience: int = 2,
        model: Any = None,
    ):
        if patience < 1:
            raise ValueError(f"patience must be at least 1, got {patience}")
        super().__init__(k, budget, max_items, model)
        self.patience = patience

    def learn(self, session: Session, task: str, given: list[Any]) -> dict[str, Any]:
        """Update the procedures `given` to the session by its outcome; build one if solved."""
        if session.solved:
            for procedure in given:
                procedure.successes += 1
            self._count("reinforced", given)
            return {"reinforced": [p.number for p in given], **self.build(session, task)}
        if session.errored or session.outcome != EvaluationOutcome.INCORRECT:
            return {"model_calls": 0, "rejected": "no verdict to learn from"}
        return self.correct(session, task, given)

    def build(self, session: Session, task: str) -> dict[str, Any]:
        """A new procedure from a solved session; the record of its building."""
        turns = session.chat_history[1:]
        recipe, record = learn_recipe(self.model_ask(), task, turns, BUILD)
        if recipe is None:
            self.totals["rejected"] += 1
            return {**record, "built": None}
        title, steps = recipe
        procedure = self.keep(
            task_index=session.task_index,
            task=task,
            actions=[clip(action, ACTION_CHARS) for action in actions(turns)],
            title=title,
            steps=steps,
            skills=list(session.skills),
        )
        self.totals["built"] += 1
        return {**record, "built": procedure.number}

    def correct(self, session: Session, task: str, given: list[Any]) -> dict[str, Any]:
        """Revise the first procedure given to a failed session (with a model), demote the
        others (all of them without one), drop those past `patience`; what was done."""
        record: dict[str, Any] = {"model_calls": 0, "revised": []}
        demoted = list(given)
        if given and self.model is not None:
            first = given[0]
            request = REVISE.format(
                status=ending(session.status.value),
                title=first.title,
                steps=render_steps(first.steps),
            )
            recipe, record = learn_recipe(self.ask, task, session.chat_history[1:], request)
            record["revised"] = []
            if recipe is not None:
                first.title, first.steps = recipe
                first.revisions += 1
                record["revised"] = [first.number]
                demoted = given[1:]
        for procedure in demoted:
            procedure.failures += 1
        dropped = [p for p in demoted if p.failures - p.successes >= self.patience]
        self.items = [p for p in self.items if p not in dropped]
        self._count("revised", record["revised"])
        self._count("demoted", demoted)
        self._count("dropped", dropped)
        numbers = [p.number for p in demoted], [p.number for p in dropped]
        return {**record, "demoted": numbers[0], "dropped": numbers[1]}

    def eviction_rank(self, item: Any) -> tuple:
        """Lowest first: the least net help (successes less failures), the least retrieved,
        the oldest."""
        return (item.successes - item.failures, item.uses, item.number)

    def _count(self, what: str, done: list[Any]) -> None:
        self.totals[what] += len(done)
