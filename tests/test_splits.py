"""Train / validation task sets from the generators: disjoint seeds and no shared task text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lifelong_gym.cli import main
from lifelong_gym.errors import ConfigError
from lifelong_gym.splits import SPLITS, split_seed, task_texts, text_key


def generate(*args: str) -> None:
    result = CliRunner().invoke(main, ["generate", *args])
    assert result.exit_code == 0, result.output


def texts(path: Path, field: str) -> list[str]:
    return [
        text_key(json.loads(line)[field])
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def test_the_splits_of_one_seed_draw_from_different_seeds():
    seeds = {split_seed(seed, split) for seed in range(50) for split in SPLITS}
    assert len(seeds) == 50 * len(SPLITS)
    assert split_seed(4, None) == 4 and split_seed(4, "train") == split_seed(4, "train")
    with pytest.raises(ConfigError, match="split must be one of train, validation, test"):
        split_seed(0, "dev")


def check_splits(train: Path, validation: Path, again: Path, field: str, count: int) -> None:
    """The three sets are full; validation and `again` share no text with train."""
    made = {name: texts(path, field) for name, path in [("t", train), ("v", validation)]}
    repeat = texts(again, field)
    assert [len(made["t"]), len(made["v"]), len(repeat)] == [count] * 3
    assert len(set(made["t"])) == count  # no text twice within a set
    assert not set(made["t"]) & set(made["v"])
    assert not set(made["t"]) & set(repeat)  # the same seed and split, de-duplicated
    assert task_texts([train]) == set(made["t"])


@pytest.mark.parametrize("style", ["templated", "plain", "mixed"])
def test_db_train_and_validation_share_no_instruction(tmp_path: Path, style: str):
    common = ["db", "--count", "24", "--mysql", "", "--seed", "5", "--style", style]
    train, validation, again = (tmp_path / f"{n}.jsonl" for n in ("train", "validation", "again"))
    generate(*common, "--split", "train", "--output", str(train))
    generate(*common, "--split", "validation", "--output", str(validation), "--exclude", str(train))
    generate(*common, "--split", "train", "--output", str(again), "--exclude", str(train))
    check_splits(train, validation, again, "instruction", 24)
    assert json.loads(train.with_suffix(".order.json").read_text()) != list(range(24))


@pytest.mark.parametrize("kind", ["change", "question", "mixed"])
def test_os_train_and_validation_share_no_instruction(tmp_path: Path, kind: str):
    common = ["os", "--count", "30", "--no-verify", "--output", str(tmp_path), "--kind", kind]
    generate(*common, "--split", "train")
    train = tmp_path / "train.jsonl"
    generate(*common, "--split", "validation", "--exclude", str(train))
    generate(*common, "--split", "train", "--name", "again", "--exclude", str(train))
    check_splits(train, tmp_path / "validation.jsonl", tmp_path / "again.jsonl", "instruction", 30)


def test_kg_splits_ask_about_one_graph_and_share_no_question(tmp_path: Path):
    common = ["kg", "--scale", "0.2", "--per-length", "2"]  # the older spelling of --count 16
    first, second = tmp_path / "a", tmp_path / "b"
    generate(*common, "--split", "train", "--output", str(first))
    train = first / "train.jsonl"
    generate(*common, "--split", "validation", "--output", str(first), "--exclude", str(train))
    generate(*common, "--split", "train", "--output", str(second), "--exclude", str(train))
    (second / "train.jsonl").rename(second / "again.jsonl")
    check_splits(train, first / "validation.jsonl", second / "again.jsonl", "question", 16)
    assert (first / "graph.nt.gz").read_bytes() == (second / "graph.nt.gz").read_bytes()


def test_an_unreadable_exclude_file_is_one_clear_error(tmp_path: Path):
    result = CliRunner().invoke(
        main,
        ["generate", "os", "--count", "30", "--no-verify", "--output", str(tmp_path)]
        + ["--exclude", str(tmp_path / "missing.jsonl")],
    )
    assert result.exit_code == 1 and "missing.jsonl does not exist" in result.output
