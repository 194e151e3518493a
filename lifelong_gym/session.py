"""Sessions: one task's record, with the benchmark's status and outcome values."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, NamedTuple

from pydantic import BaseModel, Field, field_validator
from pydantic_core import PydanticSerializationError

from lifelong_gym.tool_calls import assistant_message


class SessionStatus(StrEnum):
    """Why a session is where it is (the benchmark's values)."""

    INITIAL = "initial"
    RUNNING = "running"
    COMPLETED = "completed"
    AGENT_VALIDATION_FAILED = "agent_validation_failed"
    TASK_LIMIT_REACHED = "task_limit_reached"
    TASK_ENVIRONMENT_ERROR = "task_environment_error"
    TASK_UNKNOWN_ERROR = "task_unknown_error"
    AGENT_CONTEXT_LIMIT = "agent_context_limit"
    AGENT_OUT_OF_MEMORY = "agent_out_of_memory"
    AGENT_UNKNOWN_ERROR = "agent_unknown_error"


ERROR_STATUSES = frozenset(
    {
        SessionStatus.TASK_ENVIRONMENT_ERROR,
        SessionStatus.TASK_UNKNOWN_ERROR,
        SessionStatus.AGENT_UNKNOWN_ERROR,
    }
)
"""Statuses of a session that an error ended (ours, the environment's, or the user's code:
a callback, a custom agent): no verdict on the agent, so never counted in its success."""

JUDGED_STATUSES = frozenset(
    {
        SessionStatus.COMPLETED,
        SessionStatus.AGENT_VALIDATION_FAILED,
        SessionStatus.TASK_LIMIT_REACHED,
        SessionStatus.AGENT_CONTEXT_LIMIT,
        SessionStatus.AGENT_OUT_OF_MEMORY,
    }
)
"""Statuses the benchmark scores as the agent's own doing: its success is counted over these."""

SETUP_FAILURE_STATUSES = ERROR_STATUSES | {
    SessionStatus.AGENT_CONTEXT_LIMIT,
    SessionStatus.AGENT_OUT_OF_MEMORY,
}
"""Statuses that, many in a row, point at the set-up (a model too small for the prompts, a
server down, a broken callback) rather than at the agent: the run stops after a number of
them in a row (`max_consecutive_failures`)."""


class EvaluationOutcome(StrEnum):
    """The verdict on a finished task (the benchmark's values)."""

    UNSET = "unset"
    CORRECT = "correct"
    INCORRECT = "incorrect"
    UNKNOWN = "unknown"


class Role(StrEnum):
    """Who wrote a chat message: the environment side (user) or the agent."""

    USER = "user"
    AGENT = "agent"


def storable_text(text: str) -> str:
    """`text` as UTF-8 can hold it: each lone surrogate (an agent's junk, never a model's
    text) as U+FFFD, a surrogate pair as its character; other text as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _storable(value: Any) -> Any:
    """`value` with every string in it storable (`storable_text`)."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(item) for item in value]
    return value


class ChatMessage(BaseModel):
    """One message of a session's interaction history; its text is storable as UTF-8 (the
    environment acts on the reply as it was, the history keeps `storable_text` of it)."""

    role: Role
    content: str

    @field_validator("content")
    @classmethod
    def _storable_content(cls, content: str) -> str:
        return storable_text(content)


class ReplyGroup(BaseModel):
    """Replies sampled for one agent turn, each from its own opening prompt, and which of
    them hold the action that was sent (group self-consistency's candidates, for a learner).

    Reply i was generated from `openings[i]` followed by the session's history after its
    opening up to message `turn` (exclusive: the reply's own place). Reply 0 is the agent's
    own: its opening is the session's, read after the agent's system prompt.
    """

    turn: int
    openings: list[str]
    replies: list[str]
    chosen: list[bool]


class OpeningPrompt(NamedTuple):
    """An environment's opening prompt in its two parts: the instructions every task of the
    environment shares, and the task; memory goes between them."""

    instructions: str
    task: str
    separator: str = "\n\n"

    @property
    def text(self) -> str:
        """The prompt as the agent reads it."""
        return f"{self.instructions}{self.separator}{self.task}" if self.instructions else self.task

    @property
    def task_start(self) -> int:
        """Where the task begins in `text`."""
        return len(self.text) - len(self.task)


MEMORY_GAP = "\n\n"
"""What separates inserted memory from the instructions before it and the task after it."""


def with_memory(prompt: str, task_start: int, text: str) -> tuple[str, int]:
    """`prompt` with `text` as a paragraph before its task (which begins at `task_start`),
    and where the task begins then."""
    head = prompt[:task_start].rstrip("\n")
    head = f"{head}{MEMORY_GAP}{text}{MEMORY_GAP}" if head else f"{text}{MEMORY_GAP}"
    return head + prompt[task_start:], len(head)


class Session(BaseModel):
    """A task being worked on, or finished: its history, status, outcome and reward."""

    task_index: int
    skills: list[str] = Field(default_factory=list)
    status: SessionStatus = SessionStatus.INITIAL
    outcome: EvaluationOutcome = EvaluationOutcome.UNSET
    reward: float = 0.0
    chat_history: list[ChatMessage] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    probe: bool = Field(False, exclude=True)
    """A probe of the agent's current state (docs/metrics.md): the methods read their memory
    and write nothing to it; never recorded in the stream (so not persisted)."""
    reply_groups: list[ReplyGroup] = Field(default_factory=list, exclude=True)
    """The reply groups group self-consistency sampled for this task's turns, kept while the
    task is in flight for a learner (online training's grpo mode); not persisted."""
    task_start: int = Field(0, exclude=True)
    """Where the task begins in the opening message, after the environment's instructions
    (and any memory inserted so far): the environment sets it when it writes the prompt."""

    def record(self) -> bytes:
        """The session as one line of JSON; any text UTF-8 cannot hold (a lone surrogate
        that reached the details or the error) is stored as `storable_text` of it."""
        try:
            return self.model_dump_json().encode()
        except PydanticSerializationError:
            storable = Session.model_validate(_storable(self.model_dump()))
            return storable.model_dump_json().encode()

    def add(self, role: Role, content: str) -> None:
        """Append a message to the interaction history."""
        self.chat_history.append(ChatMessage(role=role, content=content))

    def insert_memory(self, text: str, *, title: str = "memory", items: Sequence[str] = ()) -> None:
        """Put `text` into the opening prompt between the environment's instructions and the
        task (after any memory inserted before it), and record where in `details["memory"]`:
        `{"title", "start", "chars"}` (the text's place in the opening prompt) and, when
        given, `"items"`: what the text holds, named as the method names its memory ("task 3",
        "workflow 2"), which report.html tallies against the tasks' outcomes.

        Call it before the agent's first reply (a method's `start`); empty text adds nothing.
        `inserted_memory()` gives the records with their text.
        """
        if not self.chat_history or self.agent_turns:
            raise ValueError("insert_memory needs the opening prompt and no reply yet")
        if not text:
            return
        opening = self.chat_history[0]
        opening.content, self.task_start = with_memory(opening.content, self.task_start, text)
        start = self.task_start - len(MEMORY_GAP) - len(text)
        record: dict[str, Any] = {"title": title, "start": start, "chars": len(text)}
        if items:
            record["items"] = list(items)
        self.details.setdefault("memory", []).append(record)

    def inserted_memory(self) -> list[dict[str, Any]]:
        """What `insert_memory` put into the opening prompt: its records, each with its
        `"text"` read back from the prompt (a record of an earlier version keeps its own)."""
        opening = self.chat_history[0].content if self.chat_history else ""
        return [
            {"text": opening[r["start"] : r["start"] + r["chars"]], **r} if "start" in r else r
            for r in self.details.get("memory", ())
        ]

    @property
    def task_text(self) -> str:
        """The opening prompt's task, without the instructions and inserted memory."""
        return self.chat_history[0].content[self.task_start :] if self.chat_history else ""

    @property
    def agent_turns(self) -> int:
        """How many replies the agent has given so far."""
        return sum(1 for m in self.chat_history if m.role == Role.AGENT)

    @property
    def finished(self) -> bool:
        """Whether the session has left the initial and running states."""
        return self.status not in (SessionStatus.INITIAL, SessionStatus.RUNNING)

    @property
    def errored(self) -> bool:
        """Whether an error ended the session (`ERROR_STATUSES`): it judges nothing."""
        return self.status in ERROR_STATUSES

    @property
    def solved(self) -> bool:
        """Whether the agent solved the task: a correct outcome of a session no error ended
        (a callback that raised after a correct answer leaves the outcome correct)."""
        return self.outcome == EvaluationOutcome.CORRECT and not self.errored


_CHAT_ROLES = {Role.USER: "user", Role.AGENT: "assistant"}


def until_last_reply(history: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The history up to the agent's last reply: what a model took part in (the observation
    after the last reply is never read by it)."""
    history = list(history)
    while history and history[-1].role != Role.AGENT:
        history.pop()
    return history


def to_messages(
    history: Sequence[ChatMessage], system_prompt: str | None = None, *, tool_calls: bool = False
) -> list[dict[str, Any]]:
    """A chat history as OpenAI-style messages (user / assistant), after an optional system one.

    With `tool_calls` (an environment with `action_format="tools"`), an agent turn holding
    one valid call becomes an assistant message with `tool_calls`, and the observation after
    it a `tool` message answering the call's id; other turns stay plain text.
    """
    messages: list[dict[str, Any]] = (
        [{"role": "system", "content": system_prompt}] if system_prompt else []
    )
    open_call: str | None = None  # the id of the call whose result comes next
    for turn, message in enumerate(history):
        if open_call is not None and message.role == Role.USER:
            messages.append({"role": "tool", "tool_call_id": open_call, "content": message.content})
            open_call = None
            continue
        call = None
        if tool_calls and message.role == Role.AGENT:
            call = assistant_message(message.content, f"call_{turn}")
        if call is not None:
            messages.append(call)
            open_call = call["tool_calls"][0]["id"]
        else:
            messages.append({"role": _CHAT_ROLES[message.role], "content": message.content})
            open_call = None
    return messages
