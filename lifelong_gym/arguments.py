"""Checking keyword arguments that come from text (CLI flags, YAML) against a signature."""

from __future__ import annotations

import importlib
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePath
from types import ModuleType
from typing import Any

import yaml
from pydantic import ConfigDict, TypeAdapter, ValidationError

from lifelong_gym.errors import ConfigError, LifelongGymError, RunConfigError

_LAX = ConfigDict(arbitrary_types_allowed=True)


def check_arguments(
    target: Callable[..., Any],
    arguments: Mapping[str, Any],
    what: str,
    *,
    also: Callable[..., Any] | None = None,
) -> None:
    """Raise a `ConfigError` naming the argument when `arguments` do not fit `target`.

    `target` is a class or function; `also` is where its `**kwargs` go (for an environment,
    the base class), so their names and types are checked too. An unknown name, or a value
    of the wrong type (`max_turns=abc`), is one line that lists what `target` accepts.
    """
    parameters = _parameters(target)
    if also is not None and any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        parameters = {**_parameters(also), **parameters}
    named = {name: p for name, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL,)}
    takes_any = any(p.kind == p.VAR_KEYWORD for p in named.values()) and also is None
    accepted = ", ".join(n for n, p in named.items() if p.kind != p.VAR_KEYWORD)
    for name, value in arguments.items():
        parameter = named.get(name)
        if parameter is None or parameter.kind == parameter.VAR_KEYWORD:
            if takes_any:
                continue
            raise ConfigError(f"{what} takes no argument {name!r}; its arguments: {accepted}")
        expected = parameter.annotation
        if expected is inspect.Parameter.empty:
            continue
        if _takes_function(expected):
            raise ConfigError(
                f"{what}: {name} takes a Python function, which text cannot give "
                "(pass it from Python)"
            )
        adapter = _adapter(expected)
        if adapter is None:
            continue
        try:
            adapter.validate_python(value)
        except ValidationError:
            raise ConfigError(
                f"{what}: {name} must be {_describe(expected)}, got {value!r}"
            ) from None


def keyword_dict(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """`key=value` pairs as a dict; a key given twice is a `ValueError` naming it (the last
    value silently winning would hide a typo)."""
    arguments: dict[str, Any] = {}
    for key, value in pairs:
        if key in arguments:
            raise ValueError(
                f"{key!r} is given twice ({arguments[key]!r} and {value!r}); give it once"
            )
        arguments[key] = value
    return arguments


def parse_flag_assignments(flag: str, items: Iterable[str]) -> dict[str, Any]:
    """A repeated `flag key=value` as keyword arguments; a bad item is one line naming `flag`."""
    try:
        return keyword_dict(parse_assignment(item) for item in items)
    except ValueError as error:
        raise RunConfigError(f"{flag} {error}") from None


def parse_assignment(item: str) -> tuple[str, Any]:
    """Split `key=value` into the key and the value read as YAML (`3` is an int, `x` text)."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"{item!r} is not key=value")
    return key.strip(), text_value(value)


def text_value(value: str) -> Any:
    """A value given as text, read as YAML (`3` is an int, `x` text, nothing is "")."""
    try:
        return yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError as error:
        raise ValueError(f"{value!r} is not valid YAML ({error.problem})") from None


# a comma that starts the next key=value (commas inside values such as [1, 2] stay)
_NEXT_KEY = re.compile(r",(?=\s*[A-Za-z_][\w-]*\s*=)")


def assignments(text: str) -> dict[str, Any]:
    """`key=value,key=value` as keyword arguments; a bad pair is a `ValueError` naming it."""
    return keyword_dict(parse_assignment(item) for item in _NEXT_KEY.split(text) if item.strip())


def import_user_module(name: str, error: type[LifelongGymError], what: str) -> ModuleType:
    """Import a module a user named; any failure in it is one `error` line naming `what`."""
    try:
        return importlib.import_module(name)
    except Exception as problem:  # noqa: BLE001 - a user's module may fail in any way
        missing = isinstance(problem, ModuleNotFoundError) and name.startswith(problem.name or "?")
        hint = " (is its folder on PYTHONPATH?)" if missing else ""
        raise error(
            f"{what}: cannot import module {name!r}: {type(problem).__name__}: {problem}{hint}"
        ) from None


def user_class(
    module_name: str, class_name: str, base: type, error: type[LifelongGymError], what: str
) -> type:
    """The class `module_name.class_name` a user named, a subclass of `base`; an import
    failure, a missing class or another kind of class is one `error` line naming `what`."""
    cls = getattr(import_user_module(module_name, error, what), class_name, None)
    if cls is None:
        raise error(f"{what}: module {module_name!r} has no {class_name!r}")
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise error(f"{what}: {module_name}.{class_name} is not a {base.__name__} subclass")
    return cls


def path_parameters(target: Callable[..., Any]) -> frozenset[str]:
    """The names of `target`'s parameters that take a file or folder (annotated with `Path`)."""
    return frozenset(
        name for name, parameter in _parameters(target).items() if _takes_path(parameter.annotation)
    )


def _takes_path(annotation: Any) -> bool:
    options = union_members(annotation)
    return any(isinstance(option, type) and issubclass(option, PurePath) for option in options)


def _parameters(target: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    function = target.__init__ if isinstance(target, type) else target
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - an annotation that cannot be resolved is not checked
        hints = {}
    return {
        name: parameter.replace(annotation=hints.get(name, inspect.Parameter.empty))
        for name, parameter in signature.parameters.items()
        if name != "self"
    }


def _adapter(annotation: Any) -> TypeAdapter | None:
    try:
        return TypeAdapter(annotation, config=_LAX)
    except Exception:  # noqa: BLE001 - a type pydantic cannot check is left to the callee
        return None


def _takes_function(annotation: Any) -> bool:
    """Whether a parameter takes only functions (and None): nothing a text value can be."""
    options = [option for option in union_members(annotation) if option is not type(None)]
    return bool(options) and all(
        option is Callable or typing.get_origin(option) is Callable for option in options
    )


def _describe(annotation: Any) -> str:
    names = {int: "an integer", float: "a number", str: "text", bool: "true or false"}
    described = [
        "one of " + ", ".join(repr(value) for value in typing.get_args(option))
        if typing.get_origin(option) is typing.Literal
        else names.get(option, getattr(option, "__name__", str(option)))
        for option in union_members(annotation)
        if option is not type(None)
    ]
    return " or ".join(dict.fromkeys(described)) or str(annotation)


def union_members(annotation: Any) -> tuple[Any, ...]:
    """The types a union annotation admits (a Literal stays whole), None's type among them;
    else the annotation alone."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return typing.get_args(annotation)
    return (annotation,)
