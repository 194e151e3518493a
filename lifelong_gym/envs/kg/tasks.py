"""The KG task record, and the converter from the benchmark's knowledge-graph records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from lifelong_gym.envs.kg.actions import FinalAnswer
from lifelong_gym.envs.kg.sexpr import (
    ACTIONS,
    VARIABLE_ACTIONS,
    ActionCall,
    actions_to_sexpr,
    parse_action,
    sexpr_to_actions,
)
from lifelong_gym.envs.kg.skills import TAXONOMY
from lifelong_gym.session import ChatMessage, Role
from lifelong_gym.skill_tables import SkillTaxonomy
from lifelong_gym.tasks import Task


class KGTask(Task):
    """A question about given entities, its logical form, reference actions and answers."""

    taxonomy: ClassVar[SkillTaxonomy] = TAXONOMY

    question: str
    entity_dict: dict[str, str]
    s_expression: str
    action_list: tuple[str, ...]
    answer_list: tuple[str, ...]
    qid: str = ""
    source: str = ""
    graph_sha256: str = ""  # the content hash of the graph it was generated on, if recorded

    def oracle_action(self, history: Sequence[ChatMessage]) -> ActionCall | FinalAnswer:
        """The next reference action, and after the last one the final answer."""
        done = sum(1 for message in history if message.role == Role.AGENT)
        if done < len(self.action_list):
            return parse_action(self.action_list[done])
        return FinalAnswer(f"#{self.answer_variable}")

    @property
    def answer_variable(self) -> int:
        """The number of the variable the reference action list ends with."""
        made = sum(1 for a in self.action_list if parse_action(a).name in VARIABLE_ACTIONS)
        return made - 1


def kg_task_from_record(key: str, record: dict[str, Any]) -> KGTask:
    """Convert one benchmark KG record (or one of ours) into a `KGTask`.

    Either `action_list` or `s_expression` may be missing; it is derived from the other.
    Raises ValueError with the reason when the record cannot be used.
    """
    for field in ("question", "entity_dict", "answer_list"):
        if field not in record:
            raise ValueError(f"the record has no {field!r}")
    actions = [str(a) for a in record.get("action_list") or []]
    s_expression = str(record.get("s_expression") or "")
    if not actions and not s_expression:
        raise ValueError("the record has neither an action_list nor an s_expression")
    if not actions:
        actions = sexpr_to_actions(s_expression)
    if not s_expression:
        s_expression = actions_to_sexpr(actions)
    names = [parse_action(a).name for a in actions]
    unknown = sorted(set(names) - set(ACTIONS))
    if unknown:
        raise ValueError(f"the action list uses unknown actions {unknown}")
    skills = record.get("skill_list") or list(dict.fromkeys(names))
    index = record.get("sample_index", key)
    return KGTask(
        index=int(index),
        skills=tuple(str(s) for s in skills),
        question=str(record["question"]),
        entity_dict={str(k): str(v) for k, v in dict(record["entity_dict"]).items()},
        s_expression=s_expression,
        action_list=tuple(actions),
        answer_list=tuple(_answer_text(a) for a in record["answer_list"]),
        qid=str(record.get("qid") or ""),
        source=str(record.get("source") or ""),
        graph_sha256=str(record.get("graph_sha256") or ""),
    )


def _answer_text(answer: Any) -> str:
    # AgentBench-style answers are dicts holding the id or value as `answer_argument`.
    if isinstance(answer, dict):
        return str(answer["answer_argument"])
    return str(answer)
