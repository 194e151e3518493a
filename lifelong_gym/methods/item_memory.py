"""Item memory: what the methods share that keep numbered items learnt from finished tasks.

Reasoning memory's lessons, workflow memory's workflows and procedural memory's
procedures are all items of this kind: before a task the `k` most relevant (BM25 over the
task text, then shared skills, then the newest) go into its opening prompt within a token
budget; after it the method learns from the judged session (one model call or a rule); at
most `max_items` are kept; the items and the totals are the method's state. A subclass
says what an item is and how it learns (`learn`); this module does the rest once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import gymnasium as gym
from pydantic import BaseModel

from lifelong_gym.session import Session, with_memory

from .bm25 import bm25_scores
from .budget import model_of, token_counter
from .method import Method, MethodWrapper

CHARS_PER_TOKEN = 4
"""The estimate of a text's tokens when the model has no tokenizer to count them with."""
MODEL_TOTALS = ("model_calls", "prompt_tokens", "generated_tokens")


def request_messages(prompt: str) -> list[dict[str, str]]:
    """The chat a method sends its model for a learning request: `prompt` as the one user
    message (what an export of the request shows the model, too)."""
    return [{"role": "user", "content": prompt}]


def estimate_tokens(text: str) -> int:
    """A text's tokens estimated from its length (for models that cannot count them)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class StoredItem(BaseModel):
    """One item of a memory: its number, the skills of the task(s) it came from, and how
    often it was retrieved. A subclass adds its fields, `render` and `searchable`."""

    number: int
    skills: list[str]
    uses: int = 0

    def render(self) -> str:
        """The item as prompt text."""
        raise NotImplementedError

    def searchable(self) -> str:
        """The text retrieval ranks the item by."""
        raise NotImplementedError


class ItemMemoryMethod(Method):
    """Items learnt after each task, the `k` most relevant put into each new prompt.

    `start(session)` puts the `k` most relevant items, as many as fit `budget` tokens (what
    they add to the prompt, counted with the model's tokenizer, else estimated), between the
    instructions and the task (`session.insert_memory`, each named "<label> <number>"), and
    records them in `session.details[details_key]`; `finish(session)` calls `learn` with the
    judged session, its task text and the items it was given, and records what it returns
    there under `learning`. At most `max_items` are kept: beyond, the earlier item lowest by
    `eviction_rank` goes. `model` may be given later with `bind`. A probe session
    (`session.probe`) gets the relevant items but counts no use and teaches nothing.
    """

    item_class: ClassVar[type[StoredItem]]
    details_key: ClassVar[str]
    """The key of the method's record in `session.details` (and in a wrapper's `info`)."""
    learning: ClassVar[str]
    """The key, in that record, of what `learn` did."""
    title: ClassVar[str]
    """The title of the inserted memory (`session.insert_memory`)."""
    label: ClassVar[str]
    """What an item is called in the inserted memory's record ("item 3")."""
    heading: ClassVar[str]
    closing: ClassVar[str]
    counts: ClassVar[tuple[str, ...]]
    """The method's own totals, besides the model calls and their tokens."""

    def __init__(self, k: int = 2, budget: int = 1024, max_items: int = 100, model: Any = None):
        if k < 1 or budget < 1 or max_items < 1:
            raise ValueError(
                f"k, budget and max_items must be at least 1, got {k}, {budget}, {max_items}"
            )
        self.k = k
        self.budget = budget
        self.max_items = max_items
        self.items: list[Any] = []
        self.totals = self.no_totals()
        self._next_number = 1
        self._flights: dict[int, tuple[str, list[int]]] = {}  # task text, items given
        self.exchange: tuple[str, str] | None = None
        """The last task's learning request and its reply, when one was made (not state)."""
        self.model: Any = None
        self.count_tokens: Callable[[str], int] = estimate_tokens
        self.token_counting = "estimate"
        if model is not None:
            if not callable(getattr(model, "generate", None)):
                raise ValueError(
                    f"model must be a language model with generate() given from Python, "
                    f"got {model!r}"
                )
            self.bind(model)

    def setup(self, agent: Any, env: Any) -> None:
        """Learn with the agent's model when it has one that generates (else by the rule)."""
        model = model_of(agent)
        if callable(getattr(model, "generate", None)):
            self.bind(model)

    def bind(self, model: Any) -> None:
        """Learn with `model` (a `LanguageModel`) and count tokens with its tokenizer."""
        counter = token_counter(model)
        self.model = model
        self.count_tokens = counter or estimate_tokens
        self.token_counting = "tokenizer" if counter else "estimate"

    # -- a task begins --------------------------------------------------------------------

    def start(self, session: Session) -> None:
        """Put the relevant items into the session's opening prompt, within the budget."""
        task = session.task_text
        chosen = self.retrieve(task, session.skills)
        text, chosen, added = self.fit(session.chat_history[0].content, session.task_start, chosen)
        numbers = [item.number for item in chosen]
        if not session.probe:  # a probe reads the memory and changes nothing in it
            self._flights[session.task_index] = (task, numbers)
            for item in chosen:
                item.uses += 1
        items = [f"{self.label} {number}" for number in numbers]
        session.insert_memory(text, title=self.title, items=items)
        session.details[self.details_key] = {
            "retrieved": numbers,
            "memory_tokens": added,
            "token_counting": self.token_counting,
        }

    def retrieve(self, task: str, skills: Sequence[str]) -> list[Any]:
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
        self, opening: str, task_start: int, chosen: Sequence[Any]
    ) -> tuple[str, list[Any], int]:
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

    def memory_text(self, chosen: Sequence[Any]) -> str:
        """`chosen` as the text put before the task, under a heading."""
        return "\n\n".join([self.heading, *(item.render() for item in chosen), self.closing])

    # -- a task ends ----------------------------------------------------------------------

    def finish(self, session: Session) -> None:
        """Learn from the judged session; record what was done in its details."""
        self.exchange = None  # a task that makes no request leaves none of an earlier one
        flight = None if session.probe else self._flights.pop(session.task_index, None)
        if flight is None:  # a probe, or a task that did not begin here
            return
        task, numbers = flight
        kept = {item.number: item for item in self.items}
        given = [kept[number] for number in numbers if number in kept]  # best first
        record = self.learn(session, task, given)
        session.details.setdefault(self.details_key, {})[self.learning] = record

    def learn(self, session: Session, task: str, given: list[Any]) -> dict[str, Any]:
        """Learn from `session` (its task text `task`, the items `given` to it, those still
        kept); what was done, as JSON-ready values."""
        raise NotImplementedError

    def ask(self, prompt: str) -> tuple[str | None, dict[str, Any]]:
        """The model's reply to `prompt` (None if the call failed) and the call's record
        (`model_calls`, `prompt_tokens`, `generated_tokens`, and `failed` if it did), which
        the totals count."""
        record: dict[str, Any] = {"model_calls": 1, "prompt_tokens": self.count_tokens(prompt)}
        try:
            (reply,) = self.model.generate([request_messages(prompt)])
        except Exception as error:  # noqa: BLE001 - a failed call must not end the run
            reply, record["generated_tokens"] = None, 0
            record["failed"] = f"the model failed: {error}"
        else:
            record["generated_tokens"] = self.count_tokens(reply) - self.count_tokens("")
            self.exchange = (prompt, reply)
        for key in MODEL_TOTALS:
            self.totals[key] += record[key]
        return reply, record

    def model_ask(self) -> Callable[[str], tuple[str | None, dict[str, Any]]] | None:
        """`ask` when a model is bound, else None (a method then learns by a rule)."""
        return self.ask if self.model is not None else None

    def keep(self, **fields: Any) -> Any:
        """A new item of `fields`, numbered and kept (dropping the lowest beyond `max_items`)."""
        item = self.item_class(number=self._next_number, **fields)
        self._next_number += 1
        self.items.append(item)
        while len(self.items) > self.max_items:
            self.items.remove(min(self.items[:-1], key=self.eviction_rank))
        return item

    def eviction_rank(self, item: Any) -> tuple:
        """What orders items for eviction, lowest first: the least retrieved, the oldest."""
        return (item.uses, item.number)

    def as_wrapper(self, env: gym.Env[str, str]) -> ItemMemoryWrapper:
        """`env` wrapped so that each `reset` calls `start` and each task's end `finish`,
        their records in `info[details_key]`."""
        return ItemMemoryWrapper(env, self)

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
        self.items = [self.item_class.model_validate(item) for item in state.get("items", [])]
        self._next_number = state.get("next_number", len(self.items) + 1)
        self.totals = {**self.no_totals(), **state.get("totals", {})}

    def no_totals(self) -> dict[str, int]:
        """The totals before any task: every count 0."""
        return dict.fromkeys((*MODEL_TOTALS, *self.counts), 0)


class ItemMemoryWrapper(MethodWrapper):
    """An item memory around each task of a plain Gymnasium loop: `info[details_key]` holds
    the items retrieved (at reset) and, at the end of a task, also what was learnt from it."""

    method: ItemMemoryMethod

    def reset_info(self, session: Any) -> dict[str, Any]:
        """The items retrieved into the prompt and the tokens they added."""
        key = self.method.details_key
        return {key: dict(session.details[key])}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the task; when it ends, learn from it and say what was learnt."""
        obs, reward, terminated, truncated, info = super().step(action)
        if terminated or truncated:
            info = {**info, **self.reset_info(self.env.unwrapped.session)}
        return obs, reward, terminated, truncated, info
