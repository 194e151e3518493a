"""Memory items distilled from finished tasks: the prompt that asks for one, its parser.

An item is what ReasoningBank (arXiv 2509.25140) stores: a title, a one-line description
and a content of a few sentences, written by the agent's own model after a task, from a
success (the strategy that worked) or a failure (the pitfall to avoid). The model answers
in a fixed three-field format; anything else yields no item and the reason, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from lifelong_gym.session import ChatMessage, Role
from lifelong_gym.truncation import truncate_middle

from .item_memory import StoredItem

Source = Literal["success", "failure"]
FIELDS = ("title", "description", "content")
LIMITS = {"title": 80, "description": 200, "content": 800}
"""Characters kept of each field; longer text is cut at a word boundary."""
RENDERED_CHARS = sum(LIMITS.values()) + 64
"""The most characters an item takes in a prompt (its fields, the marks of a cut, a label)."""
MESSAGE_CHARS = 1200
"""Characters kept of each reply and observation in the distillation prompt."""
TURNS_KEPT = 8
"""Messages of the trajectory the distillation prompt shows: the last ones, as they end it."""

_ASK = {
    "success": (
        "The judge found your answer correct. Write down the strategy that worked, "
        "so that you can use it on similar tasks."
    ),
    "failure": (
        "The judge found your answer wrong{status}. Write down the pitfall that made it "
        "fail and how to avoid it on similar tasks."
    ),
}
_FORMAT = (
    "Keep it general: no values that only this task has. Answer in exactly this format, "
    "three lines and nothing else:\n"
    "Title: <a few words>\n"
    "Description: <one sentence>\n"
    "Content: <two to four sentences>"
)
PLACEHOLDER = re.compile(r"<[^<>]*>")  # the format's own "<a few words>", echoed back


def label_pattern(*names: str) -> re.Pattern[str]:
    """A line that starts with one of the labels `names` ("Title:"), in any case and with
    markdown around it (`**Title:**`, `- Title:`); group 1 the label, group 2 the rest."""
    return re.compile(rf"^[\s#>*_-]*({'|'.join(names)})[\s*_]*:[\s*_]*(.*)$", re.IGNORECASE)


_LABEL = label_pattern(*FIELDS)


class MemoryItem(StoredItem):
    """One distilled memory, with where it came from and how often it was retrieved."""

    title: str
    description: str
    content: str
    source: Source
    task_index: int
    task: str
    """The task text it was distilled from (retrieval matches new tasks against it too)."""

    def render(self) -> str:
        """The item as prompt text."""
        kind = "a strategy that worked" if self.source == "success" else "a pitfall to avoid"
        return f"### {self.title} ({kind})\n{self.description}\n{self.content}"

    def searchable(self) -> str:
        """The text retrieval ranks the item by: its task, its fields and its skills."""
        return " ".join([self.task, self.title, self.description, self.content, *self.skills])


def distillation_prompt(
    task: str, turns: Sequence[ChatMessage], source: Source, status: str = ""
) -> str:
    """The request for one memory item about a finished task (`turns`: after its opening)."""
    return finished_task_prompt(task, turns, _ASK[source].format(status=ending(status)), _FORMAT)


def ending(status: str) -> str:
    """How a failed task ended, said after "wrong" when it did not simply complete."""
    return f" (it ended as {status})" if status and status != "completed" else ""


def finished_task_prompt(task: str, turns: Sequence[ChatMessage], ask: str, answer: str) -> str:
    """A request about a finished task: the task, the last turns of the attempt (`turns`:
    after its opening), what to write (`ask`) and the format to answer in (`answer`)."""
    shown = [truncate_middle(m.content, MESSAGE_CHARS) for m in turns[-TURNS_KEPT:]]
    who = ["Your reply" if m.role == Role.AGENT else "Observation" for m in turns[-TURNS_KEPT:]]
    lines = [f"{w}:\n{text}" for w, text in zip(who, shown, strict=True)]
    if len(turns) > TURNS_KEPT:
        lines.insert(0, f"({len(turns) - TURNS_KEPT} earlier messages left out)")
    attempt = "\n\n".join(lines) or "(no reply)"
    parts = ["You have just finished this task:", task, "Your attempt:", attempt, ask]
    return "\n\n".join(parts) + "\n" + answer


def memory_item_reply(title: str, description: str, content: str) -> str:
    """An item's fields written in the three-line format the distillation prompt asks for
    (which `parse_memory_item` reads)."""
    return f"Title: {title}\nDescription: {description}\nContent: {content}"


def parse_memory_item(reply: str) -> tuple[dict[str, str] | None, str]:
    """The title, description and content in a model's reply, or None and what was wrong.

    Labels may carry markdown (`**Title:**`, `- Title:`) and any case; the content may run
    over several lines, until the next label. A field that is missing or empty means no item.
    """
    fields = labelled_lines(reply, _LABEL)
    values = {name: " ".join(" ".join(fields.get(name, [])).split()) for name in FIELDS}
    missing = [name for name in FIELDS if not values[name] or PLACEHOLDER.fullmatch(values[name])]
    if missing:
        return None, f"no {', no '.join(missing)} in the reply: {reply[:80]!r}"
    return {name: clip(values[name], LIMITS[name]) for name in FIELDS}, ""


def labelled_lines(reply: str, label: re.Pattern[str]) -> dict[str, list[str]]:
    """The lines of `reply` under each label `label` matches (lower-cased), the label's own
    line first (its text after the colon); a repeated label and code fences are ignored."""
    fields: dict[str, list[str]] = {}
    current: str | None = None
    for line in reply.replace("\r", "").split("\n"):
        found = label.match(line)
        if found and found.group(1).lower() not in fields:
            current = found.group(1).lower()
            fields[current] = [found.group(2)]
        elif current is not None and not line.strip().startswith("```"):
            fields[current].append(line)
    return fields


def clip(text: str, limit: int) -> str:
    """A field cut to `limit` characters at a word boundary, marked when cut (a lesson is
    read as prose, so it loses its end rather than its middle, as `truncate_middle` would)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit].rstrip() + " ..."
