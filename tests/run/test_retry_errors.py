"""`--retry-errors`: a run whose sessions errored, fixed and retried, ends as the run that never
errored would have, byte for byte, however it was killed on the way (docs/runner.md, "What a
number means")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lifelong_gym.results import folder as run_folder
from lifelong_gym.results.folder import RETRIED_FILE, RETRY_FILE, RunDirectory
from tests.command_line import invoke_run
from tests.crash_support import complete_lines, kill_until_done

ROOT = Path(__file__).resolve().parents[2]
RECORD = ("sessions.jsonl", "metrics.json", "state.json")


def run_args(out: Path, broken: Path, tasks: int, position: int) -> list[str]:
    """A run of the shipped DB set (SQLite) by the oracle, with a stateful callback and one
    that raises at the task at `position` while the file `broken` exists."""
    return [
        "--output", str(out), "--max-tasks", str(tasks),
        "--callback", "tests.crash_support.Saboteur:every=3,delay=0.002",
        "--callback", f"tests.fault_points.BrokenWhile:position={position},broken={broken}",
    ]  # fmt: skip


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "lifelong_gym", "run", "--no-progress", *args]


def record_of(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in RECORD}


def test_straight_killed_retried_and_moved_runs_are_byte_identical(tmp_path):
    never = tmp_path / "never-broken"  # a callback that never raises: the file is absent
    straight, killed, retried = tmp_path / "straight", tmp_path / "killed", tmp_path / "retried"
    subprocess.run(command(*run_args(straight, never, 40, 10)), cwd=ROOT, check=True)
    expected = record_of(straight)
    assert len(complete_lines(straight / "sessions.jsonl")) == 40

    args = run_args(killed, never, 40, 10)
    kills = kill_until_done(command(*args), ROOT, killed / "sessions.jsonl", 20261207, 0.05)
    assert kills >= 3
    assert record_of(killed) == expected

    broken = tmp_path / "broken"
    broken.touch()
    args = run_args(retried, broken, 40, 10)
    first = subprocess.run(command(*args), cwd=ROOT, capture_output=True, text=True)
    assert first.returncode == 3, first.stderr
    assert (
        first.stderr.strip()
        .splitlines()[-1]
        .startswith("Error: 1 session errored (task_unknown_error 1) in ")
    )
    lines = [json.loads(line) for line in complete_lines(retried / "sessions.jsonl")]
    assert [line["status"] for line in lines].count("task_unknown_error") == 1
    assert lines[10]["status"] == "task_unknown_error" and lines[10]["outcome"] == "correct"
    assert json.loads((retried / "metrics.json").read_text())["errored"] == 1

    broken.unlink()  # the fix
    again = subprocess.run(
        command(*args, "--retry-errors"), cwd=ROOT, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert (
        "retrying from session 11: playing 30 sessions again, 1 errored (task_unknown_error 1), "
        "and the 29 after the first, which saw it; the sessions cut off are kept in "
        "sessions.retried.jsonl"
    ) in again.stderr
    assert record_of(retried) == expected
    kept = complete_lines(retried / RETRIED_FILE)
    assert [json.loads(line)["task_index"] for line in kept] == [
        x["task_index"] for x in lines[10:]
    ]
    assert not (retried / RETRY_FILE).exists()

    # the fourth way: half the run from another working folder, through a relative path to
    # a copy of the tasks, the rest from here through its absolute path
    elsewhere, copied = tmp_path / "elsewhere", tmp_path / "elsewhere" / "tasks"
    copied.mkdir(parents=True)
    for name in ("default.jsonl", "default.order.json"):
        shutil.copyfile(ROOT / "lifelong_gym/data/db" / name, copied / name)
    moved = tmp_path / "moved"
    args = [*run_args(moved, never, 20, 10), "--tasks", "tasks/default.jsonl"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(command(*args), cwd=elsewhere, check=True, env=environment)
    args = [*run_args(moved, never, 40, 10), "--tasks", str(copied / "default.jsonl")]
    subprocess.run(command(*args), cwd=ROOT, check=True)
    assert record_of(moved) == expected


class Killed(BaseException):
    """A kill of the process at a known point of the cut."""


def torn_copy(descriptor: int, data: bytes) -> None:
    os.write(descriptor, data[: len(data) // 2])
    raise Killed


def killed_before_truncating(path, length) -> None:
    raise Killed


@pytest.mark.parametrize(
    ("name", "fault"),
    [("append_whole", torn_copy), ("os.truncate", killed_before_truncating)],
)
def test_a_cut_killed_half_way_is_finished_by_the_next_run(tmp_path, monkeypatch, name, fault):
    never, broken = tmp_path / "never-broken", tmp_path / "broken"
    straight, retried = tmp_path / "straight", tmp_path / "retried"
    assert invoke_run(*run_args(straight, never, 12, 4)).exit_code == 0
    broken.touch()
    args = run_args(retried, broken, 12, 4)
    assert invoke_run(*args).exit_code == 3
    broken.unlink()
    with monkeypatch.context() as patch:
        patch.setattr(
            run_folder if name == "append_whole" else run_folder.os, name.split(".")[-1], fault
        )
        folder = RunDirectory(retried)
        with pytest.raises(Killed):
            folder.load()
            folder.cut_at_first_error()
        folder.close()
    assert (retried / RETRY_FILE).exists()  # the journal says what is left to do
    result = invoke_run(*args, "--retry-errors")
    assert result.exit_code == 0, result.output
    assert record_of(retried) == record_of(straight)
    assert len(complete_lines(retried / RETRIED_FILE)) == 8  # copied once, whole


def test_a_stateful_run_of_an_earlier_version_cannot_retry_and_says_so(tmp_path):
    broken = tmp_path / "broken"
    broken.touch()
    out = tmp_path / "run"
    args = run_args(out, broken, 6, 2)
    assert invoke_run(*args).exit_code == 3
    (out / "state.before-error.json").unlink()  # as a folder written before retries were
    broken.unlink()
    result = invoke_run(*args, "--retry-errors")
    assert result.exit_code == 1
    assert "cannot retry from session 3, the first errored one" in result.output
    assert invoke_run(*args).exit_code == 3  # without the flag it goes on, errors and all
