"""OS task records, and converters from the benchmark's and AgentBench's formats."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from lifelong_gym.envs.os.actions import Action, observation_output
from lifelong_gym.envs.os.skills import TAXONOMY
from lifelong_gym.session import ChatMessage, Role
from lifelong_gym.skill_tables import SkillTaxonomy
from lifelong_gym.tasks import Task, TaskSet, load_task_set

CHECKER_KINDS = ("integer-match", "string-match", "size-match", "containing", "in")
Language = Literal["bash", "python"]
_SWITCHES_USER = re.compile(r"(^|[;&|]\s*)su(\s+-)?(\s+\w+)?\s*$|\bsu\s+-", re.MULTILINE)
_PROCESS_LIST = re.compile(r"(^|[|;&(`$\s])(ps|pgrep|top|who)(\s|$)", re.MULTILINE)
_DOWNLOADS = re.compile(r"\b(apt|apt-get|pip3?|curl|wget)\s+(install|update|http)")


class ScriptItem(BaseModel):
    """A script and the language it runs in (the benchmark's command item)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    language: Language = "bash"
    script: str


class Checker(BaseModel):
    """One step of an AgentBench check: a named comparison, the example, or a script.

    `example` runs the reference solution and adds its output to the arguments;
    a named kind compares the agent's answer with the last argument; `script` runs in
    the container with the arguments and must exit 0.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["example", "script", "integer-match", "string-match", "size-match",
                  "containing", "in"]  # fmt: skip
    script: ScriptItem | None = None


class AnswerCheck(BaseModel):
    """How an answer task (AgentBench) is judged: an expected string, or a checker chain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    match: str | None = None
    checkers: tuple[Checker, ...] = ()


class OSTask(Task):
    """An OS task: set up the container, let the agent work, run the evaluation.

    Benchmark tasks succeed when `evaluation` exits 0; AgentBench tasks carry an
    `answer_check` instead. `ground_truth` is the reference solution the oracle replays.
    """

    taxonomy: ClassVar[SkillTaxonomy] = TAXONOMY

    instruction: str
    initialization: ScriptItem | None = None
    background: str | None = None  # a program started after initialization (AgentBench)
    evaluation: ScriptItem | None = None
    ground_truth: ScriptItem | None = None
    answer_check: AnswerCheck | None = None
    source: str = "lifelong-gym"
    image: str | None = None  # the image the task is set up on (Harbor's FROM); None: any

    def oracle_action(self, history: Sequence[ChatMessage]) -> Action:
        """Run the reference solution, then finish (or answer with what it printed)."""
        turn = sum(1 for message in history if message.role == Role.AGENT)
        check = self.answer_check
        if check is not None and check.match is not None and self.ground_truth is None:
            return Action("answer", check.match)
        if turn == 0 and self.ground_truth is not None:
            return Action("bash", solution_bash(self.ground_truth))
        if check is None:
            return Action("finish")
        if check.match is not None:
            return Action("answer", check.match)
        last = history[-1].content if history else ""
        return Action("answer", observation_output(last).strip())


def solution_bash(item: ScriptItem) -> str:
    """A script item as bash text an agent could send."""
    if item.language == "python":
        return f"python3 - <<'LIFELONG_GYM_PY'\n{item.script}\nLIFELONG_GYM_PY"
    return item.script


# -- the benchmark's own format ---------------------------------------------------------


def from_benchmark(key: str, record: dict[str, Any]) -> OSTask:
    """Convert one record of the benchmark's `os_interaction` subset."""
    info = record["evaluation_info"]
    return OSTask(
        index=int(record.get("sample_index", key)),
        skills=tuple(record.get("skill_list") or ()),
        instruction=record["instruction"],
        initialization=_command_item(record.get("initialization_command_item")),
        evaluation=_command_item(info["evaluation_command_item"]),
        ground_truth=_command_item(info.get("ground_truth_command_item")),
        source="benchmark",
    )


def _command_item(item: dict[str, Any] | None) -> ScriptItem | None:
    if not item or not item.get("script"):
        return None
    language = item.get("command_name", "bash")
    if language not in ("bash", "python"):
        raise ValueError(f"command_name {language!r}: the image has no compiler for it")
    return ScriptItem(language=language, script=item["script"])


# -- AgentBench's OS tasks --------------------------------------------------------------


def from_agentbench(key: str, record: dict[str, Any]) -> OSTask:
    """Convert one AgentBench OS task; raises ValueError naming what is out of scope."""
    create = record.get("create") or {}
    if not isinstance(create, dict):
        raise ValueError("`create` is not an object")
    if create.get("local", "default") not in ("default", None):
        raise ValueError(f"needs AgentBench's {create['local']!r} image")
    init = _agentbench_code(create.get("init"), "init")
    if init is not None and _SWITCHES_USER.search(init.script):
        raise ValueError("init switches the shell's user (su), which needs AgentBench's session")
    if init is not None and _DOWNLOADS.search(init.script):
        raise ValueError("init downloads packages, but containers have no network by default")
    evaluation = record.get("evaluation") or {}
    example = _agentbench_code(evaluation.get("example", record.get("example")), "example")
    if example is not None and _PROCESS_LIST.search(example.script):
        raise ValueError("the answer counts live processes, which the checker's shell changes")
    if "match" in evaluation:
        check = AnswerCheck(match=str(evaluation["match"]))
    elif "check" in evaluation:
        check = AnswerCheck(checkers=_agentbench_checkers(evaluation["check"], example))
    else:
        raise ValueError("evaluation has neither `match` nor `check`")
    labels = record.get("labels") or ()
    return OSTask(
        index=int(key),
        skills=tuple(labels),
        instruction=str(record["description"]),
        initialization=init,
        background=record.get("start") or None,
        ground_truth=example,
        answer_check=check,
        source="agentbench",
    )


def _agentbench_code(item: Any, what: str) -> ScriptItem | None:
    if item is None:
        return None
    if isinstance(item, str):
        return ScriptItem(script=item)
    if isinstance(item, list):
        parts = [_agentbench_code(part, what) for part in item]
        scripts = [p for p in parts if p is not None]
        if any(p.language != "bash" for p in scripts):
            raise ValueError(f"{what} mixes languages")
        return ScriptItem(script="\n".join(p.script for p in scripts)) if scripts else None
    if isinstance(item, dict):
        if "file" in item:
            raise ValueError(f"{what} names a file of AgentBench's ({item['file']}) we do not have")
        language = item.get("language", "bash")
        if language not in ("bash", "python"):
            raise ValueError(f"{what} is in {language!r}")
        return ScriptItem(language=language, script=str(item["code"]))
    raise ValueError(f"{what} has an unknown shape ({type(item).__name__})")


def _agentbench_checkers(check: Any, example: ScriptItem | None) -> tuple[Checker, ...]:
    steps = check if isinstance(check, list) else [check]
    checkers = []
    for step in steps:
        if step is None:
            if example is None:
                raise ValueError("check runs the example, but the task has none")
            checkers.append(Checker(kind="example"))
            continue
        if isinstance(step, dict) and "file" in step:
            kind = Path(str(step["file"])).stem
            if not str(step["file"]).startswith("check/") or kind not in CHECKER_KINDS:
                raise ValueError(f"checker file {step['file']} is not one we have")
            checkers.append(Checker(kind=kind))
            continue
        checkers.append(Checker(kind="script", script=_agentbench_code(step, "check")))
    return tuple(checkers)


def convert_record(key: str, record: dict[str, Any]) -> OSTask:
    """Convert a record of any supported OS format (ours, the benchmark's, AgentBench's)."""
    if "evaluation_info" in record:
        return from_benchmark(key, record)
    if "description" in record and "evaluation" in record:
        return from_agentbench(key, record)
    if "instruction" in record:
        fields = {k: v for k, v in record.items() if k != "index"}
        return OSTask.model_validate({"index": int(record.get("index", key)), **fields})
    raise ValueError("not an OS task record (no instruction, description or evaluation_info)")


def load_os_tasks(source: str | Path | None = None) -> TaskSet[OSTask]:
    """Load a shipped OS task set by name, or a task file of any supported format."""
    return load_task_set(source, environment="os", default="default", convert=convert_record)
