"""Workflow memory: reusable workflows induced from solved tasks, the relevant ones inserted.

After Agent Workflow Memory (AWM; Wang et al., arXiv 2409.07429), online: each task the
judge finds correct is turned into a workflow, a goal and abstract steps with placeholders
for the task's own values, written by the agent's model (or, for an agent without one, by
the rule of `steps.py`: its actions with their literals abstracted). A workflow keeps the
tasks it was induced from as its examples, as AWM's workflows come with theirs; a workflow
whose steps another solved task repeats gains that task as an example instead of a copy.
Before each task the `k` most relevant workflows (BM25) go into its prompt, within a budget.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from lifelong_gym.session import Session

from .item_memory import ItemMemoryMethod, StoredItem
from .steps import learn_recipe, render_steps

DETAILS = "workflow_memory"
"""The key of the method's record in `session.details` (and in a wrapper's `info`)."""
HEADING = "Here are workflows that solved earlier tasks, each with the tasks it solved:"
CLOSING = "That is the end of the workflows. Now solve the new task below."
INDUCE = (
    "The judge found your answer correct. Write the workflow you followed as a reusable "
    "recipe for tasks like this one: its goal and its steps, each step one action or check."
)


class Example(BaseModel):
    """A solved task a workflow was induced from."""

    task_index: int
    task: str


class Workflow(StoredItem):
    """A goal, its abstract steps, and the solved tasks it came from (newest first)."""

    title: str
    steps: list[str]
    examples: list[Example]

    def render(self) -> str:
        """The workflow as prompt text: its steps, then its example tasks."""
        shown = "\n\n".join(f"Example task:\n{example.task}" for example in self.examples)
        return f"### Workflow {self.number}: {self.title}\n{render_steps(self.steps)}\n\n{shown}"

    def searchable(self) -> str:
        """Its example tasks, title, steps and skills."""
        tasks = [example.task for example in self.examples]
        return " ".join([*tasks, self.title, *self.steps, *self.skills])


class WorkflowMemoryMethod(ItemMemoryMethod):
    """Workflows induced from solved tasks; the `k` most relevant put into each prompt.

    `finish(session)`, for a solved task, asks the model for its workflow (one call; the
    rule when no model is bound) and keeps it with the task as its example, or adds the
    task to the workflow with the same steps, keeping its `examples` newest. What was done
    goes into `session.details["workflow_memory"]["induction"]`. Retrieval, the budget, the
    cap (`max_items`, the least retrieved dropped) and the state are `ItemMemoryMethod`'s.
    """

    item_class = Workflow
    details_key = DETAILS
    learning = "induction"
    title = "workflow memory"
    label = "workflow"
    heading = HEADING
    closing = CLOSING
    counts = ("induced", "merged", "rejected")

    def __init__(
        self,
        k: int = 2,
        budget: int = 1024,
        max_items: int = 100,
        examples: int = 2,
        model: Any = None,
    ):
        if examples < 1:
            raise ValueError(f"examples must be at least 1, got {examples}")
        super().__init__(k, budget, max_items, model)
        self.examples = examples

    def learn(self, session: Session, task: str, given: list[Any]) -> dict[str, Any]:
        """Induce a workflow from a solved session; what was done."""
        if not session.solved:
            self.totals["rejected"] += 1
            return {"model_calls": 0, "workflow": None, "rejected": "not solved"}
        recipe, record = learn_recipe(self.model_ask(), task, session.chat_history[1:], INDUCE)
        if recipe is None:
            self.totals["rejected"] += 1
            return {**record, "workflow": None}
        title, steps = recipe
        example = Example(task_index=session.task_index, task=task)
        same = next((w for w in self.items if _key(w.steps) == _key(steps)), None)
        if same is not None:
            same.examples = [example, *same.examples][: self.examples]
            same.skills = sorted({*same.skills, *session.skills})
            self.totals["merged"] += 1
            return {**record, "workflow": same.number, "merged": True}
        workflow = self.keep(
            title=title, steps=steps, examples=[example], skills=list(session.skills)
        )
        self.totals["induced"] += 1
        return {**record, "workflow": workflow.number, "merged": False}


def _key(steps: list[str]) -> list[str]:
    """What makes two workflows' steps the same: their words, in any case."""
    return [" ".join(step.lower().split()) for step in steps]
