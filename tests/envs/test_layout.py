"""The three environments are laid out alike, as the envs package's docstring describes."""

from __future__ import annotations

from pathlib import Path

import pytest

import lifelong_gym.envs

ENVS = Path(lifelong_gym.envs.__file__).parent
#: what every environment holds: modules, and packages (with a trailing slash)
SHARED = ("env.py", "actions.py", "prompt.py", "tasks.py", "skills.py", "backends/", "generator/")


def test_the_docstring_names_each_shared_part():
    assert [name for name in SHARED if f"`{name}`" not in lifelong_gym.envs.__doc__] == []


@pytest.mark.parametrize("environment", ["db", "os", "kg"])
def test_each_environment_has_the_shared_parts(environment):
    folder = ENVS / environment
    missing = [
        name
        for name in SHARED
        if not (
            folder / name.rstrip("/") / "__init__.py" if name.endswith("/") else folder / name
        ).is_file()
    ]
    assert missing == []
