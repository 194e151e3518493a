"""The OS environment's image: built offline with debootstrap and `docker import`.

No container registry is needed: the root file system comes from Debian's package
archive, and `docker import` turns it into an image. Users with a registry can build
`docker/os/Dockerfile` instead; both give the commands the benchmark's tasks use.

Run as `lifelong-gym build-image os [--name NAME] [--force]` (as root, with `debootstrap`
and a Docker engine).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from lifelong_gym.errors import ImageBuildError

DEFAULT_IMAGE = "lifelong-gym/os:latest"
DEFAULT_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"

# The benchmark image's tools, and what the 29 command skills need (useradd, chage,
# gpasswd, chsh: passwd; addgroup: adduser; vi: vim; awk: gawk; pgrep/kill: procps).
PACKAGES = (
    "python3",
    "python3-pip",
    "git",
    "vim",
    "curl",
    "wget",
    "unzip",
    "zip",
    "tree",
    "passwd",
    "adduser",
    "gawk",
    "procps",
    "psmisc",
    "findutils",
    "file",
    "less",
    "ca-certificates",
    "bc",
    "acl",
    "sudo",
)

IMAGE_CHANGES = (
    'CMD ["/bin/bash"]',
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    "WORKDIR /root",
    "LABEL org.lifelong-gym.image=os",
)


def image_exists(name: str = DEFAULT_IMAGE) -> bool:
    """Whether the Docker engine already holds an image called `name`."""
    result = subprocess.run(["docker", "image", "inspect", name], capture_output=True)
    return result.returncode == 0


def build_image(
    name: str = DEFAULT_IMAGE,
    *,
    suite: str = DEFAULT_SUITE,
    mirror: str = DEFAULT_MIRROR,
    force: bool = False,
) -> str:
    """Build the OS image offline (debootstrap + docker import) and return its name."""
    if not force and image_exists(name):
        return name
    for tool in ("debootstrap", "docker"):
        if shutil.which(tool) is None:
            raise ImageBuildError(
                f"`{tool}` is not installed; on Debian: apt-get install debootstrap docker.io"
            )
    with tempfile.TemporaryDirectory(prefix="lifelong-gym-rootfs-") as workdir:
        root = Path(workdir) / "rootfs"
        command = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            suite,
            str(root),
            mirror,
        ]
        _run(command, "debootstrap failed (run as root, with Debian's archive reachable)")
        _trim(root)
        changes = [arg for change in IMAGE_CHANGES for arg in ("--change", change)]
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        imported = subprocess.run(
            ["docker", "import", *changes, "-", name], stdin=tar.stdout, capture_output=True
        )
        tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise ImageBuildError(f"docker import failed: {imported.stderr.decode().strip()}")
    return name


def _trim(root: Path) -> None:
    """Drop caches and give the image a plain shell setup."""
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for entry in (root / cache).glob("*.deb"):
            entry.unlink()
    (root / "etc/hostname").write_text("lifelong-os\n")


def _run(command: list[str], message: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-10:])
        raise ImageBuildError(f"{message}:\n{tail}")
