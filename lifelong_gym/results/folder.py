"""A run's output folder: finished sessions as JSON Lines, plus config, state and metrics.

`sessions.jsonl` is the record of the run: one line per finished session, appended with
a single `write` as soon as the session ends. When a session changed the callbacks'
state, its line says so (`"state_changed": true`) and `state.json` (the states and the
count of sessions they follow) is replaced atomically right after it (write a temporary
file, then `os.replace`); runs whose callbacks keep no state never rewrite it. A session
whose line is on disk but whose state is not (the process was killed in between) is
dropped on resume and run again, so a kill loses at most the session in flight.

Errored sessions (`lifelong_gym.session.ERROR_STATUSES`) can be played again
(`--retry-errors`), as if they had never errored, so the callbacks' state from before the
first one is kept: just before the line of the first errored session of the record is
appended, `state.before-error.json` gets a copy of `state.json` as it is then (the
`position` of that session added; none when no callback keeps state). A retry
(`cut_at_first_error`) cuts the record back to just before the first errored session:
it writes the cut as a journal, `retry.json` (where `sessions.jsonl` is cut, the size of
`sessions.retried.jsonl` before, the state to restore), then copies the lines cut off to
the end of `sessions.retried.jsonl`, puts the kept state back in `state.json`, truncates
`sessions.jsonl`, and deletes the journal. A process killed anywhere in between leaves the
journal, and the next `load` finishes the cut from it (each step can be done again).

A full disk stops the run with one `RunDirectoryError` (`disk_space_of`); a line the disk
cut short is cut back off, so the folder stays readable, and the same command resumes
once there is space.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lifelong_gym.errors import RunDirectoryError
from lifelong_gym.metrics import format_status_counts
from lifelong_gym.results.content import comparable, refuse_changed_content
from lifelong_gym.session import Session

STATE_CHANGED = "state_changed"
SESSIONS_FILE = "sessions.jsonl"
STATE_FILE = "state.json"
CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.json"
COSTS_FILE = "costs.jsonl"  # each session's cost (lifelong_gym.results.costs)
COST_SUMMARY_FILE = "cost.json"
PROBES_FILE = "probes.jsonl"  # the probe episodes (lifelong_gym.run.probes)
STATE_BEFORE_ERROR_FILE = "state.before-error.json"
RETRY_FILE = "retry.json"  # the journal of a cut back to the first errored session
RETRIED_FILE = "sessions.retried.jsonl"  # the sessions retries cut off the record
LOCK_FILE = ".lock"
RUN_FILES = (
    SESSIONS_FILE,
    STATE_FILE,
    STATE_BEFORE_ERROR_FILE,
    RETRY_FILE,
    RETRIED_FILE,
    CONFIG_FILE,
    METRICS_FILE,
    COSTS_FILE,
    COST_SUMMARY_FILE,
    PROBES_FILE,
)
REPAIR = "the folder was edited or damaged: repair the file or start over with --overwrite"
REPLICATE_PREFIX = "seed-"
URL_PASSWORD = re.compile(r"(://[^:/@\s\"]+):[^@/\s\"]+@")  # mysql://user:password@host


def replicate_folder(output: Path, seed: int) -> Path:
    """Where the replicate of `seed` of a run with `--replicates K` writes: OUTPUT/seed-N."""
    return output / f"{REPLICATE_PREFIX}{seed}"


def replicates_in(folder: Path) -> list[Path]:
    """The replicate runs in a folder of them (its `seed-N` runs, by seed); none in a run."""
    if (folder / SESSIONS_FILE).is_file() or not folder.is_dir():
        return []
    seeds = {
        int(path.name.removeprefix(REPLICATE_PREFIX)): path
        for path in folder.iterdir()
        if path.name.startswith(REPLICATE_PREFIX)
        and path.name.removeprefix(REPLICATE_PREFIX).lstrip("-").isdigit()
        and (path / SESSIONS_FILE).is_file()
    }
    return [seeds[seed] for seed in sorted(seeds)]


def holds_run(folder: Path) -> bool:
    """Whether `folder` holds a run (its config or its sessions)."""
    return (folder / CONFIG_FILE).is_file() or (folder / SESSIONS_FILE).is_file()


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace `path` with `data` as JSON, so readers see the old file or the new one."""
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True))


def write_text_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` (written beside it, then moved into place); a write that
    fails (a full disk) leaves the old file and no temporary one."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


def append_whole(descriptor: int, data: bytes) -> None:
    """Append `data` to a file opened with O_APPEND, all of it or nothing: a write the disk
    cuts short is cut back off the file before its error is raised."""
    size = os.fstat(descriptor).st_size
    remaining = memoryview(data)
    try:
        while remaining:
            remaining = remaining[os.write(descriptor, remaining) :]
    except OSError:
        os.ftruncate(descriptor, size)
        raise


@contextmanager
def disk_space_of(folder: Path, then: str) -> Iterator[None]:
    """A disk (or quota) that fills up under `folder` as one line: free space, then `then`."""
    try:
        yield
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise RunDirectoryError(
            f"{error.strerror.lower()} for the run folder {folder}: free space there, then {then}"
        ) from None


def read_sessions(path: Path) -> tuple[list[Session], list[int], list[bool]]:
    """The sessions of a `sessions.jsonl`, where each line ends, and which changed state.

    Bytes after the last newline (a write cut short by a killed process) are ignored; a
    damaged complete line is an error.
    """
    if not path.exists():
        return [], [], []
    complete, newline, _torn = path.read_bytes().rpartition(b"\n")
    sessions: list[Session] = []
    ends: list[int] = []
    changed: list[bool] = []
    offset = 0
    for number, line in enumerate(complete.split(b"\n") if newline else [], start=1):
        offset += len(line) + 1
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            changed.append(bool(record.pop(STATE_CHANGED, False)))
            session = Session.model_validate(record)
        except (ValueError, ValidationError, AttributeError, TypeError) as error:
            raise RunDirectoryError(
                f"{path}:{number} is not a session record ({error}); {REPAIR}"
            ) from None
        if not session.finished:
            raise RunDirectoryError(
                f"{path}:{number} records a session that is {session.status.value}, but only "
                f"finished sessions are recorded; {REPAIR}"
            )
        sessions.append(session)
        ends.append(offset)
    return sessions, ends, changed


@dataclass(frozen=True)
class RetryCut:
    """The sessions a retry cut off the record: from `position` (0-based, the first errored
    session's) to the end."""

    position: int
    sessions: list[Session]

    def describe(self) -> str:
        """What is played again, and why, as one line."""
        errored = Counter(s.status.value for s in self.sessions if s.errored)
        statuses = format_status_counts(errored)
        after = len(self.sessions) - 1
        seen = f", and the {after} after the first, which saw it" if after else ""
        return (
            f"retrying from session {self.position + 1}: playing {len(self.sessions)} "
            f"sessions again, {sum(errored.values())} errored ({statuses}){seen}; the "
            f"sessions cut off are kept in {RETRIED_FILE}"
        )


class RunDirectory:
    """The output folder of one run: a lock, the session record, config, state, metrics."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        missing = [folder for folder in (self.path, *self.path.parents) if not folder.exists()]
        self._made = missing[-1] if missing else None  # the outermost folder made here
        self.path.mkdir(parents=True, exist_ok=True)
        self.held_run = holds_run(self.path)
        self._lock = (self.path / LOCK_FILE).open("w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise RunDirectoryError(
                f"{self.path} is in use by another run; wait for it or choose another output"
            ) from None
        self._sessions_fd: int | None = None
        self.sessions_done = 0

    @property
    def log_folder(self) -> Path | None:
        """Where the run's log (`run.log`) goes: this folder once it holds a run that is
        kept (one resumed, or with a session recorded); None before."""
        return self.path if self.held_run or self.recorded_anything else None

    @property
    def sessions_path(self) -> Path:
        """Where the finished sessions are recorded."""
        return self.path / SESSIONS_FILE

    def read_json(self, name: str) -> Any:
        """A JSON object file of the run, or None when it is absent; damage is an error."""
        file = self.path / name
        if not file.exists():
            return None
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as error:
            raise RunDirectoryError(f"{file} is not JSON ({error}); {REPAIR}") from None
        if not isinstance(data, dict):
            kind = type(data).__name__
            raise RunDirectoryError(f"{file} holds a {kind}, not an object; {REPAIR}")
        return data

    def refuse_other_config(
        self, config: dict[str, Any], keys: tuple[str, ...] | None = None
    ) -> None:
        """Refuse to resume a run that was made with another config (or its `keys` only),
        or over content (tasks, a graph) that changed since: paths compare by content."""
        saved = self.read_json(CONFIG_FILE)
        if saved is None:
            return
        config = without_passwords(config)
        refuse_changed_content(self.path, saved, config)
        saved, config = comparable(saved, config)
        if keys is not None:
            saved = {key: saved.get(key) for key in keys}
            config = {key: config.get(key) for key in keys}
        if saved != config:
            changes = "; ".join(config_differences(saved, config)[:6])
            raise RunDirectoryError(
                f"{self.path} holds a run with another config ({changes}); to resume it, "
                "run it with its own config; to start over there, pass --overwrite "
                "(overwrite=True); or choose another output folder"
            )

    def write_config(self, config: dict[str, Any]) -> None:
        """Write the run's config, the passwords of its URLs masked (never on disk)."""
        self.write_json(CONFIG_FILE, without_passwords(config))

    def write_json(self, name: str, data: Any) -> None:
        """Replace a JSON file of the run atomically."""
        write_json_atomic(self.path / name, data)

    def clear(self) -> None:
        """Delete the run's own files (sessions, state, config, metrics), nothing else."""
        self._close_sessions()
        for name in RUN_FILES:
            (self.path / name).unlink(missing_ok=True)
        self.sessions_done = 0

    def load(self) -> tuple[list[Session], dict[str, Any]]:
        """The sessions done so far and the callbacks' states, repairing a torn tail.

        When the process died after a session's line but before its state, that line is
        dropped so that the session is run again with the state it started from; a retry's
        cut that a kill interrupted is finished first.
        """
        if (journal := self.read_json(RETRY_FILE)) is not None:
            self._finish_cut(journal)
        sessions, ends, changed = read_sessions(self.sessions_path)
        state = self.read_json(STATE_FILE) or {"sessions": 0, "callbacks": {}}
        saved, callbacks = state.get("sessions"), state.get("callbacks", {})
        if not isinstance(saved, int) or isinstance(saved, bool) or not isinstance(callbacks, dict):
            raise RunDirectoryError(
                f"{self.path / STATE_FILE} is not a callback state (it needs an integer "
                f"'sessions' and an object 'callbacks'); {REPAIR}"
            )
        last_change = max((i + 1 for i, c in enumerate(changed) if c), default=0)
        if last_change == len(sessions) and last_change == saved + 1:
            sessions.pop()  # killed between the line and its state
            last_change = max((i + 1 for i, c in enumerate(changed[:-1]) if c), default=0)
        if last_change != saved:
            raise RunDirectoryError(
                f"{self.path}: {STATE_FILE} follows session {saved} but {SESSIONS_FILE} "
                f"last changed the callbacks' state at session {last_change}; the folder "
                "was edited or damaged: start over with --overwrite"
            )
        good = ends[len(sessions) - 1] if sessions else 0
        if self.sessions_path.exists() and self.sessions_path.stat().st_size != good:
            os.truncate(self.sessions_path, good)
        self.sessions_done = len(sessions)
        return sessions, dict(callbacks)

    def append_session(self, session: Session, callback_states: dict[str, Any] | None) -> None:
        """Record a finished session; then, if given (they changed), the callbacks' states."""
        if self._sessions_fd is None:
            self._sessions_fd = os.open(
                self.sessions_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
            )
        line = session.record()
        if callback_states is not None:
            line = line[:-1] + f',"{STATE_CHANGED}":true}}'.encode()
        append_whole(self._sessions_fd, line + b"\n")
        self.sessions_done += 1
        if callback_states is not None:
            state = {"sessions": self.sessions_done, "callbacks": callback_states}
            self.write_json(STATE_FILE, state)

    def keep_state_before_error(self, position: int) -> None:
        """Keep the callbacks' state as it is now, before the line of the first errored
        session (at `position`) is appended: what a retry restores."""
        state = self.read_json(STATE_FILE)
        self.write_json(STATE_BEFORE_ERROR_FILE, {"position": position, "state": state})

    def cut_at_first_error(self) -> RetryCut | None:
        """Cut the record back to just before its first errored session, with the callbacks'
        state of that point (see the module's docstring); None when nothing errored."""
        sessions, ends, _changed = read_sessions(self.sessions_path)
        first = next((i for i, session in enumerate(sessions) if session.errored), None)
        if first is None:
            return None
        retried = self.path / RETRIED_FILE
        journal = {
            "cut_at": ends[first - 1] if first else 0,
            "retried_size": retried.stat().st_size if retried.exists() else 0,
            "state": self._state_before(first),
        }
        self.write_json(RETRY_FILE, journal)
        self._finish_cut(journal)
        return RetryCut(first, sessions[first:])

    def _state_before(self, position: int) -> dict[str, Any] | None:
        """The callbacks' state before the session at `position`: the one kept for it, or
        `state.json` when no session from there on changed it (a folder of an earlier
        version keeps none)."""
        kept = self.read_json(STATE_BEFORE_ERROR_FILE)
        if kept is not None and kept.get("position") == position:
            return kept.get("state")
        state = self.read_json(STATE_FILE)
        saved = 0 if state is None else state.get("sessions")
        if isinstance(saved, int) and saved <= position:
            return state
        raise RunDirectoryError(
            f"{self.path}: cannot retry from session {position + 1}, the first errored one: "
            f"the callbacks' state before it was not kept ({STATE_BEFORE_ERROR_FILE} is "
            "missing: a folder of an earlier version); go on without --retry-errors, or "
            "start over with --overwrite"
        )

    def _finish_cut(self, journal: dict[str, Any]) -> None:
        """Do (or finish) the cut `journal` describes; every step can be done again."""
        try:
            cut_at, retried_size = int(journal["cut_at"]), int(journal["retried_size"])
            state = journal["state"]
        except (KeyError, TypeError, ValueError):
            journal_path = self.path / RETRY_FILE
            raise RunDirectoryError(f"{journal_path} is not a retry's journal; {REPAIR}") from None
        if self.sessions_path.exists() and self.sessions_path.stat().st_size > cut_at:
            with self.sessions_path.open("rb") as record:
                record.seek(cut_at)
                cut_off = record.read()
            descriptor = os.open(
                self.path / RETRIED_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
            )
            try:  # a copy a kill cut short is replaced
                os.ftruncate(descriptor, retried_size)
                append_whole(descriptor, cut_off)
            finally:
                os.close(descriptor)
        if state is None:
            (self.path / STATE_FILE).unlink(missing_ok=True)
        else:
            self.write_json(STATE_FILE, state)
        if self.sessions_path.exists():
            os.truncate(self.sessions_path, cut_at)
        (self.path / STATE_BEFORE_ERROR_FILE).unlink(missing_ok=True)
        (self.path / RETRY_FILE).unlink()

    def close(self) -> None:
        """Close the session record and release the folder's lock."""
        self._close_sessions()
        self._lock.close()

    @property
    def recorded_anything(self) -> bool:
        """Whether this run wrote a session or a probe episode (point 0 plays before the
        first task: its episodes are kept like sessions)."""
        probes = self.path / PROBES_FILE
        return bool(self.sessions_done) or (probes.is_file() and probes.stat().st_size > 0)

    def abandon(self) -> None:
        """Close the folder of a run that failed; a new run that recorded no session leaves
        nothing behind: no files, and no folder where this made it."""
        self.close()
        if self.held_run or self.recorded_anything:
            return
        self.clear()
        (self.path / LOCK_FILE).unlink(missing_ok=True)
        if self._made is None:
            return
        for folder in (self.path, *self.path.parents):
            try:
                folder.rmdir()
            except OSError:  # something else is in it
                return
            if folder == self._made:
                return

    def _close_sessions(self) -> None:
        if self._sessions_fd is not None:
            os.close(self._sessions_fd)
            self._sessions_fd = None


def without_passwords(config: dict[str, Any]) -> dict[str, Any]:
    """The config with the password of every URL in it (user:password@host) as ***."""
    return json.loads(URL_PASSWORD.sub(r"\1:***@", json.dumps(config)))


def config_differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The settings that differ between two configs, as `dotted.key: old -> new` lines."""
    before, after = _flatten(saved), _flatten(current)
    return [
        f"{key}: {before.get(key)!r} -> {after.get(key)!r}"
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


def _flatten(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
