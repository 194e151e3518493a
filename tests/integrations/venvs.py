"""The integrations whose package cannot join the main environment live in venvs of their own
(.ci/setup.d/50-mcp.sh, 55-harbor.sh, 56-verifiers.sh); their tests run programs there."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest


def needs_venv(
    python: Path, check: str, what: str, script: str, env: Mapping[str, str] | None = None
):
    """A skip mark for a module whose tests need `python` to run `check` without an error."""
    try:
        done = subprocess.run([python, "-c", check], capture_output=True, env=env)
        present = done.returncode == 0
    except OSError:
        present = False
    return pytest.mark.skipif(
        not present, reason=f"{python} with {what} is absent: run .ci/setup.d/{script}"
    )
