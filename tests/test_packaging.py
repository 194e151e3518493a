"""The package list of pyproject.toml: a wheel holds every package of the source tree."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed_in_pyproject():
    """A folder with an `__init__.py` that is not listed is missing from `pip install .`
    (an editable install finds it anyway, so only a wheel would show the hole)."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {name: ROOT / path for name, path in tool["package-dir"].items()}
    found = set()
    for top, folder in folders.items():
        for marker in folder.rglob("__init__.py"):
            relative = marker.parent.relative_to(folder).parts
            found.add(".".join((top, *relative)))
    listed = set(tool["packages"])
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - found == set(), "these listed packages have no folder"
