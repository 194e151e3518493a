"""A Docker engine of a test's own, to restart: the host's serves every other test and work.

`dockerd` in a network namespace of its own (`unshare --net`): an engine changes the
network of the namespace it runs in (`--bridge=none` deletes the interface `docker0`,
which the host's engine needs), so this one sees none of the host's. It has its own socket,
`--data-root`, `--exec-root`, pid file, (empty) config file and containerd namespaces, so
that it shares nothing with the host's engine even where both use one containerd (without
a system containerd it starts its own, under its folders); no bridge and no iptables rules
(the OS sandbox's containers have no network). Its folder is a tmpfs of its own, which
outlives a restart and is unmounted at the end: copying the image in and removing it
afterwards is then not slowed by a busy disk.
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

import pytest

from lifelong_gym.envs.os.backends.oci.state import mounts_under, unmount

from ..private_servers import PrivateServer

SIZE = "4g"  # the tmpfs's limit: the OS image (400 MB), the toolset, the containers


class PrivateDockerd(PrivateServer):
    """`dockerd` on a socket in a folder of its own; `client` is a Docker client of it."""

    name = "Docker engine"
    programs = ("dockerd", "unshare")
    package = "Debian's docker.io and util-linux"
    start_timeout = 120.0

    def __init__(self):
        # a short path: containerd's sockets are made below it, and a socket's path is
        # 108 bytes at the most
        super().__init__(Path(tempfile.mkdtemp(prefix="lg-dockerd-", dir="/tmp")))
        mount = ["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "lg-dockerd"]
        if subprocess.run([*mount, self.folder], capture_output=True).returncode != 0:
            self.folder.rmdir()
            pytest.skip("cannot mount a tmpfs for a Docker engine (dockerd runs as root)")
        self.url = f"unix://{self.folder / 'docker.sock'}"
        (self.folder / "daemon.json").write_text("{}\n")  # not the host's /etc/docker one

    def command(self) -> list[str]:
        # containerd takes letters and digits joined by single separators: mkdtemp's random
        # part may hold "_" next to "-", so only its letters and digits are kept
        namespace = "lifelong-gym-" + "".join(c for c in self.folder.name if c.isalnum())
        return [
            "unshare",
            "--net",
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
        """Stop the engine (it stops its containers and containerd), unmount its folder and
        remove it."""
        self.stop()
        if "client" in self.__dict__:
            self.client.close()
        for target in [*mounts_under(self.folder), self.folder]:  # the deepest first
            unmount(target)
        self.folder.rmdir()
