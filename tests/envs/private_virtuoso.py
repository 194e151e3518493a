"""A Virtuoso of a test's own (its own ports and database), holding the shipped KG, to kill
and start again. The shared one (.ci/setup.d/40-virtuoso.sh) serves every other test."""

from __future__ import annotations

import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

from lifelong_gym.envs.kg.backends import SHIPPED_GRAPH

from ..agents.llama_server import free_port
from ..conftest import ROOT
from ..private_servers import PrivateServer

SHARED_FOLDER = "/var/lib/lifelong-gym/virtuoso"  # in the shared server's config


class PrivateVirtuoso(PrivateServer):
    """`virtuoso-t` in the foreground on free loopback ports, over a database of its own."""

    name = "Virtuoso"
    programs = ("virtuoso-t", "isql-vt")
    package = "Debian's virtuoso-opensource"
    start_timeout = 120.0
    log = "virtuoso.log"

    def __init__(self, folder: Path):
        super().__init__(folder)
        self.sql_port, self.http_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.http_port}/sparql"
        (folder / "load").mkdir()
        shutil.copyfile(SHIPPED_GRAPH, folder / "load" / SHIPPED_GRAPH.name)
        config = (ROOT / ".ci" / "virtuoso.ini").read_text()
        config = config.replace(SHARED_FOLDER, str(folder))
        config = config.replace("127.0.0.1:1111", f"127.0.0.1:{self.sql_port}")
        config = config.replace("127.0.0.1:8890", f"127.0.0.1:{self.http_port}")
        (folder / "virtuoso.ini").write_text(config)

    def command(self) -> list[str]:
        return ["virtuoso-t", "+configfile", str(self.folder / "virtuoso.ini"), "+foreground"]

    def answers(self) -> bool:
        query = urllib.parse.urlencode({"query": "ASK {}"})
        try:
            urllib.request.urlopen(f"{self.url}?{query}", timeout=5).close()
        except OSError:
            return False
        return True

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
