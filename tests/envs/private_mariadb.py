"""A MariaDB server of a test's own (its own port and data folder), to kill and start again.

The shared server at 127.0.0.1:3306 serves every other test; a fault test kills this one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pymysql

from ..agents.llama_server import free_port
from ..private_servers import PrivateServer


class PrivateMariaDB(PrivateServer):
    """`mariadbd` on a free loopback port over a data folder made by `mariadb-install-db`."""

    name = "MariaDB"
    programs = ("mariadbd", "mariadb-install-db")
    package = "Debian's mariadb-server"
    log = "error.log"

    def __init__(self, folder: Path):
        super().__init__(folder)
        self.port = free_port()
        self.url = f"mysql://root@127.0.0.1:{self.port}"
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

    def command(self) -> list[str]:
        return [
            "mariadbd",
            "--no-defaults",
            f"--datadir={self.folder / 'data'}",
            "--user=root",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            f"--socket={self.folder / 'mysqld.sock'}",
            f"--pid-file={self.folder / 'mysqld.pid'}",
            f"--log-error={self.folder / self.log}",
            "--skip-name-resolve",
            "--innodb-buffer-pool-size=16M",
        ]

    def answers(self) -> bool:
        try:
            pymysql.connect(host="127.0.0.1", port=self.port, user="root").close()
        except pymysql.MySQLError:
            return False
        return True

    def run(self, sql: str) -> list[tuple]:
        """The rows of one statement, run as root."""
        with pymysql.connect(host="127.0.0.1", port=self.port, user="root") as connection:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return list(cursor.fetchall())
