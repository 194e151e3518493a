"""The agent's reply format in the OS environment, and its observations."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lifelong_gym.actions import InvalidReply
from lifelong_gym.errors import ActionError  # noqa: F401 - importable here, as before
from lifelong_gym.tool_calls import ToolCall, call_arguments, function_schema

OUTPUT_PREFIX = "The output of the OS:\n\n"
EMPTY_OUTPUT = "The output of the OS is empty."

_ACT = re.compile(r"^\s*Act:\s*(bash|finish|answer\s*\()", re.IGNORECASE | re.MULTILINE)
_ANSWER = re.compile(r"Act:\s*answer\s*\((.*)\)", re.IGNORECASE | re.DOTALL)
_BASH_BLOCK = re.compile(r"```(?:bash|sh|shell)?[ \t]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Action:
    """A parsed reply: run a script, finish, or answer."""

    kind: Literal["bash", "finish", "answer"]
    content: str = ""

    def key(self) -> str:
        """The kind and the content with its white space folded."""
        return f"{self.kind}: {' '.join(self.content.split())}"

    def text(self) -> str:
        """`Act: bash` with the script in a fenced block, `Act: finish` or `Act: answer(...)`."""
        if self.kind == "bash":
            return f"Act: bash\n\n```bash\n{self.content}\n```"
        return "Act: finish" if self.kind == "finish" else f"Act: answer({self.content})"

    def tool_call(self) -> ToolCall:
        """`bash(script)`, `finish()` or `answer(text)`."""
        if self.kind == "bash":
            return ToolCall("bash", {"script": self.content})
        return (
            ToolCall("finish")
            if self.kind == "finish"
            else ToolCall("answer", {"text": self.content})
        )


TOOLS = (
    function_schema(
        "bash", "Run a bash script as root; returns what it printed.", script="the script"
    ),
    function_schema("finish", "Declare the task done."),
    function_schema("answer", "Give the answer, when the task asks a question.", text="the answer"),
)
_TOOL_ARGUMENTS = {"bash": ("script",), "finish": (), "answer": ("text",)}


def from_tool_call(call: ToolCall) -> Action | InvalidReply:
    """The action of a tool call: `bash(script)`, `finish()` or `answer(text)`."""
    expected = _TOOL_ARGUMENTS.get(call.name)
    if expected is None:
        return InvalidReply(f"there is no tool {call.name!r}; the tools are bash, finish, answer")
    values = call_arguments(call, expected)
    if isinstance(values, InvalidReply):
        return values
    content = values[0] if values else ""
    if call.name == "bash" and not content.strip():
        return InvalidReply("`bash` needs a script with commands")
    return Action(call.name, content.strip() if call.name == "answer" else content)


def parse_action(reply: str) -> Action | InvalidReply:
    """Parse a reply: `Act: bash` with fenced bash blocks, `Act: finish`, `Act: answer(...)`."""
    found = _ACT.search(reply)
    if found is None:
        return InvalidReply(
            "the reply has no line `Act: bash`, `Act: finish` or `Act: answer(...)`"
        )
    word = found.group(1).lower()
    if word == "finish":
        return Action("finish")
    if word.startswith("answer"):
        whole = _ANSWER.search(reply, found.start())
        if whole is None:
            return InvalidReply("`Act: answer(` must be closed with `)`")
        return Action("answer", whole.group(1).strip())
    blocks = _BASH_BLOCK.findall(reply, found.end())
    script = "\n".join(block.strip("\n") for block in blocks)
    if not script.strip():
        return InvalidReply("`Act: bash` must be followed by a fenced ```bash block with commands")
    return Action("bash", script)


def format_output(output: str) -> str:
    """The observation for a command's output."""
    return OUTPUT_PREFIX + output if output.strip() else EMPTY_OUTPUT


def observation_output(observation: str) -> str:
    """The command output an observation reports (empty if it reports none)."""
    return observation[len(OUTPUT_PREFIX) :] if observation.startswith(OUTPUT_PREFIX) else ""
