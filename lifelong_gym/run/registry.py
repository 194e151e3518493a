"""Callbacks by name: `--callback NAME[:key=value,...]` and `register_callback`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lifelong_gym.arguments import assignments, check_arguments, user_class
from lifelong_gym.errors import CallbackSpecError, ConfigError

from .callback_errors import callback_hook, callback_name
from .callbacks import Callback

CALLBACKS: dict[str, type[Callback]] = {}

CallbackT = TypeVar("CallbackT", bound=type[Callback])


def register_callback(name: str) -> Callable[[CallbackT], CallbackT]:
    """Class decorator: make a callback buildable by name (`--callback NAME:k=v,...`)."""

    def register(cls: CallbackT) -> CallbackT:
        if name in CALLBACKS and CALLBACKS[name] is not cls:
            raise ValueError(f"a callback named {name!r} is registered already")
        CALLBACKS[name] = cls
        return cls

    return register


def parse_callback_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split `NAME[:key=value,...]` into the name and its keyword arguments."""
    name, _, rest = spec.partition(":")
    try:
        return name.strip(), assignments(rest)
    except ValueError as error:
        raise CallbackSpecError(f"callback spec {spec!r}: {error}") from None


def make_callback(spec: str, log_folder: Path | None = None) -> Callback:
    """Build a callback from `NAME[:key=value,...]`; NAME is registered or `module.Class`.

    An exception from the class's `__init__` is a `CallbackError` whose traceback goes to
    `log_folder`'s `run.log` (a temp file when None)."""
    name, kwargs = parse_callback_spec(spec)
    cls = CALLBACKS.get(name) or _import_callback(name)
    try:
        check_arguments(cls, kwargs, f"callback {name}")
    except ConfigError as error:
        raise CallbackSpecError(str(error)) from None
    with callback_hook(callback_name(cls), "__init__", log_folder):
        try:
            return cls(**kwargs)
        except TypeError as error:
            raise CallbackSpecError(f"callback spec {spec!r}: {error}") from None


def check_needs(callbacks: Sequence[Callback]) -> None:
    """Refuse, in one line, a callback that needs another (`Callback.needs`) the run lacks."""
    for callback in callbacks:
        for name, why in callback.needs().items():
            needed = CALLBACKS.get(name)
            if needed is None or not any(isinstance(other, needed) for other in callbacks):
                raise CallbackSpecError(f"{why}: add the {name} callback to the run")


def _import_callback(name: str) -> type[Callback]:
    module_name, _, class_name = name.rpartition(".")
    known = ", ".join(sorted(CALLBACKS)) or "none"
    if not module_name:
        raise CallbackSpecError(
            f"no callback named {name!r}; registered: {known} "
            "(or give one as module.path.ClassName)"
        )
    return user_class(module_name, class_name, Callback, CallbackSpecError, f"callback {name!r}")
