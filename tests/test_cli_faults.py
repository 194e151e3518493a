"""`lifelong-gym run` under faults of its own machine: the run folder's disk fills up.

Each test runs the real command in a process of its own and checks the contract of
docs/security.md ("Faults"): one clear line, a folder that stays readable, and the same
command resuming into the whole run with every task once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.orders import task_order
from lifelong_gym.run.folder import read_sessions
from lifelong_gym.run.run_record import load_run

TASKS = 30


def lifelong_gym(*args: str) -> subprocess.CompletedProcess:
    """The real command, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "lifelong_gym", *args], capture_output=True, text=True, timeout=600
    )


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (mounting needs root), unmounted at the end whatever happened."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "--lazy", str(disk)], check=True)


def fill(disk: Path, leave: int) -> Path:
    """A file that fills `disk` but for about `leave` bytes."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (stats.f_bavail * stats.f_frsize - leave))
    return filler


def test_a_full_disk_is_one_line_the_folder_stays_readable_and_the_run_resumes(small_disk):
    output = small_disk / "run"
    command = ("run", "--output", str(output), "--max-tasks", str(TASKS), "--no-progress")
    filler = fill(small_disk, leave=24_000)  # room for a few sessions of the 30

    full = lifelong_gym(*command)
    assert full.returncode == 1
    assert full.stderr.count("\n") == 1 and full.stderr.startswith("Error: no space left")
    assert str(output) in full.stderr and "run the same command again" in full.stderr

    recorded = load_run(output).sessions  # every line on disk is whole
    assert 0 < len(recorded) < TASKS
    reported = lifelong_gym("report", str(output))  # it writes: one line too
    assert reported.returncode == 1 and reported.stderr.startswith("Error: no space left")
    assert reported.stderr.count("\n") == 1

    filler.unlink()
    resumed = lifelong_gym(*command)
    assert resumed.returncode == 0, resumed.stderr
    sessions, _, _ = read_sessions(output / "sessions.jsonl")
    assert [s.model_dump() for s in sessions[: len(recorded)]] == [s.model_dump() for s in recorded]
    assert [s.task_index for s in sessions] == task_order(load_db_tasks(None))[:TASKS]
    assert all(s.outcome.value == "correct" for s in sessions)
    assert load_run(output).metrics.sessions == TASKS
