"""`lifelong-gym generate db|os|kg`: one flag set, one writer, never into the package's data."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.envs.os.tasks import load_os_tasks
from lifelong_gym.errors import ConfigError
from lifelong_gym.generation import replacing, task_file, write_task_set
from lifelong_gym.tasks import DATA_DIR

SMALL = {
    "db": ["--count", "25", "--mysql", ""],
    "os": ["--count", "30", "--no-verify"],
    "kg": ["--count", "16", "--scale", "0.1"],
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
    for flag in ("--output", "--name", "--count", "--seed", "--split", "--exclude", "-h"):
        assert flag in result.output
    assert "--out " not in result.output and "--out\n" not in result.output  # hidden alias
    assert "--per-length" not in result.output  # kg's older spelling of --count, hidden
    options = result.output.split("Options:")[1]
    assert options.count("[default:") >= 3  # --name, --count, --seed and the env's own
    assert "--count INTEGER RANGE" in options and "Usage:" in result.output  # Click's help


@pytest.mark.parametrize("environment", sorted(SMALL))
@pytest.mark.parametrize("count", ["0", "-3"])
def test_a_count_below_one_is_refused_in_one_line(
    environment: str, count: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", environment, "--count", count])
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: Invalid value for '--count': {count} is not in the range")
    assert line.endswith(f"generate {environment} -h`)")
    assert not (tmp_path / "lifelong-gym-tasks").exists()


def test_kg_count_is_spread_over_the_lengths_and_per_length_still_works(tmp_path: Path):
    needs("kg")
    result = generate("kg", "--count", "10", "--scale", "0.1", "--output", str(tmp_path))
    assert result.exit_code == 0, result.output
    lengths = [len(json.loads(line)["action_list"]) for line in open(tmp_path / "default.jsonl")]
    assert sorted(lengths) == [2, 2, 3, 3, 4, 5, 6, 7, 8, 9]  # the shorter ones get the rest
    both = CliRunner().invoke(main, ["generate", "kg", "--per-length", "2", "--count", "16"])
    assert both.exit_code == 1 and "give one of them" in both.output


def test_small_sets_are_made_and_summed_up_in_one_line(tmp_path: Path):
    """Any --count works in every generator (os took no fewer than 30, db any); a set too
    small to cover every skill says so in one line, not a line per skill."""
    needs("os")
    for environment, flags in [("db", ["--mysql", ""]), ("os", ["--no-verify"])]:
        out = tmp_path / environment
        result = generate(environment, "--count", "5", "--output", str(out), *flags)
        assert result.exit_code == 0, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 3, result.output  # wrote ..., the coverage, how to use them
        assert "skills covered (a larger --count covers them all)" in lines[1]
        assert len((out / "default.jsonl").read_text().splitlines()) == 5


def test_the_db_generator_says_up_front_which_mysql_server_it_uses(tmp_path: Path):
    needs("db")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"mysql://root@127.0.0.1:{probe.getsockname()[1]}"
    result = generate("db", "--count", "3", "--output", str(tmp_path), "--mysql", url)
    assert result.exit_code == 0, result.output
    assert (
        result.stderr.splitlines()[0]
        == f"checking every task on MySQL at {url} (--mysql '' for none)"
    )
    assert "not checking on MySQL" in result.stderr.splitlines()[1]
    assert (
        "checking"
        not in generate("db", "--count", "3", "--output", str(tmp_path), "--mysql", "").stderr
    )


def test_a_named_set_in_a_named_folder_is_loaded_with_its_order(tmp_path: Path):
    needs("os")
    result = generate("os", "--output", str(tmp_path), "--name", "mine", *SMALL["os"])
    assert result.exit_code == 0, result.output
    tasks = load_os_tasks(tmp_path / "mine.jsonl")
    assert tasks.order == json.loads((tmp_path / "mine.order.json").read_text())
    assert len(tasks) == 30


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
