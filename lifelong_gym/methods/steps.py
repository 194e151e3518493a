"""Steps learnt from a trajectory: a title and abstract steps, by the agent's model or a rule.

Workflow memory (AWM) and procedural memory (Memp) both turn a finished task into a
reusable recipe: a title saying the goal and a few steps with placeholders where the task
had its own values. A model writes them in a fixed format (`Title:` then `Steps:` and one
step a line), parsed leniently: anything else yields nothing and the reason, never an
error. An agent without a model (the oracle, the planted learner) gets the rule's recipe:
its own actions, in order, with their literals (quoted strings, numbers) made placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from lifelong_gym.session import ChatMessage, Role

from .memory_items import PLACEHOLDER, clip, finished_task_prompt, label_pattern, labelled_lines

TITLE_CHARS = 80
STEP_CHARS = 300
MAX_STEPS = 12
"""Steps kept of a recipe (a model's or the rule's); later ones are left out."""

STEPS_FORMAT = (
    "Write {placeholders} where this task had its own values (names, numbers, quoted "
    "text). Answer in exactly this format and nothing else:\n"
    "Title: <the goal, in a few words>\n"
    "Steps:\n"
    "1. <the first step>\n"
    "2. <the next step, as many as needed>"
)
_LABEL = label_pattern("title", "steps")
_BULLET = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_FENCE = re.compile(r"^\s*```\w*\s*$", re.MULTILINE)

Recipe = tuple[str, list[str]]
"""A title and its steps."""


def parse_steps(reply: str) -> tuple[Recipe | None, str]:
    """The title and steps in a model's reply, or None and what was wrong.

    Labels may carry markdown and any case; steps are the lines after `Steps:`, their
    numbers or bullets removed. No title, no step, or the format's own placeholders echoed
    back mean no recipe.
    """
    fields = labelled_lines(reply, _LABEL)
    title = " ".join(" ".join(fields.get("title", [])).split())
    steps = [_BULLET.sub("", line).strip() for line in fields.get("steps", [])]
    steps = [step for step in steps if step and not PLACEHOLDER.fullmatch(step)]
    missing = [
        name
        for name, value in (("title", title), ("steps", steps))
        if not value or (name == "title" and PLACEHOLDER.fullmatch(title))
    ]
    if missing:
        return None, f"no {', no '.join(missing)} in the reply: {reply[:80]!r}"
    return (clip(title, TITLE_CHARS), [clip(s, STEP_CHARS) for s in steps[:MAX_STEPS]]), ""


def abstract(text: str) -> str:
    """`text` with its literals made placeholders ('South' -> {text}, 5 -> {number}), its
    code fences dropped and its white space collapsed to single spaces."""
    text = _QUOTED.sub("{text}", _FENCE.sub("", text))
    return " ".join(_NUMBER.sub("{number}", text).split())


def actions(turns: Sequence[ChatMessage]) -> list[str]:
    """The agent's replies of a trajectory (`turns`: after its opening), in order."""
    return [message.content for message in turns if message.role == Role.AGENT]


def rule_recipe(task: str, turns: Sequence[ChatMessage]) -> tuple[Recipe | None, str]:
    """The rule's recipe: the task's first line as the title, the agent's actions as the
    steps, both with their literals abstracted (repeated steps once); None without an action."""
    steps = list(dict.fromkeys(abstract(action) for action in actions(turns)))
    steps = [clip(step, STEP_CHARS) for step in steps if step][:MAX_STEPS]
    if not steps:
        return None, "no action to learn steps from"
    lines = task.strip().splitlines() or [""]
    return (clip(abstract(lines[0]), TITLE_CHARS), steps), ""


def learn_recipe(
    ask: Callable[[str], tuple[str | None, dict[str, Any]]] | None,
    task: str,
    turns: Sequence[ChatMessage],
    request: str,
) -> tuple[Recipe | None, dict[str, Any]]:
    """A recipe from a finished task (`turns`: after its opening): the model's answer to
    `request` through `ask` (`ItemMemoryMethod.ask`), or the rule's when `ask` is None.

    Returns the recipe (None if there is none) and the record of how it was learnt:
    `learnt_by` ("model" or "rule"), the call's `model_calls` and tokens, and `rejected`:
    why there is no recipe.
    """
    if ask is None:
        recipe, problem = rule_recipe(task, turns)
        record: dict[str, Any] = {"learnt_by": "rule", "model_calls": 0}
    else:
        reply, record = ask(finished_task_prompt(task, turns, request, STEPS_FORMAT))
        record = {"learnt_by": "model", **record}
        recipe, problem = (None, record.pop("failed")) if reply is None else parse_steps(reply)
    return recipe, {**record, **({"rejected": problem} if recipe is None else {})}


def render_steps(steps: Sequence[str]) -> str:
    """Steps as numbered lines."""
    return "\n".join(f"{number}. {step}" for number, step in enumerate(steps, start=1))
