"""`lifelong-gym report` and `compare` read a run folder with the results package: no module
of the agents, the runner, training or an environment's back-end is loaded (each command's
module is imported only when it runs; the report reads the task set's reference solutions,
with the environment's task loader alone)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.command_line import invoke_run

HEAVY = (
    "lifelong_gym.agents",
    "lifelong_gym.run",
    "lifelong_gym.training",
    "lifelong_gym.envs.db.backends",
    "lifelong_gym.envs.db.env",
)
#: runs the command in a fresh process, then prints the package's modules it loaded
LOADED = """
import json, sys
from lifelong_gym.cli import main
try:
    main(sys.argv[1:], prog_name="lifelong-gym")
except SystemExit as done:
    assert not done.code, done.code
print(json.dumps(sorted(m for m in sys.modules if m.startswith("lifelong_gym"))))
"""


@pytest.fixture(scope="module")
def oracle_runs(tmp_path_factory) -> tuple[Path, Path]:
    """Two short oracle runs on the shipped DB set (SQLite)."""
    folder = tmp_path_factory.mktemp("runs")
    for name, tasks in (("a", "3"), ("b", "4")):
        result = invoke_run("--output", str(folder / name), "--max-tasks", tasks)
        assert result.exit_code == 0, result.output
    return folder / "a", folder / "b"


def loaded_modules(*args: str) -> list[str]:
    """The lifelong_gym modules that `lifelong-gym ARGS` loads, in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED, *args], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("command", ["report", "compare"])
def test_reading_a_run_loads_no_agent_runner_or_environment(oracle_runs, command):
    first, second = oracle_runs
    args = ["report", str(first)] if command == "report" else ["compare", str(first), str(second)]
    loaded = loaded_modules(*args)
    assert "lifelong_gym.results.report" in loaded or "lifelong_gym.results.compare" in loaded
    assert [m for m in loaded if m.startswith(HEAVY)] == []


def test_running_loads_the_runner(oracle_runs):
    """The check can fail: `run` (resuming a finished run) loads what `report` must not."""
    loaded = loaded_modules("run", "--no-progress", "--output", str(oracle_runs[0]))
    assert "lifelong_gym.run.runner" in loaded and "lifelong_gym.agents" in loaded
