"""Servers of a test's own (own ports, socket and folder), for the fault tests to kill.

The shared servers (MariaDB at 127.0.0.1:3306, Virtuoso, the Docker engine) serve every
other test and other work on the machine, so a test that kills or restarts a server starts
one of its own: a `PrivateServer` subclass says which programs it needs, its command line
and how to tell that it answers; `running` starts it for a test and ends it afterwards.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


class PrivateServer:
    """A server process in `folder`: started, waited for, killed or stopped, started again.

    Its output goes to `console.log` in the folder; `log` names the file whose end a
    failed start shows (the server's own log, where it keeps one).
    """

    name = "server"
    programs: tuple[str, ...] = ()  # on PATH, or the test skips
    package = ""  # the package that has them, for the skip's reason
    start_timeout = 60.0
    stop_timeout = 60.0  # after SIGTERM, before SIGKILL
    log = "console.log"

    def __init__(self, folder: Path):
        for program in self.programs:
            if shutil.which(program) is None:
                pytest.skip(f"{program} is not installed ({self.package} has it)")
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        """The server's command line (run in its folder)."""
        raise NotImplementedError

    def answers(self) -> bool:
        """Whether the server answers now (one try)."""
        raise NotImplementedError

    def start(self) -> None:
        """Start the server; return at once (`wait` waits until it answers)."""
        with open(self.folder / "console.log", "ab") as console:
            self.process = subprocess.Popen(
                self.command(), cwd=self.folder, stdout=console, stderr=subprocess.STDOUT
            )

    def wait(self) -> None:
        """Wait until the server answers; RuntimeError with its log if it exits or never does."""
        deadline = time.monotonic() + self.start_timeout
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                path = self.folder / self.log
                log = path.read_text(errors="replace")[-2000:] if path.exists() else ""
                raise RuntimeError(f"the private {self.name} did not start: {log}")
            time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL the server, as a crash or the OOM killer would, and wait until it is gone."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM the server, as a service manager stops it, and wait until it is gone (a
        SIGKILL after `stop_timeout` seconds)."""
        try:
            self._end(signal.SIGTERM, timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def close(self) -> None:
        """End the server whatever its state, at the end of the test."""
        self.kill()

    def _end(self, signal_number: int, timeout: float | None = None) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal_number)
            self.process.wait(timeout)


@contextmanager
def running(server: PrivateServer) -> Iterator[PrivateServer]:
    """The server, started and answering; closed at the end whatever happened."""
    server.start()
    try:
        server.wait()
        yield server
    finally:
        server.close()
