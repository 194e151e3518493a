"""Importing an optional framework, or saying in one line which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from lifelong_gym.errors import MissingExtraError


def import_extra(module: str, extra: str, purpose: str) -> ModuleType:
    """`module`, imported; if missing, an error naming `pip install 'lifelong-gym[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(
            f"{purpose} needs {module.split('.')[0]} ({error.msg}): "
            f"pip install 'lifelong-gym[{extra}]'"
        ) from None
