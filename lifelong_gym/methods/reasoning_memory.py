"""Reasoning memory: lessons the agent's own model distills after each task, retrieved later.

In the manner of ReasoningBank (arXiv 2509.25140) and Dynamic Cheatsheet: after a task
is judged, the model writes one memory item from it (the strategy that worked, or the
pitfall that made it fail); before each new task, the `k` items most relevant to it (BM25
over the task text, see `bm25.py`) go into its opening prompt, within a token budget.
Written once; the runner's callback and the Gymnasium wrapper call `start` and `finish`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from lifelong_gym.session import EvaluationOutcome, Session, with_memory

from .bm25 import bm25_scores
from .budget import token_counter
from .memory_items import MemoryItem, Source, distillation_prompt, parse_memory_item
from .method import Method

HEADING = "Here are notes you wrote after earlier tasks: strategies that worked, pitfalls to avoid."
CLOSING = "That is the end of your notes. Now solve the new task below."
CHARS_PER_TOKEN = 4
"""The estimate of a text's tokens when the model has no tokenizer to count them with."""
DETAILS = "reasoning_memory"
"""The key of the method's record in `session.details` (and in a wrapper's `info`)."""
TOTALS = ("model_calls", "prompt_tokens", "generated_tokens", "items", "rejected")


def estimate_tokens(text: str) -> int:
    """A text's tokens estimated from its length (for models that cannot count them)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def source_of(session: Session) -> Source | None:
    """What a judged session teaches: a strategy (correct), a pitfall (incorrect), or nothing."""
    if session.outcome == EvaluationOutcome.CORRECT:
        return "success"
    if session.outcome == EvaluationOutcome.INCORRECT:
        return "failure"
    return None  # no verdict (an environment error): nothing the agent can learn from


class ReasoningMemoryMethod(Method):
    """Memory items distilled by `model` after each task, the relevant ones put into prompts.

    `start(session)` puts the `k` most relevant items, as many as fit `budget` tokens (what
    they add to the prompt, counted with the model's tokenizer, else estimated), between the
    instructions and the task, and records them in `session.details["reasoning_memory"]`;
    `finish(session)` asks the model for an item about the judged task and records the
    call's tokens there too. At most `max_items` are kept: beyond, the least retrieved (the
    oldest among equals) is dropped. `model` may be given later with `bind`. A probe session
    (`session.probe`) gets the relevant items but counts no use and distills nothing.
    """

    def __init__(self, k: int = 2, budget: int = 1024, max_items: int = 100, model: Any = None):
        if k < 1 or budget < 1 or max_items < 1:
            raise ValueError(
                f"k, budget and max_items must be at least 1, got {k}, {budget}, {max_items}"
            )
        self.k = k
        self.budget = budget
        self.max_items = max_items
        self.items: list[MemoryItem] = []
        self.totals = dict.fromkeys(TOTALS, 0)
        self._next_number = 1
        self._tasks: dict[int, str] = {}  # the task texts of the tasks in flight
        self.model: Any = None
        self.count_tokens: Callable[[str], int] = estimate_tokens
        self.token_counting = "estimate"
        if model is not None:
            self.bind(model)

    def bind(self, model: Any) -> None:
        """Distill with `model` (a `LanguageModel`) and count tokens with its tokenizer."""
        counter = token_counter(model)
        self.model = model
        self.count_tokens = counter or estimate_tokens
        self.token_counting = "tokenizer" if counter else "estimate"

    # -- a task begins --------------------------------------------------------------------

    def start(self, session: Session) -> None:
        """Put the relevant items into the session's opening prompt, within the budget."""
        task = session.task_text
        if not session.probe:  # a probe reads the memory and changes nothing in it
            self._tasks[session.task_index] = task
        chosen = self.retrieve(task, session.skills)
        text, chosen, added = self.fit(session.chat_history[0].content, session.task_start, chosen)
        for item in chosen if not session.probe else ():
            item.uses += 1
        items = [f"item {item.number}" for item in chosen]
        session.insert_memory(text, title="reasoning memory", items=items)
        session.details[DETAILS] = {
            "retrieved": [item.number for item in chosen],
            "memory_tokens": added,
            "token_counting": self.token_counting,
        }

    def retrieve(self, task: str, skills: Sequence[str]) -> list[MemoryItem]:
        """The `k` items most relevant to `task`: BM25, then shared skills, then the newest.

        An item that shares no word and no skill with the task is never retrieved.
        """
        scores = bm25_scores(task, [item.searchable() for item in self.items])
        wanted = set(skills)
        ranked = sorted(
            (
                (score, len(wanted & set(item.skills)), item.number, item)
                for score, item in zip(scores, self.items, strict=True)
            ),
            key=lambda entry: entry[:3],
            reverse=True,
        )
        return [item for score, shared, _, item in ranked if score > 0 or shared][: self.k]

    def fit(
        self, opening: str, task_start: int, chosen: Sequence[MemoryItem]
    ) -> tuple[str, list[MemoryItem], int]:
        """The most of `chosen` (best first) that add at most `budget` tokens to `opening`
        when put before its task (which begins at `task_start`).

        Returns their text, the items it holds and the tokens they add.
        """
        chosen = list(chosen)
        plain = self.count_tokens(opening)
        while chosen:
            text = self.memory_text(chosen)
            added = self.count_tokens(with_memory(opening, task_start, text)[0]) - plain
            if added <= self.budget:
                return text, chosen, added
            chosen.pop()
        return "", [], 0

    def memory_text(self, chosen: Sequence[MemoryItem]) -> str:
        """`chosen` as the text put before the task, under a heading."""
        return "\n\n".join([HEADING, *(item.render() for item in chosen), CLOSING])

    # -- a task ends ----------------------------------------------------------------------

    def finish(self, session: Session) -> None:
        """Distill an item from the judged session; record the call in its details."""
        task = None if session.probe else self._tasks.pop(session.task_index, None)
        if task is None:  # a probe, or a task that did not begin here
            return
        record = self.distill(session, task)
        session.details.setdefault(DETAILS, {})["distillation"] = record

    def distill(self, session: Session, task: str) -> dict[str, Any]:
        """Ask the model for one item about `session` and keep it; the call's record."""
        source = source_of(session)
        if source is None:
            return {"model_calls": 0, "item": None, "rejected": "no verdict to learn from"}
        prompt = distillation_prompt(task, session.chat_history[1:], source, session.status.value)
        record: dict[str, Any] = {"model_calls": 1, "prompt_tokens": self.count_tokens(prompt)}
        try:
            (reply,) = self.model.generate([[{"role": "user", "content": prompt}]])
        except Exception as error:  # noqa: BLE001 - a failed distillation must not end the run
            return self._tally(
                {**record, "generated_tokens": 0}, None, f"the model failed: {error}"
            )
        record["generated_tokens"] = self.count_tokens(reply) - self.count_tokens("")
        fields, problem = parse_memory_item(reply)
        if fields is None:
            return self._tally(record, None, problem)
        item = MemoryItem(
            number=self._next_number,
            source=source,
            task_index=session.task_index,
            skills=list(session.skills),
            task=task,
            **fields,
        )
        self._next_number += 1
        self.items.append(item)
        self._evict()
        return self._tally(record, item, "")

    def _tally(self, record: dict[str, Any], item: MemoryItem | None, problem: str) -> dict:
        """Add a distillation's record to the totals; the record, with its item or problem."""
        for key in ("model_calls", "prompt_tokens", "generated_tokens"):
            self.totals[key] += record[key]
        self.totals["items" if item else "rejected"] += 1
        if item is None:
            return {**record, "item": None, "rejected": problem}
        return {**record, "item": item.number, "source": item.source}

    def _evict(self) -> None:
        """Drop the least retrieved earlier items (oldest first) beyond `max_items`."""
        while len(self.items) > self.max_items:
            victim = min(self.items[:-1], key=lambda item: (item.uses, item.number))
            self.items.remove(victim)

    # -- state ----------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The items and the totals, as JSON-ready values."""
        return {
            "items": [item.model_dump(mode="json") for item in self.items],
            "next_number": self._next_number,
            "totals": dict(self.totals),
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back what `state()` returned."""
        self.items = [MemoryItem.model_validate(item) for item in state.get("items", [])]
        self._next_number = state.get("next_number", len(self.items) + 1)
        self.totals = {**dict.fromkeys(TOTALS, 0), **state.get("totals", {})}
