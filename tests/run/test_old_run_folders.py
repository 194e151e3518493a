"""A run folder written by lifelong-gym 0.1.0 (before the run layer moved) resumes unchanged.

`tests/data/run-made-by-0.1.0/` is what version 0.1.0 wrote for
`lifelong-gym run --env LifelongDB-v0 --agent oracle --max-tasks 6
--callback experience_replay:n=2`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from lifelong_gym.cli import main

OLD_RUN = Path(__file__).resolve().parents[1] / "data" / "run-made-by-0.1.0"


def test_a_run_started_by_0_1_0_resumes(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(OLD_RUN, folder)
    before = (folder / "sessions.jsonl").read_bytes()
    replayed_memory = json.loads((folder / "state.json").read_text())
    args = ["run", "--env", "LifelongDB-v0", "--agent", "oracle", "--output", str(folder)]
    args += ["--max-tasks", "9", "--callback", "experience_replay:n=2", "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    after = (folder / "sessions.jsonl").read_bytes()
    assert after.startswith(before)  # nothing rewritten: the six sessions resumed from
    lines = [json.loads(line) for line in after.splitlines()]
    assert len(lines) == 9
    # the replay memory saved by 0.1.0 was restored: the 7th task replays the 5th and 6th
    assert lines[6]["details"]["replayed"] == [lines[5]["task_index"], lines[4]["task_index"]]
    state = json.loads((folder / "state.json").read_text())
    assert state["sessions"] == 9
    saved = replayed_memory["callbacks"]["ExperienceReplayCallback"]["experiences"]
    assert len(state["callbacks"]["ExperienceReplayCallback"]["experiences"]) > len(saved)
