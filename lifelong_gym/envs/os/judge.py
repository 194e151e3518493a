"""Setting up an OS task in a sandbox, and judging it (evaluation script or AgentBench checks)."""

from __future__ import annotations

import re

from lifelong_gym.envs.os.backends.sandbox import Sandbox
from lifelong_gym.envs.os.backends.shell import CommandResult, Mode
from lifelong_gym.envs.os.tasks import OSTask, ScriptItem

SETUP_TIMEOUT = 60.0
CHECK_OUTPUT_LIMIT = 1_000_000
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*$")
_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20,
          "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}  # fmt: skip


def prepare(sandbox: Sandbox, task: OSTask) -> None:
    """Run the task's initialization script, then start its background program if any;
    then restrict the agent's shell to its programs, if the sandbox's limits say so. The
    judge's shell ends before the agent's first command (`Sandbox.release_judge`)."""
    if task.initialization is not None:
        item = task.initialization
        mode = Mode.PYTHON if item.language == "python" else Mode.DETACHED
        result = sandbox.run(item.script, mode, timeout=SETUP_TIMEOUT, limit=10_000)
        if result.timed_out or result.shell_lost:
            raise RuntimeError(f"the initialization of task {task.index} did not finish")
    if task.background:
        # Started in the background, as AgentBench does; a short one (`mkdir ... && cd ...`)
        # is given up to a second to finish, so the agent's first command does not race it.
        script = (
            f"({task.background}) >/dev/null 2>&1 & started=$!; "
            "for _ in $(seq 20); do kill -0 $started 2>/dev/null || break; sleep 0.05; done"
        )
        sandbox.run(script, Mode.DETACHED, timeout=SETUP_TIMEOUT, limit=10_000)
    if sandbox.limits.restrict_commands:
        sandbox.restrict_agent()
    sandbox.remember_task_processes()
    sandbox.release_judge()  # none runs beside the agent's commands


def judge(sandbox: Sandbox, task: OSTask, answer: str | None) -> bool:
    """Whether the task is solved: its evaluation exits 0, or the answer passes its checks.

    Every process the agent started is ended first, so none can interfere; the judge runs
    toolset programs only. A check that did not finish (time limit, killed) fails.
    SandboxError when the container stopped before the verdict was read: "wrong" is then
    no verdict on the agent's work.
    """
    sandbox.end_agent()
    verdict = _verdict(sandbox, task, answer)
    sandbox.ensure_running()
    return verdict


def _verdict(sandbox: Sandbox, task: OSTask, answer: str | None) -> bool:
    check = task.answer_check
    if check is None:
        if task.evaluation is None:
            raise ValueError(f"task {task.index} has no evaluation")
        return _run(sandbox, task.evaluation, Mode.BASH_C).exit_code == 0
    if check.match is not None:
        return answer is not None and answer.strip() == check.match.strip()
    arguments = [answer or ""]
    for checker in check.checkers:
        if checker.kind == "example":
            assert task.ground_truth is not None
            example = _run(sandbox, _quiet(task.ground_truth), Mode.BASH_C)
            if example.exit_code is None:  # no expected answer to compare with
                return False
            arguments.append(example.output)
        elif checker.kind == "script":
            assert checker.script is not None
            if _run(sandbox, checker.script, Mode.BASH_C, tuple(arguments)).exit_code != 0:
                return False
        elif answer is None or not compare_answer(checker.kind, answer, arguments[-1]):
            return False
    return True


def _run(
    sandbox: Sandbox, item: ScriptItem, mode: Mode, args: tuple[str, ...] = ()
) -> CommandResult:
    mode = Mode.PYTHON if item.language == "python" else mode
    return sandbox.run_judged(
        item.script, mode, timeout=SETUP_TIMEOUT, limit=CHECK_OUTPUT_LIMIT, args=args
    )


def _quiet(item: ScriptItem) -> ScriptItem:
    """The item with its error output dropped: the expected answer is what it prints, not
    warnings such as `find` reporting processes that exited during its walk of /proc."""
    if item.language == "python":
        return ScriptItem(
            language="python",
            script=f"import os\nos.dup2(os.open(os.devnull, os.O_WRONLY), 2)\n{item.script}",
        )
    return ScriptItem(script=f"exec 2>/dev/null\n{item.script}")


def compare_answer(kind: str, answer: str, expected: str) -> bool:
    """AgentBench's checker kinds: integer, string, size, containing, membership."""
    answer, expected = answer.strip(), expected.strip()
    if kind == "integer-match":
        try:
            return int(answer) == int(expected)
        except ValueError:
            return False
    if kind == "string-match":
        return answer == expected
    if kind == "size-match":
        return _size(answer) is not None and _size(answer) == _size(expected)
    if kind == "containing":
        return expected in answer
    if kind == "in":
        return answer in expected
    raise ValueError(f"unknown checker kind {kind!r}")


def _size(text: str) -> float | None:
    found = _SIZE.match(text)
    if found is None or found.group(2).lower() not in _UNITS:
        return None
    return float(found.group(1)) * _UNITS[found.group(2).lower()]
