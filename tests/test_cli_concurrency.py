"""`lifelong-gym run --concurrency K`: SIGKILL with tasks in flight, then resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.crash_support import kill_until_done
from tests.test_cli import ROOT

K = 4
TASKS = 80


def command(external: Path, out: Path) -> list[str]:
    tasks = external / "agentbench/data/dbbench/standard.jsonl"
    return [
        sys.executable, "-m", "lifelong_gym", "run", "--no-progress",
        "--tasks", str(tasks), "--output", str(out), "--max-tasks", str(TASKS),
        "--concurrency", str(K), "--callback", "tests.crash_support.Pacer:delay=0.002",
    ]  # fmt: skip


def test_sigkill_with_tasks_in_flight_loses_none_recorded_and_duplicates_none(
    tmp_path, external_dir
):
    reference = tmp_path / "reference"
    subprocess.run(command(external_dir, reference), cwd=ROOT, check=True)
    out = tmp_path / "killed"
    sessions = out / "sessions.jsonl"
    # the sessions in flight at a kill are lost (at most K) and run again on resume
    kills = kill_until_done(command(external_dir, out), ROOT, sessions, 15, 0.05)
    assert kills >= 6
    final = sessions.read_bytes()
    # what each task was shown is fixed by the order, so the resumed run is the same run
    assert final == (reference / "sessions.jsonl").read_bytes()
    records = [json.loads(line) for line in final.splitlines()]
    indices = [record["task_index"] for record in records]
    assert len(indices) == len(set(indices)) == TASKS
    assert [r["details"]["history_seen"] for r in records] == [
        max(0, p - K + 1) for p in range(TASKS)
    ]
    for name in ("metrics.json", "state.json", "config.json"):
        assert json.loads((out / name).read_text()) == json.loads((reference / name).read_text())
