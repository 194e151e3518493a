"""The runner's own settings: where a run writes, which stream it plays, when it stops.

`RunSettings` is to `Runner` what `TrainingArguments` is to `transformers.Trainer`: one
validated object that the runner reads, never unpacked field by field. `RunConfig` (the
settings of a whole run from YAML or the command line) extends it with what builds the
environment, the agent and the callbacks, so the command line hands the runner its config
as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lifelong_gym.errors import RunConfigError
from lifelong_gym.metrics import DEFAULT_WINDOW
from lifelong_gym.orders import OrderName
from lifelong_gym.results.costs import Price, parse_price


class RunSettings(BaseModel):
    """What the runner does with an environment and an agent it is given."""

    model_config = ConfigDict(extra="forbid")

    output: Path | None = Field(None, description="output folder of the run (None: in memory)")
    max_tasks: int | None = Field(None, ge=1, description="stop after this many tasks")
    order: OrderName = Field("sample", description="task order (docs/runner.md)")
    seed: int | None = Field(None, description="seed of the order")
    max_consecutive_failures: int | None = Field(
        10, ge=1, description="stop after this many error statuses in a row (None: never)"
    )
    max_skipped_interactions: int = Field(
        10, ge=1, description="end a session whose callbacks skip this many turns in a row"
    )
    concurrency: int = Field(1, ge=1, description="tasks of the stream in flight at once")
    overwrite: bool = Field(False, description="start over instead of resuming")
    retry_errors: bool = Field(
        False,
        description="on resume, play the errored sessions again: from the first one on",
    )
    progress: bool = Field(True, description="show a progress bar")
    plots: bool = Field(True, description="write the learning-curve PNGs at the end")
    window: int = Field(DEFAULT_WINDOW, ge=1, description="sessions in the rolling success")
    metrics_every: int = Field(500, ge=1, description="write metrics.json every N sessions")
    price_per_mtok: str | float | None = Field(
        None, description="dollars per million tokens: PROMPT or PROMPT,GENERATED"
    )

    def price(self) -> Price | None:
        """The price per million tokens, if one was given; a bad one is one line."""
        return None if self.price_per_mtok is None else parse_price(str(self.price_per_mtok))

    def identity(self) -> dict[str, Any] | None:
        """The user's settings that a resumed run must match, beyond those the runner
        records itself (environment, tasks, order, seed, agent, callbacks): none here;
        `RunConfig` adds the specs it builds them from."""
        return None


def settings_with(settings: RunSettings | None, fields: dict[str, Any]) -> RunSettings:
    """`settings` (or the defaults) with `fields` set on top, validated; a bad one is one line."""
    if settings is not None and not isinstance(settings, RunSettings):
        raise RunConfigError(
            f"Runner's settings are a RunSettings (or a RunConfig), not a "
            f"{type(settings).__name__}: give the output folder as output=PATH"
        )
    base = settings if settings is not None else RunSettings()
    if not fields:
        return base
    try:
        return type(base).model_validate({**base.model_dump(), **fields})
    except ValidationError as error:
        raise RunConfigError(f"invalid run settings: {validation_problems(error)}") from None


def validation_problems(error: ValidationError) -> str:
    """Pydantic's errors as one line: each field and what is wrong with it."""
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in error.errors()
    )
