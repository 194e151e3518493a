"""`lifelong-gym export harbor` read and run by the `harbor` package itself (0.25.0).

Harbor 0.25 needs Python 3.12, so it lives in a venv of its own (.ci/setup.d/55-harbor.sh)
and runs there: its task loader on every exported folder (tests/integrations/harbor_loader.py).
Its runner (`harbor run -a oracle -e docker`) is not tested: it cannot run offline here. Its
Docker environment drives the Compose V2 plugin (`docker compose`), which neither Debian's
archive (its docker-compose is V1) nor PyPI has; past that, the tasks' `network_mode =
"no-network"` makes harbor 0.25 start an egress-control sidecar after a probe container of
`alpine:3.23.4`, which the engine must pull from a registry. tests/envs/test_os_harbor.py
builds the exported Dockerfiles and runs their judge as Harbor's steps do.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.envs.os.harbor.export import task_folder_name
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.tasks import load_os_tasks

from .venvs import needs_venv

HARBOR_VENV = Path("/opt/venvs/harbor/bin")  # made by .ci/setup.d/55-harbor.sh
LOADER = Path(__file__).with_name("harbor_loader.py")


pytestmark = needs_venv(
    HARBOR_VENV / "python",
    "import importlib.metadata as m; assert m.version('harbor') == '0.25.0'",
    "harbor 0.25.0",
    "55-harbor.sh",
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor") / "tasks"
    result = CliRunner().invoke(
        main, ["export", "harbor", "--env", "LifelongOS-v0", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def test_harbors_loader_reads_every_exported_folder(exported: Path):
    done = subprocess.run(
        [HARBOR_VENV / "python", LOADER, exported], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    read = json.loads(done.stdout)
    tasks = load_os_tasks()
    assert sorted(read) == sorted(task_folder_name(t.index) for t in tasks)
    for task in tasks:
        name = task_folder_name(task.index)
        config = tomllib.loads((exported / name / "task.toml").read_text())
        assert read[name] == {
            "valid": True,
            "name": name,
            "instruction": task.instruction + "\n",
            "metadata": config["metadata"],
            "agent_timeout_sec": 600.0,
            "verifier_timeout_sec": 60.0,
            "cpus": 1,
            "memory_mb": 512,
            "storage_mb": 2048,
            "network_mode": "no-network",
            "test_script": "tests/test.sh",
            "solve_script": "solution/solve.sh",
            "dockerfile": (exported / name / "environment" / "Dockerfile").read_text(),
        }
        assert read[name]["metadata"]["sample_index"] == task.index
        assert f"FROM {DEFAULT_IMAGE}\n" in read[name]["dockerfile"]
