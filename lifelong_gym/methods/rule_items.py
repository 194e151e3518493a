"""Memory items made by a rule from a judged session, for an agent without a model.

Reasoning memory asks the agent's model for one item after each task; the oracle and the
scripted agents have none, so with `distiller="rule"` the item is written from the session
itself: a title from the task's skills, and the strategy stated abstractly from the actions
taken (the kind of statement or command, its clauses or options, how the answer was given),
with none of the task's own values (names, paths, literals). From a failure it is the
pitfall its final status shows. The reply is the three-line format `parse_memory_item`
reads, so a model trained on these replies writes what the method keeps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lifelong_gym.actions import ToolCall
from lifelong_gym.session import ChatMessage, Role
from lifelong_gym.tool_calls import parse_tool_call

from .memory_items import Source, ending, memory_item_reply
from .steps import abstract, actions

Step = tuple[str, str]
"""One action of a trajectory: its kind ("sql", "bash", "answer", "finish", or the name of
the function it called) and its body (the statement, the script, the answer)."""

_FENCED = re.compile(r"```(\w*)[^\n]*\n(.*?)```", re.DOTALL)
_FINAL = re.compile(r"Final Answer:\s*(.*)", re.DOTALL)
_ACT = re.compile(r"^\s*Act(?:ion)?:\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$", re.MULTILINE)
_TOOL_KINDS = {
    "execute_sql": "sql",
    "bash": "bash",
    "commit_final_answer": "answer",
    "final_answer": "answer",
    "answer": "answer",
    "finish": "finish",
}
_SQL_CLAUSES = (
    (r"\bDISTINCT\b", "DISTINCT"),
    (r"\bJOIN\b", "a JOIN"),
    (r"\bWHERE\b", "a WHERE filter"),
    (r"\bLIKE\b", "LIKE"),
    (r"\bBETWEEN\b", "BETWEEN"),
    (r"\bIN\s*\(", "IN"),
    (r"\bIS\s+(?:NOT\s+)?NULL\b", "a NULL test"),
    (r"\bCASE\b", "CASE"),
    (r"\bGROUP\s+BY\b", "GROUP BY"),
    (r"\bHAVING\b", "HAVING"),
    (r"\bORDER\s+BY\b", "ORDER BY"),
    (r"\bDESC\b", "a descending order"),
    (r"\bLIMIT\b", "LIMIT"),
    (r"\bOFFSET\b", "OFFSET"),
    (r"\(\s*SELECT\b", "a subquery"),
    (r"\bSET\b", "SET"),
    (r"\bVALUES\b", "VALUES"),
    (r"\bAS\b", "aliases (AS)"),
)
_SQL_FUNCTIONS = re.compile(
    r"\b(COUNT|SUM|AVG|MIN|MAX|ROUND|ABS|UPPER|LOWER|LENGTH|CONCAT|COALESCE|IFNULL|"
    r"SUBSTRING|YEAR|MONTH|DAY|DATEDIFF|DATE_FORMAT|CAST|TRIM|REPLACE|FLOOR|CEIL)\s*\(",
    re.IGNORECASE,
)
_CHANGES = {"INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "ALTER", "DROP"}
_SHELL_SPLIT = re.compile(r"\|\||&&|[|;&\n()`]|\$\(")
_SHELL_WORDS = {"for", "do", "done", "if", "then", "else", "fi", "while", "in", "sudo", "!"}
_COMMAND = re.compile(r"^[A-Za-z][\w.+-]*$")
_FLAG = re.compile(r"^--?[A-Za-z][\w-]*")
TITLE_FEATURES = 60
"""Characters of skills a title names after the task's kind (a title is a few words)."""
_PAST = {"run": "ran", "call": "called"}
_PITFALLS = {
    "completed": (
        "The judge found the answer wrong: re-read what the task asks for (which values, in "
        "which order, with which filters, or exactly which change) and check the result "
        "against it before answering."
    ),
    "agent_validation_failed": (
        "A reply did not follow the action format, which ends the task at once: give exactly "
        "one action a turn, written as the instructions show."
    ),
    "task_limit_reached": (
        "The turns ran out before an answer: plan the few steps the task needs and answer "
        "as soon as the result is in."
    ),
    "agent_context_limit": (
        "The conversation outgrew the model's context: keep replies short and ask only for "
        "the output the task needs."
    ),
}


def rule_memory_reply(
    turns: Sequence[ChatMessage], skills: Sequence[str], source: Source, status: str = ""
) -> str:
    """The rule's memory item about a judged task (`turns`: after its opening), written in
    the three-line format a model is asked for."""
    steps = steps_of(turns)
    kind = _kind(skills, steps)
    done = _done(steps)
    if source == "failure":
        tried = f"The failed attempt {_past(done)}." if done else "The failed attempt ran nothing."
        return memory_item_reply(
            f"Pitfall in {kind} tasks",
            f"Why an attempt at {kind} tasks failed{ending(status)}, and how to avoid it.",
            f"{tried} {_PITFALLS.get(status, _PITFALLS['completed'])}",
        )
    features = ", ".join(_human(skill) for skill in skills[1:3])
    features = features if len(features) < TITLE_FEATURES else _human(skills[1])[:TITLE_FEATURES]
    how, then = _answer(steps, turns)
    first = f"{done[0].upper()}{done[1:]}." if done else "Answer without running anything."
    return memory_item_reply(
        f"{kind[0].upper()}{kind[1:]} task" + (f": {features}" if features else ""),
        f"A way to solve {kind} tasks: {_short(steps)}, then {how}.",
        f"{first} {then}",
    )


def steps_of(turns: Sequence[ChatMessage]) -> list[Step]:
    """The agent's actions in `turns`, each as a `Step` (text or tool-call replies)."""
    return [_step(reply) for reply in actions(turns)]


def _step(reply: str) -> Step:
    if reply.lstrip().startswith(("{", "<tool_call>")):
        call = parse_tool_call(reply)
        if isinstance(call, ToolCall):
            kind = _TOOL_KINDS.get(call.name, call.name)
            return kind, " ".join(str(value) for value in call.arguments.values())
    final = _FINAL.search(reply)
    if final:
        return "answer", final.group(1).strip()
    fenced = _FENCED.search(reply)
    if fenced:
        return ("sql" if fenced.group(1).lower() == "sql" else "bash"), fenced.group(2).strip()
    act = _ACT.search(reply)
    if act:
        name = act.group(1).lower()
        return name, (act.group(2) or "").strip()
    return "reply", ""


def _done(steps: Sequence[Step]) -> str:
    """What the steps before the answer did, as a phrase ("run one SELECT statement ...")."""
    work = [(kind, body) for kind, body in steps if kind not in ("answer", "finish", "reply")]
    sql = [_statement(body) for kind, body in work if kind == "sql"]
    if sql:
        shapes = list(dict.fromkeys(sql))
        count = _count(len(sql), "SQL statement")
        return f"run {count}: " + "; then ".join(shapes[:2])
    scripts = [body for kind, body in work if kind == "bash"]
    if scripts:
        return f"run {_count(len(scripts), 'bash script')} using {_commands(scripts)}"
    calls = [kind for kind, _ in work]
    if calls:
        names = ", then ".join(dict.fromkeys(calls))
        return (
            f"call {names}, each on an entity the task gives or on the variable the call "
            "before it made"
        )
    return ""


def _statement(sql: str) -> str:
    """A SQL statement's shape: its verb, the functions and clauses it uses; no values."""
    plain = abstract(sql).upper()
    verb = (plain.split() or ["SQL"])[0]
    functions = list(dict.fromkeys(f.upper() for f in _SQL_FUNCTIONS.findall(plain)))
    clauses = [phrase for pattern, phrase in _SQL_CLAUSES if re.search(pattern, plain)]
    used = ([f"{_and(functions)} in its expressions"] if functions else []) + clauses
    return f"{_article(verb)} {verb} with {_and(used)}" if used else f"a plain {verb}"


def _commands(scripts: Sequence[str]) -> str:
    """The commands of shell scripts with their options, in order; no paths, no values."""
    found: list[str] = []
    lines = [line for script in scripts for line in script.splitlines()]
    for line in lines:
        for segment in _SHELL_SPLIT.split(abstract(line)):
            words = [w for w in segment.split() if "=" not in w.split("-")[0]]
            while words and words[0] in _SHELL_WORDS:
                words.pop(0)
            if not words or not _COMMAND.match(words[0]):
                continue
            flags = dict.fromkeys(m.group(0) for w in words[1:] if (m := _FLAG.match(w)))
            found.append(" ".join([words[0], *flags]))
    piped = any("|" in script.replace("||", "") for script in scripts)
    written = any(">" in script for script in scripts)
    extra = [" piping one into the next"] if piped else []
    extra += [" redirecting output into a file"] if written else []
    return _and(list(dict.fromkeys(found))[:6] or ["shell commands"]) + "".join(
        f",{e}" for e in extra
    )


def _answer(steps: Sequence[Step], turns: Sequence[ChatMessage]) -> tuple[str, str]:
    """How the task was ended: a short phrase and a sentence."""
    last = steps[-1] if steps else ("reply", "")
    shown = next((m.content for m in reversed(turns) if m.role == Role.USER), "")
    changed = any(
        kind == "sql" and (abstract(body).upper().split() or [""])[0] in _CHANGES
        for kind, body in steps
    )
    if last[0] == "finish":
        return "finish", "Then end with finish: the task asked for a change, not an answer."
    if last[0] != "answer":
        return "stop", "Then stop."
    value = last[1].strip()
    if changed:
        return "any short answer", (
            "Then finish with any short final answer: the changed table itself is checked."
        )
    if re.fullmatch(r"#\d+", value):
        return "the variable holding the result", (
            "Then answer with the variable that holds the result of the last call."
        )
    if value and value == shown.strip():
        return "the result as returned", (
            "Then give the last result, exactly as it was returned, as the final answer."
        )
    if value and value in shown:
        return "the value the output showed", (
            "Then answer with the value the last output showed, written as it was shown."
        )
    return "a short answer", "Then give a short final answer."


def _short(steps: Sequence[Step]) -> str:
    kinds = [kind for kind, _ in steps if kind not in ("answer", "finish", "reply")]
    if not kinds:
        return "no action first"
    if kinds[0] in ("sql", "bash"):
        what = "SQL statement" if kinds[0] == "sql" else "bash script"
        return _count(len(kinds), what)
    return f"{_and(list(dict.fromkeys(kinds)))} calls"


def _kind(skills: Sequence[str], steps: Sequence[Step]) -> str:
    """What kind of task it was: its first skill, else the kind of its first action."""
    if skills:
        return _human(skills[0])
    kinds = [kind for kind, _ in steps if kind not in ("answer", "finish", "reply")]
    return {"sql": "SQL", "bash": "shell"}.get(kinds[0], kinds[0]) if kinds else "short"


def _past(phrase: str) -> str:
    """`phrase` ("run ...", "call ...") in the past tense."""
    verb, _, rest = phrase.partition(" ")
    return f"{_PAST.get(verb, verb)} {rest}"


def _human(skill: str) -> str:
    return skill.replace("_", " ")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _count(number: int, what: str) -> str:
    return f"one {what}" if number == 1 else f"{number} {what}s"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)
