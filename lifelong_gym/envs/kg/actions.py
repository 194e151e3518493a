"""Reading an agent's reply and executing its action against the graph, with variables."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lifelong_gym.actions import InvalidReply
from lifelong_gym.envs.kg import sparql
from lifelong_gym.envs.kg.backends import KGBackend
from lifelong_gym.envs.kg.sexpr import (
    ACTIONS,
    PARAMETERS,
    ActionCall,
    SExpr,
    SExprError,
    parse_action,
)
from lifelong_gym.envs.kg.sparql import InvalidArgument
from lifelong_gym.errors import ActionError
from lifelong_gym.tool_calls import ToolCall, call_arguments, function_schema

_MARKER = re.compile(r"(Action|Final Answer)\s*:[ \t]*([^\n]*)")
_VARIABLE = re.compile(r"^#(\d+)$")

ARITY = {name: len(parameters) for name, parameters in PARAMETERS.items()}
# Actions whose first argument may be an entity id as well as a variable.
ENTITY_INPUTS = frozenset({"get_relations", "get_neighbors", "get_attributes"})


@dataclass(frozen=True)
class FinalAnswer:
    """The agent's `Final Answer: #N`, as the text after the colon."""

    target: str

    def key(self) -> str:
        """`Final Answer: #N`."""
        return f"Final Answer: {self.target.strip()}"

    def text(self) -> str:
        """`Final Answer: #N`."""
        return self.key()

    def tool_call(self) -> ToolCall:
        """`final_answer(variable)`."""
        return ToolCall("final_answer", {"variable": self.target.strip()})


_DESCRIPTIONS = {
    "get_relations": "The relations leaving an entity id or a variable.",
    "get_neighbors": "The entities reached from an entity or variable through a relation; "
    "a new variable.",
    "intersection": "The entities in both variables; a new variable.",
    "get_attributes": "The relations of an entity or variable whose values are numbers or dates.",
    "argmax": "The entities of a variable with the largest value of an attribute; a new variable.",
    "argmin": "The entities of a variable with the smallest value of an attribute; a new variable.",
    "count": "How many entities a variable holds; a new variable (only a final answer).",
}
TOOLS = (
    *(
        function_schema(
            name,
            _DESCRIPTIONS[name],
            **{p: "an entity id, variable #N or name" for p in parameters},
        )
        for name, parameters in PARAMETERS.items()
    ),
    function_schema(
        "final_answer", "Finish with the variable that holds the answer.", variable="#N"
    ),
)


def from_tool_call(call: ToolCall) -> ActionCall | FinalAnswer | InvalidReply:
    """The action of a tool call: one of the seven actions, or `final_answer(variable)`."""
    if call.name == "final_answer":
        values = call_arguments(call, ("variable",))
        return values if isinstance(values, InvalidReply) else FinalAnswer(values[0])
    if call.name not in PARAMETERS:
        known = ", ".join([*PARAMETERS, "final_answer"])
        return InvalidReply(f"there is no tool {call.name!r}; the tools are {known}")
    values = call_arguments(call, PARAMETERS[call.name])
    if isinstance(values, InvalidReply):
        return values
    return ActionCall(call.name, tuple(value.strip() for value in values))


def parse_reply(reply: str) -> ActionCall | FinalAnswer | InvalidReply:
    """The first action or final answer in a reply, or why it holds neither."""
    match = _MARKER.search(reply)
    if match is None:
        return InvalidReply(
            "the reply holds no action: write one line `Action: name(arguments)` "
            "or `Final Answer: #N`"
        )
    kind, rest = match.group(1), match.group(2).strip().removesuffix(".").rstrip()
    if kind == "Final Answer":
        return FinalAnswer(rest)
    try:
        return parse_action(rest)
    except SExprError as error:
        return InvalidReply(f"the action could not be read ({error})")


@dataclass
class Variable:
    """A variable: the logical form that made it, and the values it stands for."""

    expr: SExpr
    values: tuple[str, ...]
    final_only: bool = False  # made by count/argmax/argmin: only a final answer
    truncated: bool = False


@dataclass
class ActionExecutor:
    """Executes one task's actions, numbering the variables they make `#0`, `#1`, ..."""

    backend: KGBackend
    max_results: int
    variables: list[Variable] = field(default_factory=list)

    def run(self, call: ActionCall) -> str:
        """Execute an action; return the observation, or raise ActionError."""
        if call.name not in ARITY:
            raise ActionError(
                f"{call.name!r} is not an action; the actions are {', '.join(ACTIONS)}"
            )
        if len(call.args) != ARITY[call.name]:
            raise ActionError(
                f"{call.name} takes {ARITY[call.name]} argument(s), got {len(call.args)}"
            )
        try:
            return getattr(self, f"_{call.name}")(*call.args)
        except InvalidArgument as error:
            raise ActionError(str(error)) from None

    def answer(self, target: str) -> Variable:
        """The variable named as the final answer."""
        return self._variable(target, final=True)

    # -- the seven actions -------------------------------------------------------------

    def _get_relations(self, source: str) -> str:
        subject = self._input(source, "get_relations")
        return self._list(self.backend.relations(subject, self._limit), "relations")

    def _get_attributes(self, source: str) -> str:
        subject = self._input(source, "get_attributes")
        rows = self.backend.relations(subject, self._limit, numeric=True)
        return self._list(rows, "attributes")

    def _get_neighbors(self, source: str, relation: str) -> str:
        expr = (
            "JOIN",
            ("R", sparql.check_relation(relation)),
            self._input(source, "get_neighbors"),
        )
        return self._make(expr)

    def _intersection(self, left: str, right: str) -> str:
        return self._make(("AND", self._variable(left).expr, self._variable(right).expr))

    def _argmax(self, source: str, attribute: str) -> str:
        expr = ("ARGMAX", self._variable(source).expr, sparql.check_relation(attribute))
        return self._make(expr, final_only=True)

    def _argmin(self, source: str, attribute: str) -> str:
        expr = ("ARGMIN", self._variable(source).expr, sparql.check_relation(attribute))
        return self._make(expr, final_only=True)

    def _count(self, source: str) -> str:
        inner = self._variable(source).expr
        number = self.backend.count(inner)
        self.variables.append(Variable(("COUNT", inner), (number,), final_only=True))
        return f"Observation: variable #{len(self.variables) - 1}, which is the number {number}"

    # -- helpers ---------------------------------------------------------------------

    @property
    def _limit(self) -> int:
        return self.max_results + 1

    def _input(self, source: str, action: str) -> SExpr:
        if source.startswith("#") or action not in ENTITY_INPUTS:
            return self._variable(source).expr
        return sparql.check_entity(source)

    def _variable(self, name: str, *, final: bool = False) -> Variable:
        match = _VARIABLE.match(name)
        if match is None:
            raise ActionError(f"{name!r} is not a variable (variables look like #0)")
        number = int(match.group(1))
        if number >= len(self.variables):
            made = f"#0 to #{len(self.variables) - 1}" if self.variables else "none yet"
            raise ActionError(f"there is no variable {name} (variables made: {made})")
        variable = self.variables[number]
        if variable.final_only and not final:
            raise ActionError(
                f"{name} was made by count, argmax or argmin and can only be the final answer"
            )
        return variable

    def _list(self, rows: list[str], what: str) -> str:
        names = [v for v in rows if sparql.RELATION.match(v)]
        names = sorted(names)
        if len(names) > self.max_results:
            names = names[: self.max_results]
            return f"Observation: [{', '.join(names)}] (more {what} than {self.max_results})"
        return f"Observation: [{', '.join(names)}]"

    def _make(self, expr: SExpr, *, final_only: bool = False) -> str:
        rows = self.backend.entities(expr, self._limit)
        values = sorted(set(rows))
        truncated = len(values) > self.max_results
        variable = Variable(expr, tuple(values[: self.max_results]), final_only, truncated)
        self.variables.append(variable)
        name = f"#{len(self.variables) - 1}"
        if truncated:
            return (
                f"Observation: variable {name}, which holds more than {self.max_results} "
                "entities (only that many are kept for an answer)"
            )
        noun = "entity" if len(values) == 1 else "entities"
        return f"Observation: variable {name}, which holds {len(values)} {noun}"
