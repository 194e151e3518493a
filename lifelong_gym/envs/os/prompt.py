"""The opening prompt of an OS task: how to act, one worked example, then the task."""

from __future__ import annotations

from lifelong_gym.session import OpeningPrompt

INSTRUCTIONS = """You are working as root in a Linux (Debian) shell, to do the task given below.
Each of your replies does exactly one of these things, named on a line of its own:

1. Run commands: write `Act: bash`, then the commands in one or more fenced blocks
   ```bash
   ...
   ```
   The blocks run together as one script; you then see what they printed.
2. Declare the task done: write `Act: finish`.
3. Give an answer, when the task asks a question: write `Act: answer(YOUR ANSWER)`.

You may think before acting on a line starting with `Think:`. A reply without one of the
three actions ends the task. Commands that run too long are stopped, and very long output
is shortened. Do not wait for input from a person: nobody will type anything.

A worked example.
Task: How many entries are in the directory /etc/skel?
Your reply:
Think: I will count them with ls, including hidden ones.
Act: bash
```bash
ls -A /etc/skel | wc -l
```
Then you see:
The output of the OS:

3
Your next reply:
Think: The directory holds 3 entries.
Act: answer(3)

Now the task."""


TOOL_INSTRUCTIONS = """You are working as root in a Linux (Debian) shell, to do the task below.
Each of your turns makes exactly one of these tool calls:

1. `bash(script)`: run the commands of `script` as one bash script; you then see what they
   printed.
2. `finish()`: declare the task done.
3. `answer(text)`: give your answer, when the task asks a question.

You may think before the call. A turn without a tool call ends the task. Commands that run
too long are stopped, and very long output is shortened. Do not wait for input from a
person: nobody will type anything.

A worked example.
Task: How many entries are in the directory /etc/skel?
Turn 1: bash(script="ls -A /etc/skel | wc -l")
Result: The output of the OS:

3
Turn 2: answer(text="3")

Now the task."""


def opening_prompt(instruction: str, action_format: str = "text") -> OpeningPrompt:
    """The first message of a task: the action formats, the example, then `instruction`."""
    instructions = TOOL_INSTRUCTIONS if action_format == "tools" else INSTRUCTIONS
    return OpeningPrompt(instructions, f"Task: {instruction}")
