"""A MariaDB server of a test's own (its own port and data folder), to kill and start again.

The shared server at 127.0.0.1:3306 serves every other test; a fault test kills this one.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pymysql
import pytest

from ..agents.llama_server import free_port

START_TIMEOUT = 60.0


class PrivateMariaDB:
    """`mariadbd` on a free loopback port over a data folder made by `mariadb-install-db`."""

    def __init__(self, folder: Path):
        for program in ("mariadbd", "mariadb-install-db"):
            if shutil.which(program) is None:
                pytest.skip(f"{program} is not installed (Debian's mariadb-server has it)")
        self.folder = folder
        self.port = free_port()
        self.url = f"mysql://root@127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        subprocess.run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={folder / 'data'}",
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        """Start the server; return at once (`wait` waits until it answers)."""
        self.process = subprocess.Popen(
            [
                "mariadbd",
                "--no-defaults",
                f"--datadir={self.folder / 'data'}",
                "--user=root",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                f"--socket={self.folder / 'mysqld.sock'}",
                f"--pid-file={self.folder / 'mysqld.pid'}",
                f"--log-error={self.folder / 'error.log'}",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=16M",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def wait(self) -> None:
        """Wait until the server answers."""
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                pymysql.connect(host="127.0.0.1", port=self.port, user="root").close()
                return
            except pymysql.MySQLError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (self.folder / "error.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"the private MariaDB did not start: {log}") from None
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL the server, as a crash or the OOM killer would, and wait until it is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def run(self, sql: str) -> list[tuple]:
        """The rows of one statement, run as root."""
        with pymysql.connect(host="127.0.0.1", port=self.port, user="root") as connection:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return list(cursor.fetchall())
