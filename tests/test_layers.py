"""The package's layers point down only; the README's Layout quotes `LAYERS` and `WALLS`.

A module may import modules of its own layer and of the layers below it. Beside the
layers, walls keep two rooms of one level apart (agents read text, not environments), and
`errors.py` imports nothing of the package, so that every module can raise its errors.
Every way of naming a module counts, at a file's top or inside a function: `import a.b`,
`from a import b` (b a module or a name), relative imports up to the package root, the
root's own names (`from lifelong_gym import Runner`, which the root's `__getattr__` takes
from the run layer), and `importlib.import_module` or `__import__` with a literal name.
`test_the_checker_sees_each_kind_of_violation` plants each kind in a copy of the tree.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: each installed package's folder (wrappers/ and agents/ sit at the repository's top)
PACKAGES = {
    "lifelong_gym": "lifelong_gym",
    "wrappers": "lifelong_gym.wrappers",
    "agents": "lifelong_gym.agents",
}
#: the layers, lowest first; a module may import its own layer and those below it
LAYERS = {
    "base": 0,  # records and core: session, core, actions, tasks, orders, metrics, ...
    "kit": 1,  # the environment kit, what environments and generators are built with
    "envs": 2,
    "methods": 3,
    "decoding": 4,
    "wrappers": 5,
    "agents": 5,
    "training": 6,
    "integrations": 7,
    "distributed": 7,
    "results": 8,  # the run folder's format, which the engine writes through, and its readers
    "run": 9,
    "cli": 10,
}
KIT = {"generation", "splits", "docker_engine", "rootfs_image"}
CLI = {"cli", "__main__"}
#: walls beside the layers: rooms that must not see each other (agents see text, not envs)
#: (a run's results are read without the agents or the environments: `lifelong-gym report`)
WALLS = {
    ("agents", "envs"),
    ("agents", "wrappers"),
    ("wrappers", "agents"),
    ("results", "agents"),
    ("results", "envs"),
}
#: where the package root's `__getattr__` finds the names the root does not bind itself
ROOT_LAZY_HOME = "lifelong_gym.run"
IMPORT_FUNCTIONS = {"import_module", "__import__"}


def area(module: str) -> str:
    """The layer of a dotted module path under lifelong_gym (the root itself is base)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "base"
    if parts[1] in LAYERS:
        return parts[1]
    return "kit" if parts[1] in KIT else "cli" if parts[1] in CLI else "base"


class Tree:
    """The package's source files below `root` (the repository, or a copy of it)."""

    def __init__(self, root: Path):
        self.root = root
        self.folders = {dotted: root / folder for folder, dotted in PACKAGES.items()}
        self.sources = sorted(path for folder in PACKAGES for path in (root / folder).rglob("*.py"))
        self.root_names = bound_names(root / "lifelong_gym" / "__init__.py")
        self._imports: dict[Path, set[str]] = {}

    def module_name(self, path: Path) -> str:
        parts = list(path.relative_to(self.root).with_suffix("").parts)
        parts[0] = PACKAGES[parts[0]]
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def is_module(self, dotted: str) -> bool:
        """Whether `dotted` names a module or package of the tree."""
        for prefix, folder in sorted(self.folders.items(), key=lambda item: -len(item[0])):
            if dotted == prefix or dotted.startswith(prefix + "."):
                path = folder.joinpath(*dotted[len(prefix) :].split(".")[1:])
                return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()
        return False

    def imports(self, path: Path) -> set[str]:
        """Every lifelong_gym module a file imports, in any of the ways the docstring lists."""
        if path not in self._imports:
            self._imports[path] = self._read_imports(path)
        return self._imports[path]

    def _read_imports(self, path: Path) -> set[str]:
        name = self.module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = resolve(node.module or "", node.level, package)
                found |= {self.imported(base, alias.name) for alias in node.names}
            elif isinstance(node, ast.Call) and literal_import(node):
                text = node.args[0].value
                level = len(text) - len(text.lstrip("."))
                found.add(resolve(text.lstrip("."), level, package) if level else text)
        return {m for m in found if m == "lifelong_gym" or m.startswith("lifelong_gym.")}

    def imported(self, base: str, name: str) -> str:
        """The module that `from base import name` loads."""
        if self.is_module(f"{base}.{name}"):
            return f"{base}.{name}"
        if base == "lifelong_gym" and name not in self.root_names:
            return ROOT_LAZY_HOME
        return base

    def violations(self) -> list[str]:
        """Each import that points up a layer, crosses a wall, or leaves errors.py."""
        found = []
        for path in self.sources:
            name = self.module_name(path)
            if name == "lifelong_gym.__main__":
                continue  # `python -m lifelong_gym` is the command line itself
            source, where = area(name), path.relative_to(self.root)
            for target in sorted(self.imports(path)):
                if name == "lifelong_gym" and target == ROOT_LAZY_HOME:
                    continue  # the root's `__getattr__`, when one of those names is first used
                to = area(target)
                if name == "lifelong_gym.errors":
                    found.append(f"{where} imports {target}: errors.py imports nothing of ours")
                elif LAYERS[to] > LAYERS[source] or (source, to) in WALLS:
                    found.append(f"{where} ({source}) imports {target} ({to})")
        return found


def resolve(module: str, level: int, package: str) -> str:
    """The absolute name of a relative import `from .{level}module import ...`."""
    if not level:
        return module
    parts = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(parts + ([module] if module else []))


def literal_import(node: ast.Call) -> bool:
    """`importlib.import_module("...")` or `__import__("...")` with a literal name."""
    function = node.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    return (
        called in IMPORT_FUNCTIONS
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def bound_names(path: Path) -> set[str]:
    """The names a module binds at its top (imports, definitions, assignments)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def test_every_import_points_down_or_sideways():
    tree = Tree(ROOT)
    assert len(tree.sources) > 100
    assert tree.violations() == []


def test_no_two_modules_import_each_other():
    """No circle of two, not even one import guarded by TYPE_CHECKING."""
    tree = Tree(ROOT)
    edges = {
        (tree.module_name(path), target) for path in tree.sources for target in tree.imports(path)
    }
    assert sorted(f"{a} <-> {b}" for a, b in edges if a < b and (b, a) in edges) == []


PLANTED = [
    ("lifelong_gym/envs/db/env.py", "from lifelong_gym import run", "lifelong_gym.run (run)"),
    ("lifelong_gym/envs/db/env.py", "from lifelong_gym import Runner", "lifelong_gym.run (run)"),
    ("lifelong_gym/envs/db/env.py", "from ... import cli", "lifelong_gym.cli (cli)"),
    ("lifelong_gym/envs/db/env.py", "from ...run import runner", "lifelong_gym.run.runner (run)"),
    (
        "lifelong_gym/envs/db/env.py",
        "def planted():\n    import importlib\n\n    importlib.import_module('lifelong_gym.run')",
        "lifelong_gym.run (run)",
    ),
    ("lifelong_gym/envs/db/env.py", "__import__('lifelong_gym.training')", "(training)"),
    ("lifelong_gym/methods/replay.py", "import lifelong_gym.wrappers", "(wrappers)"),
    ("lifelong_gym/generation.py", "from lifelong_gym.envs.db import env", "(envs)"),
    (
        "lifelong_gym/training/grpo.py",
        "from lifelong_gym.integrations import trl",
        "(integrations)",
    ),
    ("agents/__init__.py", "from lifelong_gym.envs.db import env", "(agents) imports"),
    ("lifelong_gym/results/report.py", "from lifelong_gym.run import runner", "(run)"),
    ("lifelong_gym/results/report.py", "from lifelong_gym.agents import Agent", "(agents)"),
    ("lifelong_gym/results/report.py", "from lifelong_gym.envs.db import env", "(envs)"),
    ("lifelong_gym/decoding/policy.py", "from lifelong_gym.agents.models import gguf", "(agents)"),
    ("lifelong_gym/decoding/sampling.py", "from lifelong_gym.training import grpo", "(training)"),
    ("lifelong_gym/errors.py", "from lifelong_gym.session import SessionStatus", "errors.py"),
]


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory) -> Path:
    """The package's Python files, copied (nothing else: the shipped data is large)."""
    copy = tmp_path_factory.mktemp("tree")
    keep_python = lambda folder, names: [  # noqa: E731
        n for n in names if not (Path(folder, n).is_dir() or n.endswith(".py"))
    ]
    for folder in PACKAGES:
        shutil.copytree(ROOT / folder, copy / folder, ignore=keep_python)
    assert Tree(copy).violations() == []
    return copy


@pytest.mark.parametrize(("file", "line", "seen"), PLANTED, ids=[p[1][:40] for p in PLANTED])
def test_the_checker_sees_each_kind_of_violation(clean_copy, tmp_path, file, line, seen):
    planted = tmp_path / "tree"
    shutil.copytree(clean_copy, planted)
    target = planted / file
    target.write_text(target.read_text() + f"\n\n{line}\n")
    found = Tree(planted).violations()
    assert any(v.startswith(file) and seen in v for v in found), found


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
