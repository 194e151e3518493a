"""`lifelong-gym export harbor`: each OS task written as a Harbor task folder.

    OUT/lifelong-os-0007/
        instruction.md          the task's instruction
        task.toml               the sandbox's limits, the judge's time limit, index and skills
        environment/Dockerfile  FROM the offline OS image, then the task's initialization
        environment/setup.sh    (or setup.py) that initialization
        tests/test.sh           the judge: the evaluation script, reward 1 when it exits 0,
        tests/evaluate.sh       written to /logs/verifier/reward.txt
        solution/solve.sh       the reference solution (Harbor's oracle agent runs it)

Nothing of tests/ is in the image: Harbor copies the folder into the container after the
agent's turn, so the agent never reads or changes the judge. Tasks judged by the agent's
answer (AgentBench's) or with a background program are left out, each with its reason:
Harbor's agents hand in no answer, and a Dockerfile starts no program that outlives its
build.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from lifelong_gym.envs.os.backends.oci.sandbox import memory_bytes
from lifelong_gym.envs.os.backends.sandbox import Limits
from lifelong_gym.envs.os.harbor.tasks import (
    DOCKERFILE,
    INSTRUCTION_FILE,
    REWARD_FILE,
    SOLUTION_SCRIPT,
    TASK_FILE,
    TEST_SCRIPT,
    VERIFIER_LOGS,
)
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.judge import SETUP_TIMEOUT
from lifelong_gym.envs.os.tasks import OSTask, load_os_tasks, solution_bash
from lifelong_gym.errors import ConfigError
from lifelong_gym.tasks import SkippedRecord

AGENT_TIMEOUT = 600.0  # Harbor's default; the environment's limit is turns, not seconds
SHEBANG = "#!/bin/bash\n"


@dataclass(frozen=True)
class HarborExport:
    """What an export wrote: the folder, the task folders in it, the tasks left out."""

    folder: Path
    written: int
    skipped: tuple[SkippedRecord, ...]


def export_harbor(
    tasks: str | None, out: str | Path, *, image: str = DEFAULT_IMAGE, overwrite: bool = False
) -> HarborExport:
    """Write every OS task of `tasks` (a task file or shipped set) as a Harbor task folder."""
    task_set = load_os_tasks(tasks)
    folder = Path(out).expanduser()
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"--out {folder} is a file; give a folder")
    existing = [folder / task_folder_name(t.index) for t in task_set]
    existing = [target for target in existing if target.exists()]
    if existing and not overwrite:  # checked before anything is written
        raise ConfigError(f"{existing[0]} exists; pass --overwrite or another --out")
    skipped = list(task_set.skipped)
    written = 0
    for task in task_set:
        target = folder / task_folder_name(task.index)
        try:
            files = task_files(task, image)
        except ValueError as error:
            skipped.append(SkippedRecord(str(task.index), str(error)))
            continue
        if target.exists():
            shutil.rmtree(target)
        for name, (text, mode) in files.items():
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            path.chmod(mode)
        written += 1
    if not written:
        reasons = "; ".join(f"{s.key}: {s.reason}" for s in skipped[:3])
        raise ConfigError(f"no task of {tasks or 'default'} can be a Harbor task ({reasons})")
    return HarborExport(folder, written, tuple(skipped))


def task_folder_name(index: int) -> str:
    """The folder (and Harbor task name) of the task with this sample index."""
    return f"lifelong-os-{index:04d}"


def task_files(task: OSTask, image: str) -> dict[str, tuple[str, int]]:
    """The task folder's files (text and mode) by relative path; ValueError if it has none."""
    if task.answer_check is not None:
        raise ValueError("judged by the agent's answer, which Harbor's agents do not hand in")
    if task.background:
        raise ValueError("starts a background program, which a Dockerfile cannot keep running")
    if task.evaluation is None:
        raise ValueError("has no evaluation script")
    files = {
        INSTRUCTION_FILE: (task.instruction.rstrip() + "\n", 0o644),
        TASK_FILE: (_task_toml(task), 0o644),
        DOCKERFILE: (_dockerfile(task, image), 0o644),
        TEST_SCRIPT: (_test_script(task), 0o755),
    }
    evaluation = task.evaluation
    files[f"tests/{_script_name('evaluate', evaluation.language)}"] = (evaluation.script, 0o644)
    if task.initialization is not None:
        setup = task.initialization
        files[f"environment/{_script_name('setup', setup.language)}"] = (setup.script, 0o644)
    if task.ground_truth is not None:
        solution = SHEBANG + f"# The reference solution of OS task {task.index}.\n"
        files[SOLUTION_SCRIPT] = (solution + solution_bash(task.ground_truth) + "\n", 0o755)
    return files


def _script_name(stem: str, language: str) -> str:
    return f"{stem}.py" if language == "python" else f"{stem}.sh"


def _runner(language: str) -> str:
    return "python3" if language == "python" else "bash"


def _task_toml(task: OSTask) -> str:
    limits = Limits()
    return f"""schema_version = "1.4"
source = "lifelong-gym"

[metadata]
sample_index = {task.index}
skills = {json.dumps(list(task.skills))}
category = "operating-system"
origin = {json.dumps(task.source)}

[agent]
timeout_sec = {AGENT_TIMEOUT}

[verifier]
timeout_sec = {SETUP_TIMEOUT}

[environment]
cpus = {limits.cpus:g}
memory_mb = {memory_bytes(limits.memory) >> 20}
storage_mb = {memory_bytes(limits.storage or "10g") >> 20}
network_mode = "{"public" if limits.network else "no-network"}"
"""


def _dockerfile(task: OSTask, image: str) -> str:
    lines = [
        f"# OS task {task.index} of lifelong-gym: the offline OS image (`lifelong-gym build-image",
        "# os`) and the task's initialization. No test is in the image.",
        f"FROM {image}",
        "WORKDIR /root",
    ]
    if task.initialization is not None:
        name = _script_name("setup", task.initialization.language)
        runner = _runner(task.initialization.language)
        lines += [
            f"COPY {name} /tmp/lifelong-gym-{name}",
            f"RUN {runner} /tmp/lifelong-gym-{name} && rm -f /tmp/lifelong-gym-{name}",
        ]
    return "\n".join(lines) + "\n"


def _test_script(task: OSTask) -> str:
    assert task.evaluation is not None
    name = _script_name("evaluate", task.evaluation.language)
    return SHEBANG + (
        f"# The judge of OS task {task.index}: its evaluation script; reward 1 when it exits 0.\n"
        "# Harbor copies tests/ into the container after the agent's turn.\n"
        f"mkdir -p {VERIFIER_LOGS}\n"
        f"if {_runner(task.evaluation.language)} /tests/{name} </dev/null; then\n"
        f"    echo 1 > {REWARD_FILE}\n"
        "else\n"
        f"    echo 0 > {REWARD_FILE}\n"
        "fi\n"
    )
