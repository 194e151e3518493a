"""`lifelong-gym export harbor` read and run by the `harbor` package itself (0.25.0).

Harbor 0.25 needs Python 3.12, so it lives in a venv of its own (.ci/setup.d/55-harbor.sh)
and runs there: its task loader on every exported folder (tests/integrations/harbor_loader.py),
and its runner (`harbor run -a oracle -e docker`) where it can work with the local Docker
engine. Its Docker environment drives the Compose V2 plugin (`docker compose`); where that
is absent (Debian's archive has none: its docker-compose is V1), the runner test skips
saying so. (Offline, harbor 0.25 would stop next at the tasks' `network_mode =
"no-network"`: it enforces it with an egress-control sidecar after a probe container of
`alpine:3.23.4`, which the engine must pull from a registry.)
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.envs.os.harbor_export import task_folder_name
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.tasks import load_os_tasks

HARBOR_VENV = Path("/opt/venvs/harbor/bin")  # made by .ci/setup.d/55-harbor.sh
LOADER = Path(__file__).with_name("harbor_loader.py")


def _venv_has_harbor() -> bool:
    check = "import importlib.metadata as m; assert m.version('harbor') == '0.25.0'"
    try:
        done = subprocess.run([HARBOR_VENV / "python", "-c", check], capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


pytestmark = pytest.mark.skipif(
    not _venv_has_harbor(),
    reason=f"{HARBOR_VENV}/python with harbor 0.25.0 is absent: run .ci/setup.d/55-harbor.sh",
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


def _compose_missing() -> str | None:
    try:
        done = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    except OSError:
        return "no docker command"
    if done.returncode != 0:
        return (
            "harbor's Docker environment runs `docker compose` (the Compose V2 plugin), "
            f"which this machine lacks ({done.stderr.strip().splitlines()[0]}); past it, "
            'network_mode = "no-network" makes harbor probe with an alpine image from a registry'
        )
    return None


def test_harbors_oracle_scores_1_on_exported_tasks(exported: Path, os_image, tmp_path: Path):
    missing = _compose_missing()
    if missing:
        pytest.skip(missing)
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    for task in list(load_os_tasks())[:3]:
        (chosen / task_folder_name(task.index)).symlink_to(exported / task_folder_name(task.index))
    command = [HARBOR_VENV / "harbor", "run", "-p", chosen, "-a", "oracle", "-e", "docker"]
    command += ["-o", tmp_path / "jobs", "-n", "1", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = list((tmp_path / "jobs").glob("*/*/result.json"))
    assert len(results) == 3
    for path in results:
        trial = json.loads(path.read_text())
        assert trial["exception_info"] is None, trial["exception_info"]
        assert trial["verifier_result"]["rewards"] == {"reward": 1.0}, path
