"""The MySQL server's image: Debian's MariaDB, built offline with debootstrap and `docker import`.

The data directory is made once, at build time, and kept at `/var/lib/mysql-template`;
each container copies it onto its tmpfs at start, so starting takes no install step and
nothing is written to disk. Users with a registry can build `docker/mysql/Dockerfile`
instead (the same server and entry point):
`docker build -t lifelong-gym/mysql:latest -f docker/mysql/Dockerfile .`

Run as `lifelong-gym build-image mysql [--name NAME] [--force]` (as root, with
`debootstrap` and a Docker engine).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lifelong_gym.rootfs_image import (
    DEFAULT_MIRROR,
    DEFAULT_SUITE,
    RootfsRecipe,
    build_rootfs_image,
    image_exists,
)

DEFAULT_IMAGE = "lifelong-gym/mysql:latest"
ENTRYPOINT = "/usr/local/bin/lifelong-mysqld"
PASSWORD_VARIABLE = "LIFELONG_GYM_MYSQL_PASSWORD"  # read by the entry point, then unset
# the entry point, shipped beside this module (docker/mysql/Dockerfile copies the same file)
ENTRYPOINT_SCRIPT = Path(__file__).with_name("lifelong-mysqld")
IMAGE_CHANGES = (
    f'CMD ["{ENTRYPOINT}"]',
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    "EXPOSE 3306",
    "LABEL org.lifelong-gym.image=mysql",
)

__all__ = ["DEFAULT_IMAGE", "build_image", "image_exists"]


def _prepare(root: Path) -> None:
    """Keep the package's data directory as the template and add the entry point."""
    data = root / "var/lib/mysql"
    shutil.move(data, root / "var/lib/mysql-template")
    data.mkdir()
    entry = root / ENTRYPOINT.lstrip("/")
    shutil.copyfile(ENTRYPOINT_SCRIPT, entry)
    entry.chmod(0o755)


RECIPE = RootfsRecipe(
    packages=("mariadb-server",), changes=IMAGE_CHANGES, hostname="lifelong-mysql", prepare=_prepare
)


def build_image(
    name: str = DEFAULT_IMAGE,
    *,
    suite: str = DEFAULT_SUITE,
    mirror: str = DEFAULT_MIRROR,
    force: bool = False,
) -> str:
    """Build the MySQL image offline (debootstrap + docker import) and return its name."""
    return build_rootfs_image(name, RECIPE, suite=suite, mirror=mirror, force=force)
