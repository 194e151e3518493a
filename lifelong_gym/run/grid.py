"""A grid of runs from one config: each environment of `grid.envs` with each method of
`grid.methods`, every cell an ordinary, resumable run in OUTPUT/ENV/METHOD.

A cell's settings are the config's shared settings, then its environment's, then its
method's (the more specific wins; callbacks add up in that order), then the command-line
flags. Every cell is checked before the first one runs. `grid.json` in OUTPUT lists the
cells, so that `lifelong-gym compare OUTPUT` reads the folder as the grid it is.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lifelong_gym.errors import LifelongGymError, RunAbortedError, RunConfigError
from lifelong_gym.results.folder import (
    CONFIG_FILE,
    METRICS_FILE,
    without_passwords,
    write_json_atomic,
)
from lifelong_gym.results.grid_compare import GRID_FILE, GridIndex, IndexedCell
from lifelong_gym.run.config import RunConfig, given_flags, setting_keys
from lifelong_gym.run.settings import validation_problems

GRID_KEY = "grid"
REFERENCE_METHOD = "standard"
CELL_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # a folder name on any system
GRID_FLAGS = {"env": "--env", "callbacks": "--callback"}  # what the cells themselves set


class GridSpec(BaseModel):
    """The `grid:` section: environments and methods by name."""

    model_config = ConfigDict(extra="forbid")

    envs: dict[str, dict[str, Any]] = Field(
        min_length=1, description="name -> the run settings of that environment"
    )
    methods: dict[str, list[str] | dict[str, Any]] = Field(
        min_length=1, description="name -> its callbacks, or a mapping of run settings"
    )


@dataclass(frozen=True)
class GridCell:
    """One run of the grid: an environment's name, a method's name and the run's config."""

    env: str
    method: str
    config: RunConfig

    @property
    def name(self) -> str:
        """`ENV/METHOD`, also its folder under the grid's output."""
        return f"{self.env}/{self.method}"


@dataclass(frozen=True)
class Grid:
    """Every cell of a grid config, environment by environment, methods in their order."""

    output: Path
    cells: tuple[GridCell, ...]

    @property
    def reference(self) -> str:
        """The method the others are compared with: `standard`, else the first."""
        methods = [cell.method for cell in self.cells]
        return REFERENCE_METHOD if REFERENCE_METHOD in methods else methods[0]

    def select(self, patterns: Sequence[str]) -> list[GridCell]:
        """The cells that `--only` patterns pick (all without any): `ENV` or `ENV/METHOD`,
        each part a glob; a pattern that picks nothing is one line listing the cells."""
        if not patterns:
            return list(self.cells)
        for pattern in patterns:
            if not any(_picks(pattern, cell) for cell in self.cells):
                names = ", ".join(cell.name for cell in self.cells)
                raise RunConfigError(f"--only {pattern} picks no cell; the grid's cells: {names}")
        return [cell for cell in self.cells if any(_picks(p, cell) for p in patterns)]

    def write_index(self) -> Path:
        """Write `grid.json`: the reference method and every cell with its folder."""
        self.output.mkdir(parents=True, exist_ok=True)
        path = self.output / GRID_FILE
        cells = [IndexedCell(env=c.env, method=c.method, folder=c.name, env_id=c.config.env)
                 for c in self.cells]  # fmt: skip
        write_json_atomic(path, GridIndex(reference=self.reference, cells=cells).model_dump())
        return path


def _picks(pattern: str, cell: GridCell) -> bool:
    return fnmatch.fnmatchcase(cell.name, pattern if "/" in pattern else f"{pattern}/*")


def is_grid(settings: dict[str, Any]) -> bool:
    """Whether a config file's settings are a grid's (they have a `grid:` section)."""
    return GRID_KEY in settings


def load_grid(settings: dict[str, Any], overrides: dict[str, Any]) -> Grid:
    """The grid of a config file's `settings`, the flags that were set on top of every cell;
    every cell checked (`RunConfig.check`), a bad one is one line naming the cell."""
    flags = given_flags(overrides)
    for key, flag in GRID_FLAGS.items():
        if key in flags:
            raise RunConfigError(
                f"{flag} does not go with a grid config: its grid names each cell's "
                "environment and callbacks (pick cells with --only ENV[/METHOD])"
            )
    try:
        spec = GridSpec.model_validate(settings[GRID_KEY])
    except ValidationError as error:
        raise RunConfigError(f"invalid grid: {validation_problems(error)}") from None
    shared = {key: value for key, value in settings.items() if key != GRID_KEY}
    output = flags.get("output", shared.get("output"))
    if output is None:
        raise RunConfigError("a grid config needs output: the folder that holds its cells")
    for name in [*spec.envs, *spec.methods]:
        if not CELL_PART.fullmatch(name):
            raise RunConfigError(
                f"grid name {name!r}: a name is a folder's, of letters, digits, _ . and -"
            )
    cells = tuple(
        _cell(env, setting_keys(env_settings), method, _method_settings(method_settings),
              shared, flags, Path(output))
        for env, env_settings in spec.envs.items()
        for method, method_settings in spec.methods.items()
    )  # fmt: skip
    return Grid(Path(output), cells)


def _method_settings(settings: list[str] | dict[str, Any]) -> dict[str, Any]:
    return {"callbacks": settings} if isinstance(settings, list) else setting_keys(settings)


def _cell(
    env: str,
    env_settings: dict[str, Any],
    method: str,
    method_settings: dict[str, Any],
    shared: dict[str, Any],
    flags: dict[str, Any],
    output: Path,
) -> GridCell:
    """One cell's config, checked; a problem is one line naming the cell."""
    name = f"{env}/{method}"
    parts = (("the shared settings", shared), (f"grid.envs.{env}", env_settings),
             (f"grid.methods.{method}", method_settings))  # fmt: skip
    callbacks: list[Any] = []
    if "env" not in env_settings:
        raise RunConfigError(f"grid.envs.{env} names no environment: give its env id (env: ...)")
    if "env" in method_settings:
        raise RunConfigError(f"grid.methods.{method} sets env; the environments are grid.envs'")
    for where, part in parts[1:]:
        if "output" in part:
            raise RunConfigError(
                f"grid cell {name}: {where} sets output; a cell's folder is OUTPUT/{name}"
            )
    for where, part in parts:
        given = part.get("callbacks", [])
        if not isinstance(given, list):
            raise RunConfigError(f"grid cell {name}: {where}: callbacks must be a list of specs")
        callbacks += given
    data = {**shared, **env_settings, **method_settings, **flags}
    data.update(callbacks=callbacks, output=output / env / method)
    try:
        config = RunConfig.model_validate(data)
        config.check()
    except ValidationError as error:
        raise RunConfigError(f"grid cell {name}: {validation_problems(error)}") from None
    except LifelongGymError as error:
        raise RunConfigError(f"grid cell {name}: {error}") from None
    return GridCell(env, method, config)


def run_finished(config: RunConfig) -> bool:
    """Whether `config`'s folder holds its whole stream already, run with this config (and
    its stateless twin, if it has one), with no errored session: what a grid skips without
    making its model (a cell with errored sessions is resumed, to say so or retry them)."""
    if config.stateless_baseline and not run_finished(config.stateless_twin()):
        return False
    saved, metrics = (_read_json(config.output / name) for name in (CONFIG_FILE, METRICS_FILE))
    if config.overwrite or saved is None or metrics is None:
        return False
    if saved.get("user") != without_passwords({"user": config.identity()})["user"]:
        return False  # another config: running it says what changed
    count = (saved.get("tasks") or {}).get("count")
    if not isinstance(count, int):
        return False
    wanted = count if config.max_tasks is None else min(config.max_tasks, count)
    if metrics.get("errored"):
        return False
    return isinstance(metrics.get("sessions"), int) and metrics["sessions"] >= wanted


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # absent or damaged: the run itself reads it and says what is wrong
    return data if isinstance(data, dict) else None


def run_grid(
    grid: Grid,
    cells: Sequence[GridCell],
    run_one: Callable[[RunConfig], None],
    say: Callable[[str], None],
) -> None:
    """Run `cells` of `grid` one after another, each run of each cell by `run_one`; a cell
    whose runs are all finished is skipped. A cell stopped by failures does not stop the
    grid: the stopped cells are named at the end, in one `RunAbortedError`."""
    say(f"grid of {len(grid.cells)} cells in {grid.output} ({grid.write_index().name})")
    stopped: list[str] = []
    for number, cell in enumerate(cells, start=1):
        runs = [run for run in cell.config.replicate_runs() if not run_finished(run)]
        where = f"cell {number}/{len(cells)} {cell.name}"
        if not runs:
            say(f"{where}: finished already, skipped")
            continue
        say(f"{where}: running into {cell.config.output}")
        for run in runs:
            try:
                run_one(run)
            except RunAbortedError as error:
                say(f"{where} stopped: {error}")
                stopped.append(cell.name)
                break
    if stopped:
        raise RunAbortedError(
            f"cells stopped by failures: {', '.join(stopped)}; fix the cause and run the "
            "same command again to go on"
        )
