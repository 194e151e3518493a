"""Shared fixtures: real services, located by environment variables, skipped when absent.

In CI (`CI` set) a skip is a failure: CI installs every service, so nothing may skip there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MYSQL_URL = os.environ.get("LIFELONG_GYM_MYSQL_URL", "mysql://root@127.0.0.1:3306")
# ../shared/external beside the checkout (searched upwards, so a git worktree finds it too)
EXTERNAL = next(
    (
        folder / "shared" / "external"
        for folder in Path(__file__).resolve().parents
        if (folder / "shared" / "external").is_dir()
    ),
    Path(__file__).resolve().parents[1].parent / "shared" / "external",
)


@pytest.fixture(scope="session")
def mysql_url() -> str:
    """The URL of a reachable MySQL/MariaDB server, or a skip saying why there is none."""
    try:
        import pymysql

        from lifelong_gym.envs.db.backends.mysql.backend import parse_url

        pymysql.connect(connect_timeout=3, **parse_url(MYSQL_URL)).close()
    except Exception as error:  # noqa: BLE001 - any failure means the server is not usable
        pytest.skip(f"no MySQL server at {MYSQL_URL} ({error}); set LIFELONG_GYM_MYSQL_URL")
    return MYSQL_URL


@pytest.fixture(scope="session")
def docker_engine():
    """A reachable Docker engine (a client of it), or a skip saying why there is none."""
    pytest.importorskip("docker")
    from lifelong_gym.docker_engine import docker_client
    from lifelong_gym.errors import SandboxError

    try:
        return docker_client()
    except SandboxError as error:
        pytest.skip(f"no Docker engine: {error}")


@pytest.fixture(scope="session")
def os_image(docker_engine) -> str:
    """The OS image's name, once the Docker engine holds it; else a skip saying why."""
    from lifelong_gym.envs.os.image import DEFAULT_IMAGE, image_exists

    if not image_exists(DEFAULT_IMAGE):
        pytest.skip(f"image {DEFAULT_IMAGE} absent: run lifelong-gym build-image os")
    return DEFAULT_IMAGE


@pytest.fixture(scope="session")
def mysql_image(docker_engine) -> str:
    """The MySQL server image's name, once the Docker engine holds it; else a skip."""
    from lifelong_gym.envs.db.image import DEFAULT_IMAGE
    from lifelong_gym.rootfs_image import image_exists

    if not image_exists(DEFAULT_IMAGE):
        pytest.skip(f"image {DEFAULT_IMAGE} absent: run lifelong-gym build-image mysql")
    return DEFAULT_IMAGE


@pytest.fixture(scope="session")
def external_dir() -> Path:
    """The peer benchmark's task files in ../shared/external, or a skip."""
    if not EXTERNAL.is_dir():
        pytest.skip(f"{EXTERNAL} is absent: the AgentBench compatibility tests need it")
    return EXTERNAL


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-weight Llama model with a tokenizer trained here, saved like a real model."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from lifelong_gym.agents.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file (the real instruct model of the tests), or a skip."""
    from lifelong_gym.agents.models.gguf import smollm2_path as locate
    from lifelong_gym.errors import ConfigError

    try:
        path = locate()
    except ConfigError as error:  # the package or its file is missing
        pytest.skip(str(error))
    for package in ("torch", "transformers", "gguf", "accelerate"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is missing: pip install 'lifelong-gym[hf,smollm2]'")
    return path


@dataclass(frozen=True)
class Checkpoint:
    """A model folder written by examples/sft_warmstart.py, and what the example printed."""

    folder: Path
    output: str


@pytest.fixture(scope="session")
def sft_checkpoint(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Checkpoint:
    """The tiny model after examples/sft_warmstart.py on four DB demonstrations (about 20 s)."""
    pytest.importorskip("trl", reason="the SFT example needs TRL: pip install 'lifelong-gym[trl]'")
    pytest.importorskip("datasets", reason="the SFT example needs datasets")
    from lifelong_gym.training.sft_export import export_sft

    work = tmp_path_factory.mktemp("sft")
    export_sft("LifelongDB-v0", work / "data", progress=False)
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "sft_warmstart.py")]
        + ["--model", str(tiny_model_dir), "--data", str(work / "data")]
        + ["--output", str(work / "model"), "--demonstrations", "4", "--max-length", "4096"]
        + ["--eval-tasks", "default", "--eval-episodes", "2", "--eval-before"]
        + ["--max-new-tokens", "4", "--eval-envs", "2", "--warmup-ratio", "0"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return Checkpoint(work / "model", done.stdout)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    """Write records as JSON Lines and return the path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI, turn a skip into a failure: every service must be there."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where nothing may skip: {report.longrepr}"
