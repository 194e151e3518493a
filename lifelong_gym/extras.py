"""Importing an optional package, or saying in one line which extra installs it."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

from lifelong_gym.errors import MissingExtraError


def import_extra(module: str, extra: str, purpose: str) -> ModuleType:
    """`module`, imported; if missing, an error naming `pip install 'lifelong-gym[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        missing = f"{error.name} is missing" if error.name else error.msg
        raise _missing_extra(module, extra, purpose, missing) from None


def extra_folders(package: str, extra: str, purpose: str) -> list[Path]:
    """The folders of an optional package, found without importing it (for the data files a
    package ships); if missing, the same error as `import_extra`."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise _missing_extra(package, extra, purpose, f"{package} is missing")
    return [Path(folder) for folder in spec.submodule_search_locations]


def _missing_extra(module: str, extra: str, purpose: str, reason: str) -> MissingExtraError:
    """The error for an optional package that is not installed: what needs it, and the fix."""
    return MissingExtraError(
        f"{purpose} needs {module.split('.')[0]} ({reason}): pip install 'lifelong-gym[{extra}]'"
    )
