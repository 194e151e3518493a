"""Reasoning memory: lessons the agent's own model distills after each task, retrieved later.

In the manner of ReasoningBank (arXiv 2509.25140) and Dynamic Cheatsheet: after a task
is judged, the model writes one memory item from it (the strategy that worked, or the
pitfall that made it fail); before each new task, the `k` items most relevant to it (BM25
over the task text, see `bm25.py`) go into its opening prompt, within a token budget.
The retrieval, the budget, the cap and the state are item memory's (`item_memory.py`).
"""

from __future__ import annotations

from typing import Any, Literal

from lifelong_gym.session import EvaluationOutcome, Session

from .budget import agent_model
from .item_memory import ItemMemoryMethod
from .memory_items import MemoryItem, Source, distillation_prompt, parse_memory_item
from .rule_items import rule_memory_reply

HEADING = "Here are notes you wrote after earlier tasks: strategies that worked, pitfalls to avoid."
CLOSING = "That is the end of your notes. Now solve the new task below."
DETAILS = "reasoning_memory"
"""The key of the method's record in `session.details` (and in a wrapper's `info`)."""


def source_of(session: Session) -> Source | None:
    """What a judged session teaches: a strategy (correct), a pitfall (incorrect), or nothing."""
    if session.outcome == EvaluationOutcome.CORRECT:
        return "success"
    if session.outcome == EvaluationOutcome.INCORRECT:
        return "failure"
    return None  # no verdict (an environment error): nothing the agent can learn from


class ReasoningMemoryMethod(ItemMemoryMethod):
    """Memory items distilled by `model` after each task, the relevant ones put into prompts.

    `start(session)` puts the `k` most relevant items, within `budget` tokens, between the
    instructions and the task, and records them in `session.details["reasoning_memory"]`;
    `finish(session)` asks the model for an item about the judged task and records the
    call's tokens there too, under `distillation`. At most `max_items` are kept: beyond,
    the least retrieved (the oldest among equals) is dropped. `model` may be given later
    with `bind`. A probe session gets the relevant items but counts no use and distills
    nothing (`ItemMemoryMethod` has the details).

    `distiller="rule"` writes each item by rule instead (`rule_items.py`), for an agent
    without a model (the oracle, scripted agents): asked for explicitly, never in place of
    a model that is there. The rule answers the same distillation prompt a model gets, in
    the same format, so `exchange` holds both (what `export sft --method` shows).
    """

    item_class = MemoryItem
    details_key = DETAILS
    learning = "distillation"
    title = "reasoning memory"
    label = "item"
    heading = HEADING
    closing = CLOSING
    counts = ("items", "rejected")

    def __init__(
        self,
        k: int = 2,
        budget: int = 1024,
        max_items: int = 100,
        model: Any = None,
        distiller: Literal["model", "rule"] = "model",
    ):
        if distiller not in ("model", "rule"):
            raise ValueError(f"distiller must be 'model' or 'rule', got {distiller!r}")
        super().__init__(k, budget, max_items, model)
        self.distiller = distiller

    def setup(self, agent: Any, env: Any) -> None:
        """Distill with the agent's own model (refused in one line when it has none), or by
        the rule; a model there still counts the tokens the items add."""
        if self.distiller == "rule":
            super().setup(agent, env)  # a model that is there counts tokens, nothing more
            return
        purpose = "reasoning_memory distills memories"
        self.bind(agent_model(purpose, agent, instead="reasoning_memory:distiller=rule"))

    def learn(self, session: Session, task: str, given: list[Any]) -> dict[str, Any]:
        """Ask the model (or the rule) for one item about `session` and keep it; the call's
        record."""
        source = source_of(session)
        if source is None:
            return {"model_calls": 0, "item": None, "rejected": "no verdict to learn from"}
        turns, status = session.chat_history[1:], session.status.value
        prompt = distillation_prompt(task, turns, source, status)
        if self.distiller == "rule":
            reply = rule_memory_reply(turns, session.skills, source, status)
            record: dict[str, Any] = {"learnt_by": "rule", "model_calls": 0}
            self.exchange = (prompt, reply)
        else:
            reply, record = self.ask(prompt)
        fields, problem = (
            (None, record.pop("failed")) if reply is None else parse_memory_item(reply)
        )
        if fields is None:
            self.totals["rejected"] += 1
            return {**record, "item": None, "rejected": problem}
        item = self.keep(
            source=source,
            task_index=session.task_index,
            skills=list(session.skills),
            task=task,
            **fields,
        )
        self.totals["items"] += 1
        return {**record, "item": item.number, "source": item.source}
