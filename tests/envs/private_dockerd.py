"""A Docker engine of a test's own, to restart: the host's serves every other test and work.

`dockerd` with its own socket, `--data-root`, `--exec-root`, pid file, (empty) config file
and containerd namespaces, so that it shares nothing with the host's engine even where both
use the same containerd; no bridge and no iptables rules, which the host's engine owns (the
OS sandbox's containers have no network). It starts its own containerd, under its folders,
unless a system containerd runs.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path

from lifelong_gym.envs.os.oci_state import mounts_under, unmount

from ..private_servers import PrivateServer


class PrivateDockerd(PrivateServer):
    """`dockerd` on a socket in a folder of its own; `client` is a Docker client of it."""

    name = "Docker engine"
    programs = ("dockerd",)
    package = "Debian's docker.io"
    start_timeout = 120.0

    def __init__(self):
        # a short path: containerd's sockets are made below it, and a socket's path is
        # 108 bytes at the most
        super().__init__(Path(tempfile.mkdtemp(prefix="lg-dockerd-", dir="/tmp")))
        self.url = f"unix://{self.folder / 'docker.sock'}"
        (self.folder / "daemon.json").write_text("{}\n")  # not the host's /etc/docker one

    def command(self) -> list[str]:
        namespace = f"lifelong-gym-{self.folder.name}"
        return [
            "dockerd",
            f"--host={self.url}",
            f"--data-root={self.folder / 'data'}",
            f"--exec-root={self.folder / 'exec'}",
            f"--pidfile={self.folder / 'dockerd.pid'}",
            f"--config-file={self.folder / 'daemon.json'}",
            f"--containerd-namespace={namespace}",
            f"--containerd-plugins-namespace={namespace}-plugins",
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
        ]

    def answers(self) -> bool:
        try:
            self.client.ping()
        except Exception:  # noqa: BLE001 - not listening yet, or starting
            return False
        return True

    @functools.cached_property
    def client(self):
        """A Docker client of this engine (made once it answers: it asks the API version)."""
        import docker

        return docker.DockerClient(base_url=self.url, timeout=600)  # a load takes long

    def load_image(self, name: str, source) -> None:
        """Copy the image `name` from the engine of the Docker client `source` into this one."""
        self.client.images.load(source.images.get(name).save(chunk_size=1 << 20, named=True))

    def close(self) -> None:
        """Stop the engine (it stops its containers and containerd) and remove its folder."""
        self.stop()
        if "client" in self.__dict__:
            self.client.close()
        for target in mounts_under(self.folder):  # none after a clean stop
            unmount(target)
        shutil.rmtree(self.folder, ignore_errors=True)
