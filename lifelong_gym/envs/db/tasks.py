"""DB task records: the benchmark's `db_bench` fields, and AgentBench's `dbbench` records."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from lifelong_gym.session import ChatMessage, Role
from lifelong_gym.skill_tables import SkillTaxonomy
from lifelong_gym.tasks import Task, TaskSet, load_task_set

from .actions import Answer, Operation
from .skills import TAXONOMY

WRITE_TYPES = {"INSERT", "UPDATE", "DELETE"}


class ColumnInfo(BaseModel):
    """One column: its name and SQL type (`INT`, `TEXT`, `DECIMAL(10,2)`, `DATE`, ...)."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str


class TableInfo(BaseModel):
    """The task's table: name, typed columns and initial rows."""

    model_config = ConfigDict(frozen=True)

    name: str
    column_info_list: tuple[ColumnInfo, ...]
    row_list: tuple[tuple[Any, ...], ...]

    @model_validator(mode="after")
    def _rows_fit_columns(self) -> TableInfo:
        width = len(self.column_info_list)
        if width == 0:
            raise ValueError(f"table {self.name!r} has no columns")
        if any(not c.name.strip() for c in self.column_info_list):
            raise ValueError(f"table {self.name!r} has a column without a name")
        for number, row in enumerate(self.row_list):
            if len(row) != width:
                raise ValueError(
                    f"row {number} of {self.name!r} has {len(row)} values for {width} columns"
                )
        return self


class AnswerInfo(BaseModel):
    """The ground truth: rows for a SELECT task, or the table hash after a write task."""

    model_config = ConfigDict(frozen=True)

    direct: tuple[tuple[Any, ...], ...] | None = None
    md5: str | None = None
    sql: str | None = None

    @model_validator(mode="after")
    def _exactly_one_truth(self) -> AnswerInfo:
        if (self.direct is None) == (self.md5 is None):
            raise ValueError("answer_info needs exactly one of `direct` and `md5`")
        return self


class DBTask(Task):
    """A database task: an instruction over one table, with its ground truth."""

    taxonomy: ClassVar[SkillTaxonomy] = TAXONOMY

    instruction: str
    table_info: TableInfo
    answer_info: AnswerInfo
    reference_sql: tuple[str, ...] = ()

    @property
    def is_query(self) -> bool:
        """Whether the task is answered with rows (else it is scored by the table hash)."""
        return self.answer_info.direct is not None

    def oracle_action(self, history: Sequence[ChatMessage]) -> Operation | Answer:
        """Run the reference statements one a turn, then answer with what the last returned."""
        done = sum(1 for message in history if message.role == Role.AGENT)
        if done < len(self.reference_sql):
            return Operation(self.reference_sql[done])
        if not self.is_query:
            return Answer("done")
        if self.reference_sql:  # answer with the rows the reference query returned
            return Answer(history[-1].content)
        return Answer(repr([tuple(row) for row in self.answer_info.direct or ()]))


def from_benchmark_record(key: str, record: dict[str, Any]) -> DBTask:
    """A task from a LifelongAgentBench `db_bench` record (also our own JSONL)."""
    table = record["table_info"]
    answer = dict(record["answer_info"])
    answer["direct"] = _decoded(answer.get("direct"))
    if answer.get("direct") is not None:
        answer["direct"] = [_as_row(row) for row in answer["direct"]]
    sql = answer.get("sql")
    return DBTask(
        index=int(record.get("sample_index", key)),
        skills=tuple(record.get("skill_list") or ()),
        instruction=record["instruction"],
        table_info=TableInfo(
            name=table["name"],
            column_info_list=tuple(ColumnInfo(**c) for c in table["column_info_list"]),
            row_list=tuple(tuple(r) for r in _decoded(table["row_list"])),
        ),
        answer_info=AnswerInfo(**answer),
        reference_sql=tuple(record.get("reference_sql") or ([sql] if sql else [])),
    )


_MD5_TEXT = re.compile(r"[0-9a-f]{32}")


def from_agentbench_record(key: str, record: dict[str, Any]) -> DBTask:
    """A task from an AgentBench `dbbench` JSONL record."""
    table = record["table"]
    info = table["table_info"]
    kinds = {str(t).upper() for t in record.get("type", [])}
    instruction = record["description"]
    if record.get("add_description"):
        instruction = f"{instruction}\n{record['add_description']}"
    if kinds & WRITE_TYPES:
        found = _MD5_TEXT.search(str(record.get("answer_md5", "")))
        if not found:
            raise ValueError("a write task without an answer_md5 hash")
        answer = AnswerInfo(md5=found.group(0))
        statements = tuple(
            record["label"] if isinstance(record["label"], list) else [record["label"]]
        )
        skills = tuple(sorted(kinds & WRITE_TYPES, key=str.lower))
    else:
        answer = AnswerInfo(direct=tuple((value,) for value in record["label"]))
        statements = ()
        skills = ("select",)
    return DBTask(
        index=int(key),
        skills=tuple(s.lower() for s in skills),
        instruction=instruction,
        table_info=TableInfo(
            name=table["table_name"],
            # AgentBench creates every column as TEXT whatever type it lists; its stored
            # hashes depend on that, so the table is built the same way here.
            column_info_list=tuple(
                ColumnInfo(name=c["name"], type="TEXT") for c in info["columns"]
            ),
            row_list=tuple(tuple(r) for r in info["rows"]),
        ),
        answer_info=answer,
        reference_sql=statements,
    )


def convert_record(key: str, record: dict[str, Any]) -> DBTask:
    """Either record format, told apart by its fields."""
    if "table_info" in record and "answer_info" in record:
        return from_benchmark_record(key, record)
    if "table" in record and "description" in record:
        return from_agentbench_record(key, record)
    raise ValueError(f"not a DB task record (fields: {sorted(record)[:8]})")


def load_db_tasks(source: str | Path | None = None) -> TaskSet[DBTask]:
    """The shipped set by name (default `default`), or a task file in any supported format."""
    return load_task_set(source, environment="db", default="default", convert=convert_record)


def to_record(task: DBTask) -> dict[str, Any]:
    """The task as a record of our JSONL format (the benchmark's field names)."""
    return {
        "sample_index": task.index,
        "instruction": task.instruction,
        "table_info": json.loads(task.table_info.model_dump_json()),
        "answer_info": json.loads(task.answer_info.model_dump_json()),
        "skill_list": list(task.skills),
        "reference_sql": list(task.reference_sql),
    }


def _decoded(value: Any) -> Any:
    """Nested rows, also when a columnar file (parquet) stores them as JSON or Python text."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return ast.literal_eval(value)


def _as_row(row: Any) -> list[Any]:
    return list(row) if isinstance(row, (list, tuple)) else [row]
