"""The house's layers point down only (DESIGN.md): no module imports a layer above its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: where each installed package's files live (wrappers/ and agents/ sit at the top level)
PACKAGES = {
    "lifelong_gym": "lifelong_gym",
    "wrappers": "lifelong_gym.wrappers",
    "agents": "lifelong_gym.agents",
}
#: the layers, lowest first; a module may import its own layer and those below it
LAYERS = {
    "base": 0,  # records, core, errors, tasks, spaces, ...
    "envs": 1,
    "methods": 2,
    "wrappers": 3,
    "agents": 3,
    "training": 3,
    "distributed": 3,
    "integrations": 3,
    "run": 4,
    "cli": 5,
}
#: walls beside the layers: rooms that must not see each other (agents see text, not envs)
WALLS = {("agents", "envs"), ("agents", "wrappers"), ("wrappers", "agents")}  # DESIGN.md


def area(module: str) -> str:
    """The layer's name of a dotted module path under lifelong_gym."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "base"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts[0] = PACKAGES[parts[0]]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every lifelong_gym module a file imports, at its top or inside a function."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return {module for module in found if module.startswith("lifelong_gym.")}


SOURCES = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_every_import_points_down_or_sideways():
    upward = []
    for path in SOURCES:
        if path.name == "__main__.py" and path.parent.name == "lifelong_gym":
            continue  # `python -m lifelong_gym` is the command line itself
        source = area(module_name(path))
        for target in imports(path):
            to = area(target)
            if LAYERS[to] > LAYERS[source] or (source, to) in WALLS:
                upward.append(f"{path.relative_to(ROOT)} ({source}) imports {target} ({to})")
    assert len(SOURCES) > 100
    assert upward == []


@pytest.mark.parametrize("module", ["lifelong_gym.wrappers", "lifelong_gym.methods"])
def test_the_methods_and_wrappers_load_nothing_of_the_run_layer(module):
    """Gymnasium users of a wrapper pay for no runner, callback registry or command line."""
    code = (
        f"import sys, {module}; "
        "print(sorted(m for m in sys.modules if m.startswith(('lifelong_gym.run', "
        "'lifelong_gym.cli', 'click'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_run_layers_names_are_public_at_the_top():
    import lifelong_gym
    from lifelong_gym.run import Callback, Runner, SessionControl

    assert (lifelong_gym.Runner, lifelong_gym.Callback) == (Runner, Callback)
    assert lifelong_gym.SessionControl is SessionControl
