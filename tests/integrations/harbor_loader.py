"""Harbor's own task loader on a folder of task folders; run by the harbor venv's Python.

`python harbor_loader.py FOLDER` prints one JSON line for tests/integrations/test_harbor.py
(harbor 0.25 needs Python 3.12, this project's tests run on 3.11): per task folder, what
`harbor.models.task.task.Task` read from it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harbor.models.task.task import Task


def read(folder: Path) -> dict:
    """What Harbor's loader makes of one task folder."""
    task = Task(folder)
    config = task.config
    environment = config.environment
    return {
        "valid": Task.is_valid_dir(folder),
        "name": task.name,
        "instruction": task.instruction,
        "metadata": config.metadata,
        "agent_timeout_sec": config.agent.timeout_sec,
        "verifier_timeout_sec": config.verifier.timeout_sec,
        "cpus": environment.cpus,
        "memory_mb": environment.memory_mb,
        "storage_mb": environment.storage_mb,
        "network_mode": environment.network_mode.value,
        "test_script": str(task.paths.test_path.relative_to(folder)),
        "solve_script": str(task.paths.solve_path.relative_to(folder)),
        "dockerfile": (task.paths.environment_dir / "Dockerfile").read_text(),
    }


if __name__ == "__main__":
    root = Path(sys.argv[1])
    print(json.dumps({p.name: read(p) for p in sorted(root.iterdir()) if p.is_dir()}))
