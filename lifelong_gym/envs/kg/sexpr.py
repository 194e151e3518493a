"""S-expressions of the benchmark's logical forms, and their action lists."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lifelong_gym.errors import SExprError
from lifelong_gym.tool_calls import ToolCall

# An expression is an atom (entity id, class or relation name) or a list of expressions.
SExpr = str | tuple["SExpr", ...]

# The seven actions and the names of their arguments (as tool parameters).
PARAMETERS: dict[str, tuple[str, ...]] = {
    "get_relations": ("entity",),
    "get_neighbors": ("entity", "relation"),
    "intersection": ("first", "second"),
    "get_attributes": ("entity",),
    "argmax": ("variable", "attribute"),
    "argmin": ("variable", "attribute"),
    "count": ("variable",),
}
ACTIONS = tuple(PARAMETERS)
# Actions that create a new variable; the others answer with a list of relation names.
VARIABLE_ACTIONS = frozenset({"get_neighbors", "intersection", "argmax", "argmin", "count"})

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_ACTION = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$", re.DOTALL)


def parse_sexpr(text: str) -> SExpr:
    """Parse one S-expression such as `(JOIN (R film.film.genre) m.0abc)`."""
    tokens = _TOKEN.findall(text)
    if not tokens:
        raise SExprError("empty S-expression")
    expr, end = _parse_at(tokens, 0)
    if end != len(tokens):
        raise SExprError(f"text after the end of the S-expression: {' '.join(tokens[end:])!r}")
    return expr


def _parse_at(tokens: list[str], position: int) -> tuple[SExpr, int]:
    token = tokens[position]
    if token == ")":
        raise SExprError("unbalanced ')' in S-expression")
    if token != "(":
        return token, position + 1
    items: list[SExpr] = []
    position += 1
    while position < len(tokens) and tokens[position] != ")":
        item, position = _parse_at(tokens, position)
        items.append(item)
    if position >= len(tokens):
        raise SExprError("unbalanced '(' in S-expression")
    return tuple(items), position + 1


def dump_sexpr(expr: SExpr) -> str:
    """The text of an S-expression, in the benchmark's spacing."""
    if isinstance(expr, str):
        return expr
    return "(" + " ".join(dump_sexpr(item) for item in expr) + ")"


@dataclass(frozen=True)
class ActionCall:
    """One action of an action list: its name and its argument strings."""

    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})"

    def key(self) -> str:
        """The call as `name(arg, ...)`, spaced one way."""
        return str(self)

    def text(self) -> str:
        """`Action: name(arg, ...)`."""
        return f"Action: {self}"

    def tool_call(self) -> ToolCall:
        """The call with its arguments named as the tool's parameters."""
        names = PARAMETERS.get(self.name, ())
        if len(names) != len(self.args):
            names = tuple(f"arg{i}" for i in range(len(self.args)))
        return ToolCall(self.name, dict(zip(names, self.args, strict=True)))


def parse_action(text: str) -> ActionCall:
    """Parse `name(arg, arg)` into an `ActionCall` (names and arity are not checked here)."""
    match = _ACTION.match(text)
    if match is None:
        raise SExprError(f"not an action call: {text!r}")
    inner = match.group(2).strip()
    args = tuple(a.strip() for a in inner.split(",")) if inner else ()
    return ActionCall(match.group(1), args)


def sexpr_to_actions(expr: SExpr | str) -> list[str]:
    """The action list that builds a logical form, variables numbered as they are made."""
    if isinstance(expr, str) and expr.lstrip().startswith("("):
        expr = parse_sexpr(expr)
    actions: list[ActionCall] = []
    result = _emit(expr, actions)
    if not result.startswith("#"):
        raise SExprError("a logical form must contain at least one JOIN")
    return [str(a) for a in actions]


def _emit(expr: SExpr, actions: list[ActionCall]) -> str:
    """Append the actions computing `expr`; return its variable name or entity id."""
    if isinstance(expr, str):
        return expr
    head = expr[0] if expr else None
    if head == "JOIN" and len(expr) == 3 and _is_reverse(expr[1]):
        relation = expr[1][1]
        source = _emit(expr[2], actions)
        actions.append(ActionCall("get_relations", (source,)))
        return _make(actions, "get_neighbors", source, relation)
    if head == "AND" and len(expr) == 3:
        left = _variable(_emit(expr[1], actions), "AND")
        right = _variable(_emit(expr[2], actions), "AND")
        return _make(actions, "intersection", left, right)
    if head in ("ARGMAX", "ARGMIN") and len(expr) == 3 and isinstance(expr[2], str):
        source = _variable(_emit(expr[1], actions), head)
        actions.append(ActionCall("get_attributes", (source,)))
        return _make(actions, head.lower(), source, expr[2])
    if head == "COUNT" and len(expr) == 2:
        return _make(actions, "count", _variable(_emit(expr[1], actions), "COUNT"))
    raise SExprError(f"no action sequence expresses {dump_sexpr(expr)!r}")


def _is_reverse(expr: SExpr) -> bool:
    return isinstance(expr, tuple) and len(expr) == 2 and expr[0] == "R"


def _variable(name: str, operator: str) -> str:
    if not name.startswith("#"):
        raise SExprError(f"{operator} over a bare entity has no action equivalent")
    return name


def _make(actions: list[ActionCall], name: str, *args: str) -> str:
    made = sum(1 for a in actions if a.name in VARIABLE_ACTIONS)
    actions.append(ActionCall(name, args))
    return f"#{made}"


def actions_to_sexpr(actions: Sequence[str]) -> str:
    """The logical form an action list builds: that of its last variable."""
    variables: list[SExpr] = []
    for text in actions:
        call = parse_action(text)
        if call.name not in VARIABLE_ACTIONS:
            continue
        args = [_resolve(a, variables) for a in call.args]
        if call.name == "get_neighbors" and len(args) == 2:
            variables.append(("JOIN", ("R", call.args[1]), args[0]))
        elif call.name == "intersection" and len(args) == 2:
            variables.append(("AND", args[0], args[1]))
        elif call.name in ("argmax", "argmin") and len(args) == 2:
            variables.append((call.name.upper(), args[0], call.args[1]))
        elif call.name == "count" and len(args) == 1:
            variables.append(("COUNT", args[0]))
        else:
            raise SExprError(f"wrong number of arguments in {text!r}")
    if not variables:
        raise SExprError("the action list makes no variable")
    return dump_sexpr(variables[-1])


def _resolve(arg: str, variables: list[SExpr]) -> SExpr:
    if not arg.startswith("#"):
        return arg
    try:
        return variables[int(arg[1:])]
    except (ValueError, IndexError):
        raise SExprError(f"variable {arg} is used before it is made") from None
