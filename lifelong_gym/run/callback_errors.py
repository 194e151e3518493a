"""The user's callback code failing outside a session, as one `CallbackError`.

A handler that fails during a session marks that session (`callbacks.fire`). The hooks the
run calls around the sessions (`__init__`, `setup`, `load_state`, `state`) have no session
to mark: an exception there stops the run with one line that names the callback, the hook
and the exception, and the traceback goes to a log file the line names: `run.log` in a run
folder that is kept, else a file in the system's temp folder (a new run that failed before
any session leaves no folder behind).
"""

from __future__ import annotations

import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from lifelong_gym.errors import CallbackError, LifelongGymError

RUN_LOG = "run.log"


def callback_name(cls: type) -> str:
    """A callback as `module.ClassName`, the way `--callback` can name it."""
    return f"{cls.__module__}.{cls.__qualname__}"


@contextmanager
def callback_hook(name: str, hook: str, log_folder: Path | None) -> Iterator[None]:
    """Run one hook of callback `name`: what it raises becomes a `CallbackError`, its
    traceback written to `log_folder`'s `run.log` (a temp file when None). The suite's own
    errors (a `CallbackSpecError` from `setup`) already say what to fix and pass as they are."""
    try:
        yield
    except LifelongGymError:
        raise
    except Exception as error:
        log = write_traceback(log_folder, f"callback {name}: {hook} raised")
        raise CallbackError(
            f"callback {name}: {hook} raised {type(error).__name__}: {error} (traceback in {log})"
        ) from error


def write_traceback(log_folder: Path | None, title: str) -> Path:
    """Append the traceback being handled, under `title`, to `log_folder`'s `run.log`, or
    write it to a new file in the system's temp folder; return the file's path."""
    when = datetime.now().astimezone().isoformat(timespec="seconds")  # run.log grows per resume
    text = f"{when} {title}\n{traceback.format_exc()}\n"
    if log_folder is not None:
        path = log_folder / RUN_LOG
        with path.open("a", encoding="utf-8") as log:
            log.write(text)
        return path
    with tempfile.NamedTemporaryFile(
        "w", prefix="lifelong-gym-callback-", suffix=".log", delete=False, encoding="utf-8"
    ) as log:
        log.write(text)
    return Path(log.name)
