"""Loading DB tasks from every supported format, and AgentBench's stored table hashes."""

from __future__ import annotations

import json
import logging

import gymnasium as gym
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.envs.db.answer import parse_answer, row_overlap, rows_match, score_rows
from lifelong_gym.envs.db.backends import make_backend
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.tasks import TaskFileError

from .db_fixtures import solve, task_file, task_records

AGENTBENCH_DB = "agentbench/data/dbbench/standard.jsonl"
# A task whose label, run on a fresh table, does not give its stored hash on MySQL,
# SQLite or in any sql_mode: the stored hash was made from another statement.
AGENTBENCH_LABEL_MISMATCH = {225}
# Two UPDATEs compare text with a number: a server in strict mode (MariaDB's default, and so
# the embedded back-end) refuses them; AgentBench's server was not strict.
STRICT_MODE_REFUSALS = {278, 295}


def test_formats_load_the_same_tasks(tmp_path):
    records = task_records()
    expected = load_db_tasks(task_file(tmp_path))
    entry_dict = tmp_path / "entry_dict.json"
    entry_dict.write_text(json.dumps({str(r["sample_index"]): r for r in records}))
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(records))
    parquet = tmp_path / "tasks.parquet"
    # a columnar file cannot hold rows of mixed types: they are stored as JSON text
    flat = [
        {
            **r,
            "table_info": {**r["table_info"], "row_list": json.dumps(r["table_info"]["row_list"])},
            "answer_info": {
                **r["answer_info"],
                "direct": json.dumps(r["answer_info"].get("direct")),
            },
        }
        for r in records
    ]
    pq.write_table(pa.Table.from_pylist(flat), parquet)
    for path in (entry_dict, listed, parquet):
        loaded = load_db_tasks(path)
        assert [loaded[i] for i in loaded.indices] == [expected[i] for i in expected.indices]


def test_skipped_records_are_reported(tmp_path, caplog):
    records = task_records()
    broken = dict(records[0], sample_index=99, answer_info={"sql": "SELECT 1"})
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records, broken, {"foo": 1}]))
    with caplog.at_level(logging.WARNING):
        tasks = load_db_tasks(path)
    assert len(tasks) == 3
    assert [s.key for s in tasks.skipped] == ["99", "4"]
    assert "exactly one of `direct` and `md5`" in tasks.skipped[0].reason
    assert "skipped 2 of 5 records" in caplog.text
    for _ in range(3):  # the copies of a vector environment read the file again: no new line
        load_db_tasks(path)
    assert caplog.text.count("skipped 2 of 5 records") == 1


def test_a_file_read_again_gives_the_same_tasks_until_its_content_changes(tmp_path):
    path = task_file(tmp_path)
    first, again = load_db_tasks(path), load_db_tasks(path)
    assert first is not again and first.order is not again.order  # each its own set
    assert all(first[i] is again[i] for i in first.indices)  # the frozen tasks, read once
    text = path.read_text()
    start = text.index('"instruction": "') + len('"instruction": "')
    letter = "Q" if text[start] != "Q" else "Z"
    path.write_text(text[:start] + letter + text[start + 1 :])  # the same size, within a tick
    reread = load_db_tasks(path)
    assert [reread[i].instruction for i in reread.indices] != [
        first[i].instruction for i in first.indices
    ]


def test_bad_task_files_are_clear_errors(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(TaskFileError, match="is empty"):
        load_db_tasks(empty)
    junk = tmp_path / "junk.jsonl"
    junk.write_text("{not json\n")
    with pytest.raises(TaskFileError, match="junk.jsonl:1 is not JSON"):
        load_db_tasks(junk)
    other = tmp_path / "other.jsonl"
    other.write_text('{"question": "x"}\n')
    with pytest.raises(TaskFileError, match="holds no db task"):
        load_db_tasks(other)


@pytest.mark.parametrize(
    "answer, truth, ok",
    [
        ("[('a', 1)]", [("a", 1)], True),
        ("[('a', 1.0000001)]", [("a", 1)], True),
        ("[('a', 1.001)]", [("a", 1)], False),
        ('"a"', [("a",)], True),
        ("a", [("a",)], True),
        ("42", [(42,)], True),
        ("[(2,), (1,)]", [(1,), (2,)], False),
        ("[('A',)]", [("a",)], False),
        ("[None]", [(None,)], True),
    ],
)
def test_answer_comparison(answer, truth, ok):
    assert rows_match(parse_answer(answer), truth) is ok


def _agentbench_write_tasks(external_dir):
    tasks = load_db_tasks(external_dir / AGENTBENCH_DB)
    return [t for t in tasks if not t.is_query]


def _matches(backend, tasks):
    found = set()
    for task in tasks:
        backend.start(task.table_info)
        for statement in task.reference_sql:
            backend.execute(statement)
        if backend.table_hash(task.table_info) == task.answer_info.md5:
            found.add(task.index)
    backend.close()
    return found


def test_agentbench_hashes_reproduced_on_mariadb(external_dir, mysql_url):
    """Every AgentBench INSERT/UPDATE task's stored hash, from its label run on MariaDB."""
    tasks = _agentbench_write_tasks(external_dir)
    assert len(tasks) == 200
    # AgentBench's server was not in strict mode: two UPDATEs compare text with numbers.
    matched = _matches(make_backend("mysql", mysql_url, sql_mode=""), tasks)
    missed = {t.index for t in tasks} - matched
    print(f"AgentBench write tasks: {len(matched)} of {len(tasks)} hashes reproduced on MariaDB")
    assert missed == AGENTBENCH_LABEL_MISMATCH


def test_agentbench_hashes_on_sqlite(external_dir):
    """On SQLite as on a strict MariaDB: case-insensitive matches, text-number writes refused."""
    tasks = _agentbench_write_tasks(external_dir)
    matched = _matches(make_backend("sqlite"), tasks)
    missed = {t.index for t in tasks} - matched
    assert missed == AGENTBENCH_LABEL_MISMATCH | STRICT_MODE_REFUSALS


def test_agentbench_hashes_on_strict_mariadb_equal_sqlite(external_dir, mysql_url):
    tasks = _agentbench_write_tasks(external_dir)
    matched = _matches(make_backend("mysql", mysql_url), tasks)
    missed = {t.index for t in tasks} - matched
    assert missed == AGENTBENCH_LABEL_MISMATCH | STRICT_MODE_REFUSALS


def test_agentbench_oracle_on_sqlite(external_dir):
    env = gym.make("LifelongDB-v0", tasks=str(external_dir / AGENTBENCH_DB))
    tasks = env.unwrapped.tasks
    wrong = [i for i in tasks.indices if solve(env, i)["outcome"] != "correct"]
    env.close()
    assert set(wrong) == AGENTBENCH_LABEL_MISMATCH | STRICT_MODE_REFUSALS


@pytest.mark.parametrize(
    "answer, truth, overlap",
    [
        ("[('a', 1), ('b', 2)]", [("b", 2), ("a", 1)], 1.0),
        ("[('a', 1.0000001)]", [("a", 1), ("b", 2)], 0.5),
        ("[('a', 1), ('a', 1), ('c', 3)]", [("a", 1), ("b", 2)], 1 / 3),
        ("[]", [], 1.0),
        ("[('x',)]", [], 0.0),
    ],
)
def test_row_overlap_is_partial_credit_in_any_order(answer, truth, overlap):
    assert row_overlap(parse_answer(answer), truth) == pytest.approx(overlap)


@pytest.mark.parametrize(
    "answer, truth",
    [
        ("[('a', 1), ('b', 2.5)]", (("a", 1), ("b", 2.5))),
        ("[(1, True, None)]", ((1.0, 1, None),)),
        ("[(1e999,)]", ((float("inf"),),)),
        ("[(10**400,)]", ((10**400,),)),
        ("[(1+0j,)]", ((1,),)),  # equal in Python, not to the benchmark
        ("[([1],)]", ((1,),)),
        ("[('a',), ('b',)]", (("a", "b"),)),  # a one-row truth given as a column
        ("[()]", (("a",),)),
        ("[]", ()),
        ("[(-0.0,)]", ((0.0,),)),
    ],
)
def test_score_rows_is_rows_match_and_row_overlap(answer, truth):
    rows = parse_answer(answer)
    ok = rows_match(rows, truth) or (
        len(truth) == 1 and all(rows) and rows_match([tuple(r[0] for r in rows)], truth)
    )
    assert score_rows(rows, truth) == (ok, row_overlap(rows, truth))
