"""Plugins: a user's modules, imported before a run's agent and callbacks are made, so that
the agents and callbacks they define (`@register_callback("name")`) are named like the
built-in ones. `--plugin MODULE` names one; installed packages offer theirs as entry points
of the group `lifelong_gym.plugins`, which are loaded for every run."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import entry_points

from lifelong_gym.arguments import import_user_module
from lifelong_gym.errors import PluginError

ENTRY_POINT_GROUP = "lifelong_gym.plugins"

_loaded_entry_points: set[str] = set()  # a plugin's module registers its names only once


def load_plugins(modules: Sequence[str]) -> None:
    """Import the installed plugins (entry points) and then `modules`; a plugin that fails
    to import is one `PluginError` line naming it."""
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.value in _loaded_entry_points:
            continue
        try:
            entry_point.load()
        except Exception as problem:  # noqa: BLE001 - an installed plugin may fail in any way
            raise PluginError(
                f"plugin {entry_point.name} ({entry_point.value}, an entry point of "
                f"{ENTRY_POINT_GROUP}) cannot be imported: {type(problem).__name__}: {problem}"
            ) from None
        _loaded_entry_points.add(entry_point.value)
    for module in modules:
        import_user_module(module, PluginError, f"plugin {module}")
