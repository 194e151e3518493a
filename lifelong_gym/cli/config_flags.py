"""The flags of a settings model, one per field: its name, type, default and description.

As `HfArgumentParser` makes a dataclass's fields flags, `model_flags(RunConfig)` makes each
field of the run's config a flag of `lifelong-gym run`, so that a new setting is one line
of the config. The flag is the field's name with `-` for `_`:

- a field that is off by default is `--NAME`, one that is on by default `--no-NAME`;
- a list or a mapping takes one item per flag, repeatable, under the singular name
  (`callbacks`: `--callback NAME[:key=value,...]`, `env_args`: `--env-arg KEY=VALUE`); a
  list item that is not text is read as YAML (`--model '{name: m, backend: hf}'`);
- a choice of words (`Literal`) is a choice, a number a number, a path a folder.

Every flag defaults to None, so that a flag not given leaves the config file's value.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any, Literal

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from lifelong_gym.arguments import parse_flag_assignments, text_value, union_members


def model_flags(model: type[BaseModel]) -> list[click.Option]:
    """A flag for each field of `model`: those it declares first, then those it inherits."""
    own = list(model.__annotations__)
    names = own + [name for name in model.model_fields if name not in own]
    return [field_flag(name, model.model_fields[name]) for name in names]


def field_flag(name: str, field: FieldInfo) -> click.Option:
    """The flag of one field."""
    flag = name.replace("_", "-")
    kind = _without_none(field.annotation)
    text = (field.description or name).strip()
    about = text[0].upper() + text[1:]
    if kind is bool:
        if field.default is True:
            return click.Option(
                [f"--no-{flag}", name], flag_value=False, default=None, help=f"Do not {text}."
            )
        return click.Option([f"--{flag}", name], is_flag=True, default=None, help=f"{about}.")
    about += _default_text(field.default)
    if typing.get_origin(kind) in (list, dict):
        metavar = "KEY=VALUE" if typing.get_origin(kind) is dict else _item_metavar(kind)
        return click.Option(
            [f"--{_singular(name)}", name],
            multiple=True,
            metavar=metavar,
            help=f"{about} (repeatable).",
        )
    return click.Option(
        [f"--{flag}", name],
        type=_click_type(kind, name),
        default=None,
        help=f"{about}.",
    )


def flag_settings(model: type[BaseModel], flags: dict[str, Any]) -> dict[str, Any]:
    """The values of `model_flags(model)` as settings: a repeated flag's items as the list
    or mapping of its field (None when it was not given); a bad item is one line."""
    settings = dict(flags)
    for name, field in model.model_fields.items():
        items = settings.get(name) or ()
        origin = typing.get_origin(_without_none(field.annotation))
        if origin is dict:
            settings[name] = parse_flag_assignments(f"--{_singular(name)}", items) or None
        elif origin is list:
            item_type = typing.get_args(field.annotation)[0]
            values = [item if item_type is str else text_value(item) for item in items]
            settings[name] = values or None
    return settings


def _item_metavar(kind: Any) -> str | None:
    """How `-h` shows one item of a list: text as text, anything else as YAML."""
    return None if typing.get_args(kind)[0] is str else "YAML"


def _singular(name: str) -> str:
    """The flag of one item of a list or mapping field: `env_args` is `env-arg`."""
    return name.replace("_", "-").removesuffix("s")


def _without_none(annotation: Any) -> Any:
    """`X | None` as X; a union of several types but None as the first of them."""
    kinds = [kind for kind in union_members(annotation) if kind is not type(None)]
    return str if str in kinds else kinds[0]


def _click_type(kind: Any, name: str) -> click.ParamType | type:
    """The click type of a field's values; a type with no flag form is a bug here."""
    if typing.get_origin(kind) is Literal:
        return click.Choice(typing.get_args(kind))
    if kind is Path:
        return click.Path(file_okay=False)
    if kind in (int, float, str):
        return kind
    raise TypeError(f"field {name!r}: no flag for values of type {kind!r}")


def _default_text(default: Any) -> str:
    """` (default X)` for a field with a default other than None, else nothing."""
    if default is PydanticUndefined or default is None:
        return ""
    return f" (default {default})"
