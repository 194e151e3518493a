"""Harbor task folders read as OS tasks, so a Harbor dataset becomes a lifelong stream.

A Harbor task is a folder: `instruction.md`, `task.toml` (limits and metadata),
`environment/Dockerfile` (the container the agent works in), `tests/test.sh` (run after
the agent's turn; it writes the reward to /logs/verifier/reward.txt) and, optionally,
`solution/solve.sh`. Read here as an `OSTask` on the environment's own image:

- the Dockerfile's instructions after `FROM` become the initialization script (RUN, COPY
  and ADD of files in `environment/`, WORKDIR; LABEL, EXPOSE, CMD and the like change no
  file and are left out); anything else, or a second stage, skips the task with the reason;
- the evaluation writes `tests/` into /tests, runs `test.sh` in the judge's shell and
  passes when the reward file holds 1 or more, so the tests reach the container only
  after the agent's turn, as in Harbor;
- the reference solution writes `solution/` into /solution and runs `solve.sh`.

The task's `image` is the Dockerfile's `FROM`; the environment refuses tasks whose image is
not its own (`image=`), since it runs every task on one image.
"""

from __future__ import annotations

import base64
import json
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lifelong_gym.envs.os.tasks import OSTask, ScriptItem
from lifelong_gym.errors import TaskFileError
from lifelong_gym.tasks import SkippedRecord, TaskSet, report_skipped

TASK_FILE = "task.toml"
INSTRUCTION_FILE = "instruction.md"
DOCKERFILE = "environment/Dockerfile"
TEST_SCRIPT = "tests/test.sh"
SOLUTION_SCRIPT = "solution/solve.sh"
VERIFIER_LOGS = "/logs/verifier"
REWARD_FILE = f"{VERIFIER_LOGS}/reward.txt"
REWARD_JSON = f"{VERIFIER_LOGS}/reward.json"
IMAGE_WORKDIR = "/root"  # the OS image's working directory (image.py)
MAX_FILES_BYTES = 4 << 20  # files embedded in one task's scripts
_IGNORED = {"LABEL", "EXPOSE", "CMD", "ENTRYPOINT", "MAINTAINER", "STOPSIGNAL", "HEALTHCHECK"}
_END = "LIFELONG_GYM_FILE_END"
_REWARD_CHECK = f"""\
if [ -f {REWARD_FILE} ]; then
    awk 'NR == 1 {{ solved = ($1 + 0 >= 1) }} END {{ exit !solved }}' {REWARD_FILE}
elif [ -f {REWARD_JSON} ]; then
    python3 -c 'import json, sys
reward = json.load(open(sys.argv[1]))
reward = reward.get("reward", 0) if isinstance(reward, dict) else reward
sys.exit(0 if float(reward) >= 1 else 1)' {REWARD_JSON}
else
    exit 1
fi"""


def load_harbor_tasks(path: str | Path) -> TaskSet[OSTask]:
    """The OS tasks of a Harbor task folder, or of a folder of them (in name order).

    A task's sample index is `metadata.sample_index` of its `task.toml` when every task has
    a distinct one (as `lifelong-gym export harbor` writes), else its position.
    """
    root = Path(path).expanduser()
    if not root.is_dir():
        raise TaskFileError(f"{root} is not a folder of Harbor tasks")
    folders = [root] if (root / TASK_FILE).is_file() else _subfolders(root)
    folders = [f for f in folders if (f / TASK_FILE).is_file()]
    if not folders:
        raise TaskFileError(f"{root} holds no Harbor task folder (a folder with {TASK_FILE})")
    configs: list[dict[str, Any]] = []
    for folder in folders:
        try:
            configs.append(tomllib.loads((folder / TASK_FILE).read_text(encoding="utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise TaskFileError(f"{folder / TASK_FILE} is not TOML: {error}") from None
    indices = [c.get("metadata", {}).get("sample_index") for c in configs]
    if not all(isinstance(i, int) for i in indices) or len(set(indices)) != len(indices):
        indices = list(range(len(folders)))
    tasks, skipped = [], []
    for index, folder, config in zip(indices, folders, configs, strict=True):
        try:
            tasks.append(read_task_folder(folder, index, config))
        except ValueError as error:
            skipped.append(SkippedRecord(folder.name, str(error)))
    report_skipped(root, len(tasks), skipped)
    if not tasks:
        reasons = "; ".join(f"{s.key}: {s.reason}" for s in skipped[:3])
        raise TaskFileError(f"{root} holds no Harbor task this environment can run ({reasons})")
    return TaskSet(tasks, name=str(root), skipped=skipped, source=root.resolve())


def _subfolders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir())


def read_task_folder(folder: Path, index: int, config: dict[str, Any]) -> OSTask:
    """One Harbor task folder as an OS task; ValueError says why it cannot be one."""
    for name in (INSTRUCTION_FILE, TEST_SCRIPT):
        if not (folder / name).is_file():
            raise ValueError(f"no {name}")
    prebuilt = config.get("environment", {}).get("docker_image")
    if (folder / DOCKERFILE).is_file():
        image, setup, workdir = translate_dockerfile(folder / "environment")
    elif isinstance(prebuilt, str):  # a prebuilt image, set up already
        image, setup, workdir = prebuilt, _setup_start(), IMAGE_WORKDIR
    else:
        raise ValueError(f"neither {DOCKERFILE} nor environment.docker_image")
    tests = folder_files(folder / "tests", "/tests")
    solution = None
    if (folder / SOLUTION_SCRIPT).is_file():
        solution = folder_files(folder / "solution", "/solution")
    if sum(len(file.data) for file in [*tests, *(solution or [])]) > MAX_FILES_BYTES:
        raise ValueError(f"tests/ and solution/ hold more than {MAX_FILES_BYTES >> 20} MiB")
    metadata = config.get("metadata", {})
    skills = metadata.get("skills", metadata.get("tags", ()))
    evaluation = "\n".join(
        [
            f"rm -rf /tests {VERIFIER_LOGS} && mkdir -p /tests {VERIFIER_LOGS}",
            write_files(tests),
            f"cd {shlex.quote(workdir)}",
            "bash /tests/test.sh >/dev/null 2>&1",
            _REWARD_CHECK,
        ]
    )
    ground_truth = None
    if solution is not None:
        ground_truth = "\n".join(
            [write_files(solution), f"cd {shlex.quote(workdir)}", "bash /solution/solve.sh"]
        )
    return OSTask(
        index=index,
        skills=tuple(str(s) for s in skills) if isinstance(skills, list) else (),
        instruction=(folder / INSTRUCTION_FILE).read_text(encoding="utf-8").strip(),
        initialization=ScriptItem(script=setup),
        evaluation=ScriptItem(script=evaluation),
        ground_truth=ScriptItem(script=ground_truth) if ground_truth else None,
        source="harbor",
        image=image,
    )


def translate_dockerfile(context: Path) -> tuple[str, str, str]:
    """The Dockerfile's base image, its other instructions as a bash script, and the
    working directory it ends in; ValueError names an instruction that cannot be run so."""
    lines = [_setup_start()]
    image, workdir = None, IMAGE_WORKDIR
    for keyword, argument in _instructions((context / "Dockerfile").read_text(encoding="utf-8")):
        if keyword == "FROM":
            if image is not None:
                raise ValueError("the Dockerfile has several stages")
            words = argument.split()
            if not words or words[0].startswith("--"):
                raise ValueError(f"FROM {argument}: give the image alone")
            image = words[0]
        elif image is None:
            raise ValueError(f"{keyword} comes before FROM")
        elif keyword == "RUN":
            lines.append(f"sh -c {shlex.quote(_shell_form(argument, keyword))}")
        elif keyword in ("COPY", "ADD"):
            lines.append(write_files(_copied(context, keyword, argument, workdir)))
        elif keyword == "WORKDIR":
            workdir = str(Path(workdir, argument.strip()))
            lines.append(f"mkdir -p {shlex.quote(workdir)} && cd {shlex.quote(workdir)}")
        elif keyword not in _IGNORED:
            raise ValueError(
                f"{keyword} in the Dockerfile is not supported (RUN, COPY, WORKDIR are)"
            )
    if image is None:
        raise ValueError("the Dockerfile has no FROM")
    return image, "\n".join(lines), workdir


def _setup_start() -> str:
    """What every setup begins with: Harbor's log folders, stop at the first failure."""
    return f"mkdir -p /logs/agent {VERIFIER_LOGS}\nset -e\ncd {IMAGE_WORKDIR}"


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, argument) per instruction: comments dropped, continuation lines joined."""
    instructions, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        keyword, _, argument = (pending + line).strip().partition(" ")
        instructions.append((keyword.upper(), argument.strip()))
        pending = ""
    if pending:
        raise ValueError("the Dockerfile ends inside a continued line")
    return instructions


def _shell_form(argument: str, keyword: str) -> str:
    """A RUN argument as one shell command (the exec form's words quoted)."""
    if argument.startswith("--"):
        raise ValueError(f"{keyword} {argument.split()[0]} is not supported")
    if argument.startswith("["):
        try:
            words = json.loads(argument)
        except json.JSONDecodeError:
            return argument
        return shlex.join(str(word) for word in words)
    return argument


def _copied(context: Path, keyword: str, argument: str, workdir: str) -> list[FileCopy]:
    """The files a COPY or ADD puts into the image."""
    mode = None
    words = json.loads(argument) if argument.startswith("[") else shlex.split(argument)
    while words and words[0].startswith("--"):
        flag = words.pop(0)
        if not flag.startswith("--chmod="):
            raise ValueError(f"{keyword} {flag} is not supported")
        mode = int(flag.partition("=")[2], 8)
    if len(words) < 2:
        raise ValueError(f"{keyword} {argument}: a source and a destination are needed")
    *sources, target = words
    target = str(Path(workdir, target)) + ("/" if target.endswith("/") else "")
    into_folder = target.endswith("/") or len(sources) > 1
    files: list[FileCopy] = []
    root = context.resolve()
    for source in sources:
        if "://" in source or any(c in source for c in "*?["):
            raise ValueError(f"{keyword} {source}: only files of environment/ by name")
        if keyword == "ADD" and source.endswith((".tar", ".gz", ".tgz", ".xz", ".bz2")):
            raise ValueError(f"ADD {source}: archives are unpacked by Docker, not here")
        path = (context / source).resolve()
        if not path.is_relative_to(root) or not path.exists():
            raise ValueError(f"{keyword} {source}: not a file in environment/")
        if path.is_dir():
            files += folder_files(path, target)
        else:
            into = f"{target.rstrip('/')}/{path.name}" if into_folder else target
            files.append(FileCopy(into, path.read_bytes(), path.stat().st_mode & 0o777))
    if mode is not None:
        files = [FileCopy(f.path, f.data, mode) for f in files]
    return files


@dataclass(frozen=True)
class FileCopy:
    """A file a script writes: where, what, and its permission bits."""

    path: str
    data: bytes
    mode: int = 0o644


def folder_files(folder: Path, target: str) -> list[FileCopy]:
    """Every file under `folder`, placed under `target`."""
    return [
        FileCopy(
            f"{target.rstrip('/')}/{path.relative_to(folder).as_posix()}",
            path.read_bytes(),
            path.stat().st_mode & 0o777,
        )
        for path in sorted(p for p in folder.rglob("*") if p.is_file())
    ]


def write_files(files: list[FileCopy]) -> str:
    """Bash that writes each file, creating its folder."""
    lines = []
    for file in files:
        quoted = shlex.quote(file.path)
        encoded = base64.encodebytes(file.data).decode("ascii")
        lines.append(f'mkdir -p "$(dirname {quoted})"')
        lines.append(f"base64 -d > {quoted} <<'{_END}'\n{encoded}{_END}")
        lines.append(f"chmod {file.mode:o} {quoted}")
    return "\n".join(lines)
