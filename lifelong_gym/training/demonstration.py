"""Demonstrations: the oracle's episodes, played through the real environment, as chat data.

Each episode is what a model would have seen and said: the environment's opening
observation as the user message, every reply as the environment received it, every
observation as the environment returned it (tool messages in the tools format), up to the
last reply (the observation after it is never read by a model). Rows are in TRL's
conversational format, so `datasets.Dataset.from_list(rows)` feeds `trl.SFTTrainer` as it is.

Played through a method that makes a learning request after each task (reasoning memory's
distillation, by rule when no model plays), the request is a demonstration too: the
prompt the method sends, in the chat shape it sends it in, and the reply it kept.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from tqdm.auto import tqdm

from lifelong_gym.methods import Method
from lifelong_gym.methods.item_memory import ItemMemoryMethod, request_messages
from lifelong_gym.registration import make_env
from lifelong_gym.session import to_messages, until_last_reply
from lifelong_gym.tool_calls import with_argument_objects

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Demonstration:
    """One solved episode as chat messages, with the task it solved.

    `messages` are OpenAI-style chat messages (system, user, assistant; in the tools format
    assistant messages with `tool_calls` and `tool` messages answering them). `tools` holds
    the environment's function schemas in the tools format, else nothing. `kind` is "task"
    for an episode, or the name of a method's learning request about the task
    ("distillation": its prompt as the user message, the reply kept as the assistant's).
    """

    messages: list[dict[str, Any]]
    task_index: int
    skills: list[str]
    reward: float
    status: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "task"

    def row(self) -> dict[str, Any]:
        """The demonstration as a dataset row (TRL's conversational format, plus its task).

        Tool-call arguments are objects, as chat templates render them; `tools` is left out
        in the text format.
        """
        row = asdict(self)
        row["messages"] = [with_argument_objects(m) for m in self.messages]
        if not self.tools:
            del row["tools"]
        return row


def demonstrations(
    env_id: str,
    tasks: str | None = None,
    action_format: str = "text",
    *,
    task_indices: Iterable[int] | None = None,
    system_prompt: str | None = None,
    solved_only: bool = True,
    progress: bool = False,
    method: Method | None = None,
    learning_requests: bool = True,
    **env_kwargs: Any,
) -> Iterator[Demonstration]:
    """Play each task's reference solution through `gym.make(env_id, ...)` and yield it.

    `tasks` is the environment's task file or shipped set (its default without it);
    `task_indices` picks tasks by sample index (default: every task, in the set's order).
    `system_prompt`, when given, opens each conversation as the system message an agent
    would send. With `solved_only` (default) an episode the oracle did not solve is left
    out, and the count is logged at the end.

    With a `method`, the tasks are played in order as a stream through it (its `start` before
    each, its `finish` after), so each opening prompt holds what the method inserted there:
    the prompts a run of the method shows, for a model to learn to read them. When the method
    made a learning request after a task (its `exchange`: reasoning memory's distillation),
    that request follows the task's demonstration, unless `learning_requests` is False.
    """
    kwargs = dict(env_kwargs, action_format=action_format)
    if tasks is not None:
        kwargs["tasks"] = tasks
    env = make_env(env_id, kwargs)
    if method is not None:
        method.setup(None, env)
        env = method.as_wrapper(env)
    try:
        base = env.unwrapped
        chosen = list(task_indices) if task_indices is not None else list(base.tasks.order)
        tools = list(base.tools) if action_format == "tools" else []
        unsolved = 0
        for index in tqdm(chosen, desc=f"demonstrations {env_id}", disable=not progress):
            demo = _play(env, base, index, action_format, system_prompt, tools)
            if solved_only and demo.reward < 1.0:
                unsolved += 1
                continue
            yield demo
            request = _request(method, demo) if learning_requests else None
            if request is not None:
                yield request
        if unsolved:
            logger.warning(
                "%s: the oracle did not solve %d of %d tasks; they were left out",
                env_id,
                unsolved,
                len(chosen),
            )
    finally:
        env.close()


def _play(
    env: Any,
    base: Any,
    index: int,
    action_format: str,
    system_prompt: str | None,
    tools: Sequence[dict[str, Any]],
) -> Demonstration:
    """One oracle episode on task `index`, as a `Demonstration`."""
    env.reset(options={"task_index": index})
    task = base.tasks[index]
    session = base.session
    info: dict[str, Any] = {}
    done = False
    while not done:
        reply = task.oracle_reply(session.chat_history, action_format)
        _, _, terminated, truncated, info = env.step(reply)
        done = terminated or truncated
    messages = to_messages(
        until_last_reply(session.chat_history), system_prompt, tool_calls=action_format == "tools"
    )
    return Demonstration(
        messages=messages,
        task_index=index,
        skills=list(task.skills),
        reward=float(session.reward),
        status=str(info.get("status", session.status.value)),
        tools=list(tools),
    )


def _request(method: Method | None, demo: Demonstration) -> Demonstration | None:
    """The learning request `method` made after `demo`'s task, as a demonstration, if any."""
    if not isinstance(method, ItemMemoryMethod) or method.exchange is None:
        return None
    prompt, reply = method.exchange
    return replace(
        demo,
        messages=[*request_messages(prompt), {"role": "assistant", "content": reply}],
        tools=[],
        kind=method.learning,
    )
