"""`lifelong-gym generate db|os|kg`: one flag set, one writer, never into the package's data."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.envs.os.tasks import load_os_tasks
from lifelong_gym.errors import ConfigError
from lifelong_gym.generation import replacing, task_file, write_task_set
from lifelong_gym.tasks import DATA_DIR

SMALL = {
    "db": ["--count", "25", "--mysql", ""],
    "os": ["--count", "30", "--no-verify"],
    "kg": ["--per-length", "2", "--scale", "0.1"],
}


def package_data_digest() -> str:
    """One checksum over the names and bytes of every file in lifelong_gym/data."""
    digest = hashlib.sha256()
    for path in sorted(p for p in DATA_DIR.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(DATA_DIR)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def generate(*args: str):
    return CliRunner().invoke(main, ["generate", *args], catch_exceptions=False)


def needs(environment: str) -> None:
    pytest.importorskip("faker")
    if environment == "kg":
        pytest.importorskip("pyoxigraph")


@pytest.mark.parametrize("environment", sorted(SMALL))
def test_without_output_a_set_goes_to_the_current_directory(
    environment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    needs(environment)
    monkeypatch.chdir(tmp_path)
    before = package_data_digest()
    result = generate(environment, "--seed", "1", *SMALL[environment])
    assert result.exit_code == 0, result.output
    assert package_data_digest() == before
    folder = tmp_path / "lifelong-gym-tasks" / environment
    records = (folder / "default.jsonl").read_text().splitlines()
    order = json.loads((folder / "default.order.json").read_text())
    assert len(records) == len(order) > 0
    assert sorted(order) != order  # a shuffled sample order, not the file's
    expected = {"default.jsonl", "default.order.json"} | (
        {"graph.nt.gz"} if environment == "kg" else set()
    )
    assert {p.name for p in folder.iterdir()} == expected  # no temporary file left
    assert "lifelong-gym-tasks" in result.output


@pytest.mark.parametrize("environment", sorted(SMALL))
def test_every_generator_takes_the_same_flags(environment: str):
    result = generate(environment, "-h")
    assert result.exit_code == 0
    for flag in ("--output", "--name", "--seed", "-h"):
        assert flag in result.output
    assert "--out " not in result.output and "--out\n" not in result.output  # hidden alias


def test_a_named_set_in_a_named_folder_is_loaded_with_its_order(tmp_path: Path):
    needs("os")
    result = generate("os", "--output", str(tmp_path), "--name", "mine", *SMALL["os"])
    assert result.exit_code == 0, result.output
    tasks = load_os_tasks(tmp_path / "mine.jsonl")
    assert tasks.order == json.loads((tmp_path / "mine.order.json").read_text())
    assert len(tasks) == 30


def test_the_older_out_flag_still_names_the_file(tmp_path: Path):
    needs("db")
    path = tmp_path / "sets" / "db.jsonl"
    result = generate("db", "--out", str(path), "--seed", "3", *SMALL["db"])
    assert result.exit_code == 0, result.output
    assert load_db_tasks(path).order == json.loads((path.parent / "db.order.json").read_text())


def test_an_output_that_is_neither_folder_nor_jsonl_is_one_clear_error(tmp_path: Path):
    result = generate("kg", "--output", str(tmp_path / "tasks.txt"))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: --output {tmp_path / 'tasks.txt'} is neither a folder nor a .jsonl file; "
        "give a folder or a name ending in .jsonl"
    ]
    with pytest.raises(ConfigError):
        task_file(Path("x.json"), "db")
    assert task_file(None, "db") == Path("lifelong-gym-tasks/db/default.jsonl")
    assert task_file(tmp_path, "kg", "b") == tmp_path / "b.jsonl"


def test_an_interrupted_write_leaves_the_old_set(tmp_path: Path):
    path, order = write_task_set([{"index": 0}], [0], tmp_path / "s.jsonl")
    assert order == tmp_path / "s.order.json"

    def broken():
        yield {"index": 1}
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_task_set(broken(), [1], path)
    assert path.read_text() == '{"index": 0}\n' and order.read_text() == "[0]\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl", "s.order.json"]
    with pytest.raises(RuntimeError), replacing(tmp_path / "new.txt") as temporary:
        temporary.write_text("half")
        raise RuntimeError
    assert not (tmp_path / "new.txt").exists()


def test_the_os_generator_verifies_each_task_in_a_container(
    os_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    before = package_data_digest()
    result = generate("os", "--count", "30", "--seed", "2", "--image", os_image)  # 30 containers
    assert result.exit_code == 0, result.output
    assert package_data_digest() == before
    assert len(load_os_tasks(tmp_path / "lifelong-gym-tasks/os/default.jsonl")) == 30
