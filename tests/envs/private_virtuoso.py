"""A Virtuoso of a test's own (its own ports and database), holding the shipped KG, to kill
and start again. The shared one (.ci/setup.d/40-virtuoso.sh) serves every other test."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from lifelong_gym.envs.kg.backends import SHIPPED_GRAPH

from ..agents.llama_server import free_port
from ..conftest import ROOT

SHARED_FOLDER = "/var/lib/lifelong-gym/virtuoso"  # in the shared server's config
START_TIMEOUT = 120.0


class PrivateVirtuoso:
    """`virtuoso-t` in the foreground on free loopback ports, over a database of its own."""

    def __init__(self, folder: Path):
        for program in ("virtuoso-t", "isql-vt"):
            if shutil.which(program) is None:
                pytest.skip(f"{program} is not installed (Debian's virtuoso-opensource has it)")
        self.folder = folder
        self.sql_port, self.http_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.http_port}/sparql"
        self.process: subprocess.Popen | None = None
        (folder / "load").mkdir(parents=True)
        shutil.copyfile(SHIPPED_GRAPH, folder / "load" / SHIPPED_GRAPH.name)
        config = (ROOT / ".ci" / "virtuoso.ini").read_text()
        config = config.replace(SHARED_FOLDER, str(folder))
        config = config.replace("127.0.0.1:1111", f"127.0.0.1:{self.sql_port}")
        config = config.replace("127.0.0.1:8890", f"127.0.0.1:{self.http_port}")
        (folder / "virtuoso.ini").write_text(config)

    def start(self) -> None:
        """Start the server; return at once (`wait` waits until its endpoint answers)."""
        self.process = subprocess.Popen(
            ["virtuoso-t", "+configfile", str(self.folder / "virtuoso.ini"), "+foreground"],
            cwd=self.folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def load_graph(self) -> None:
        """Load the shipped KG into the graph the KG environment reads."""
        for statement in (
            f"ld_dir('{self.folder / 'load'}', '{SHIPPED_GRAPH.name}', 'http://rdf.freebase.com');",
            "rdf_loader_run();",
            "checkpoint;",
        ):
            subprocess.run(
                ["isql-vt", f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={statement}"],
                check=True,
                capture_output=True,
            )

    def wait(self) -> None:
        """Wait until the SPARQL endpoint answers."""
        query = urllib.parse.urlencode({"query": "ASK {}"})
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                urllib.request.urlopen(f"{self.url}?{query}", timeout=5).close()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (self.folder / "virtuoso.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"the private Virtuoso did not start: {log}") from None
            time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL the server and wait until it is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
