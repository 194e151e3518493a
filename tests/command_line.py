"""The `lifelong-gym` command as the tests run it: in a process of its own, as a user does
(`run_cli`, with `assert_one_line_error` for what a mistake must print), or `run` in the
test's own process with Click's runner (`invoke_run`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from lifelong_gym.cli import main
from lifelong_gym.results.gain import Gain, paired_gain, twin_folder
from lifelong_gym.results.run_record import load_run


def run_cli(
    *args: str, timeout: float = 300, cwd: Path | None = None, path: Path | None = None
) -> subprocess.CompletedProcess:
    """The real command, in a process of its own (what a user sees, stdout and stderr); from
    `cwd` where it needs the repository's `tests` package (callbacks named `tests.…`);
    `path`: a folder put first on its PYTHONPATH (installed packages of a test's own)."""
    env = None
    if path is not None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")]),
        }
    return subprocess.run(
        [sys.executable, "-m", "lifelong_gym", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr  # no traceback, no repeated hint
    assert lines[0].startswith("Error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def invoke_run(*args: str) -> Result:
    """`lifelong-gym run --no-progress ARGS` in this process; an exception is raised, not
    kept in the result."""
    return CliRunner().invoke(main, ["run", "--no-progress", *args], catch_exceptions=False)


def planted_gain(output: Path, callback: str, tasks: int) -> Gain:
    """The overall paired gain of `--callback CALLBACK` over its stateless twin, both run
    from the command line with the planted learner (k=2, base=0.2) on `tasks` tasks."""
    args = ["--output", str(output), "--max-tasks", str(tasks), "--stateless-baseline"]
    result = invoke_run(*args, "--agent", "planted:k=2,base=0.2", "--callback", callback)
    assert result.exit_code == 0, result.output
    gain = paired_gain(load_run(output), load_run(twin_folder(output))).overall
    assert gain.tasks == tasks
    return gain
