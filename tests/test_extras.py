"""The adapters' frameworks are optional: absent, they are one error naming the extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lifelong_gym.errors import MissingExtraError
from lifelong_gym.extras import import_extra


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


def test_the_verifiers_adapter_without_verifiers_names_its_extra(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "verifiers", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "lifelong_gym.integrations.verifiers", raising=False)
    with pytest.raises(MissingExtraError, match=r"pip install 'lifelong-gym\[verifiers\]'"):
        import lifelong_gym.integrations.verifiers  # noqa: F401
