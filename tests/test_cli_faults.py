"""`lifelong-gym run` under faults of its own machine: the run folder's disk fills up; the
process is sent SIGTERM (by a batch system or a container engine ending the job).

Each test runs the real command in a process of its own and checks the contract of
docs/security.md ("Faults"): one clear line, a folder that stays readable, and the same
command resuming into the whole run with every task once.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.orders import task_order
from lifelong_gym.results.folder import METRICS_FILE, read_sessions
from lifelong_gym.results.run_record import load_run
from tests.command_line import run_cli

from .conftest import ROOT

TASKS = 30
STREAM = task_order(load_db_tasks(None))  # the shipped DB set's, which the runs play


def lifelong_gym(*args: str) -> subprocess.CompletedProcess:
    """The real command, in a process of its own, from the root (where `tests.fault_points`
    is found)."""
    return run_cli(*args, timeout=600, cwd=ROOT)


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
    assert [s.task_index for s in sessions] == STREAM[:TASKS]
    assert all(s.outcome.value == "correct" for s in sessions)
    assert load_run(output).metrics.sessions == TASKS


def sigterm_run(folder: Path, times: int) -> tuple[str, ...]:
    """The command of a run of 10 tasks into `folder`/run whose process gets SIGTERM
    `times` times as the task at position 3 starts (the first time it does)."""
    mark = folder / "struck"
    spec = f"tests.fault_points.SigtermAt:task_index={STREAM[3]},times={times},mark={mark}"
    return ("run", "--output", str(folder / "run"), "--max-tasks", "10", "--callback", spec)


def test_sigterm_finishes_the_task_in_flight_and_the_same_command_resumes(tmp_path):
    command = sigterm_run(tmp_path, times=1)
    stopped = lifelong_gym(*command)
    assert stopped.returncode == 143, stopped.stderr
    assert "stopped on SIGTERM" in stopped.stderr and "Traceback" not in stopped.stderr
    run = load_run(tmp_path / "run")
    # the task in flight was finished and recorded, its metrics written; none started after
    assert [s.task_index for s in run.sessions] == STREAM[:4]
    assert all(s.outcome.value == "correct" for s in run.sessions)
    assert json.loads((tmp_path / "run" / METRICS_FILE).read_text())["sessions"] == 4

    resumed = lifelong_gym(*command)
    assert resumed.returncode == 0, resumed.stderr
    sessions, _, _ = read_sessions(tmp_path / "run" / "sessions.jsonl")
    assert [s.task_index for s in sessions] == STREAM[:10]
    assert all(s.outcome.value == "correct" for s in sessions)


def test_a_second_sigterm_stops_at_once_and_the_task_in_flight_runs_again(tmp_path):
    command = sigterm_run(tmp_path, times=2)
    stopped = lifelong_gym(*command)
    assert stopped.returncode == 130, stopped.stderr
    assert "interrupted; run the same command again" in stopped.stderr
    assert [s.task_index for s in load_run(tmp_path / "run").sessions] == STREAM[:3]
    resumed = lifelong_gym(*command)
    assert resumed.returncode == 0, resumed.stderr
    assert [s.task_index for s in load_run(tmp_path / "run").sessions] == STREAM[:10]
