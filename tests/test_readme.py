"""The README's code runs as a newcomer would copy it, and prints what the README says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym

import lifelong_gym

README = Path(__file__).resolve().parents[1] / "README.md"


def section(title: str) -> str:
    """The README's text under a `## title` heading, up to the next one."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def python_block(text: str) -> str:
    """The first fenced Python block of `text`."""
    match = re.search(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert match, "no ```python block"
    return match.group(1)


def test_the_own_loop_snippet_shows_the_task_the_rows_and_the_verdict(tmp_path: Path):
    loop = section("In your own loop")
    code = python_block(loop)
    assert "gym.register_envs(lifelong_gym)" in code
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    gym.register_envs(lifelong_gym)
    env = gym.make("LifelongDB-v0")
    env.reset(seed=0)
    task = env.unwrapped.task
    env.close()
    table = task.table_info.name
    lines = done.stdout.splitlines()
    assert lines[0] == f"Task: {task.instruction}"
    assert lines[1].startswith(f"Table: {table} (")
    count = len(task.table_info.row_list)
    assert lines[2] == f"SELECT COUNT(*) FROM {table}; -> [({count},)]"
    correct = list(task.answer_info.direct or ()) == [(count,)]
    assert lines[3] == ("1.0 completed correct" if correct else "0.0 completed incorrect")
    assert len(lines) == 4
    # the prose under the snippet tells what it prints
    assert f"a `{table}` table" in loop
    assert f"`{lines[2]}`" in loop and f"`{lines[3]}`" in loop


def test_the_torch_line_installs_the_cpu_build():
    setup = section("Set-up on a fresh machine")
    commands = re.findall(r"^python -m pip install torch.*$", setup, re.MULTILINE)
    assert commands == [
        "python -m pip install torch --index-url https://download.pytorch.org/whl/cpu"
    ]


def test_the_layout_names_every_module_and_folder_of_the_package():
    layout = section("Layout")
    package = README.parent / "lifelong_gym"
    names = [p.name for p in package.glob("*.py")]
    names += [f"{p.name}/" for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert [n for n in names if n not in layout] == []
    environments = sorted(p.name for p in package.glob("envs/*") if (p / "__init__.py").exists())
    assert environments == ["db", "kg", "os"] and "envs/db|os|kg/" in layout


def test_the_layout_quotes_the_layers_the_layer_test_checks():
    """The README's drawing of the layers and walls is `tests/test_layers.py`'s, row by row."""
    from tests.test_layers import CLI, KIT, LAYERS, WALLS

    block = re.search(r"^```text\n(.*?)^```$", section("Layout"), re.MULTILINE | re.DOTALL)
    assert block, "no ```text block of layers in the Layout section"
    layers, modules, walls = {}, {}, set()
    for line in block.group(1).splitlines():
        if line.startswith("walls:"):
            pairs = line.removeprefix("walls:").split(",")
            walls = {tuple(w.strip().split(" -/-> ")) for w in pairs}
            continue
        level, names, *files = re.split(r"\s{2,}", line.strip())
        for name in names.split(", "):
            layers[name] = int(level)
            modules[name] = (
                {f.removesuffix(".py").removesuffix("/") for f in files[0].split(", ")}
                if files
                else None
            )
    assert layers == LAYERS
    assert walls == WALLS
    assert (modules["kit"], modules["cli"]) == (KIT, CLI)
