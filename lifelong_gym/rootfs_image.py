"""Container images built offline: a Debian root file system by debootstrap, then `docker import`.

No container registry is needed: the packages come from Debian's archive, and
`docker import` turns the directory into an image. Each environment that needs an image
(the OS sandbox, the MySQL server) describes it as a `RootfsRecipe`.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lifelong_gym.errors import ImageBuildError

DEFAULT_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class RootfsRecipe:
    """What goes into an image: Debian packages, import-time settings, last touches."""

    packages: tuple[str, ...]
    changes: tuple[str, ...]  # Dockerfile instructions `docker import --change` applies
    hostname: str
    prepare: Callable[[Path], None] | None = None  # edits the root file system before import


def image_exists(name: str) -> bool:
    """Whether the Docker engine already holds an image called `name`."""
    result = subprocess.run(["docker", "image", "inspect", name], capture_output=True)
    return result.returncode == 0


def build_rootfs_image(
    name: str,
    recipe: RootfsRecipe,
    *,
    suite: str = DEFAULT_SUITE,
    mirror: str = DEFAULT_MIRROR,
    force: bool = False,
) -> str:
    """Build `recipe` as the image `name` (debootstrap + docker import) and return the name."""
    if not force and image_exists(name):
        return name
    if shutil.which("docker") is None:
        raise ImageBuildError("`docker` is not installed; on Debian: apt-get install docker.io")
    with tempfile.TemporaryDirectory(prefix="lifelong-gym-rootfs-") as workdir:
        root = Path(workdir) / "rootfs"
        debootstrap(root, recipe, suite=suite, mirror=mirror)
        changes = [arg for change in recipe.changes for arg in ("--change", change)]
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        imported = subprocess.run(
            ["docker", "import", *changes, "-", name], stdin=tar.stdout, capture_output=True
        )
        tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise ImageBuildError(f"docker import failed: {imported.stderr.decode().strip()}")
    return name


def debootstrap(root: Path, recipe: RootfsRecipe, *, suite: str, mirror: str) -> None:
    """Install `recipe` into the empty or absent folder `root` (as root, needs debootstrap)."""
    if shutil.which("debootstrap") is None:
        raise ImageBuildError(
            "`debootstrap` is not installed; on Debian: apt-get install debootstrap"
        )
    command = [
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(recipe.packages)}",
        suite,
        str(root),
        mirror,
    ]
    _run(command, "debootstrap failed (run as root, with Debian's archive reachable)")
    _trim(root, recipe.hostname)
    if recipe.prepare is not None:
        recipe.prepare(root)


def _trim(root: Path, hostname: str) -> None:
    """Drop the package caches and name the host."""
    for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for entry in (root / cache).glob("*.deb"):
            entry.unlink()
    (root / "etc/hostname").write_text(f"{hostname}\n")


def _run(command: list[str], message: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-10:])
        raise ImageBuildError(f"{message}:\n{tail}")
