"""The MySQL server's image: Debian's MariaDB, built offline with debootstrap and `docker import`.

The data directory is made once, at build time, and kept at `/var/lib/mysql-template`;
each container copies it onto its tmpfs at start, so starting takes no install step and
nothing is written to disk. Users with a registry can build `docker/mysql/Dockerfile`
instead (the same server and entry point).

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
PASSWORD_VARIABLE = "LIFELONG_GYM_MYSQL_PASSWORD"
# The entry point: a fresh data directory on the tmpfs, root reachable from outside the
# container with the password the starter chose, then the server in the foreground.
ENTRYPOINT_SCRIPT = f"""#!/bin/sh
set -eu
cp -a /var/lib/mysql-template/. /var/lib/mysql/
mkdir -p /run/mysqld
chown mysql:mysql /var/lib/mysql /run/mysqld
umask 077
cat > /run/mysqld/init.sql <<SQL
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '${PASSWORD_VARIABLE}';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
SQL
chown mysql:mysql /run/mysqld/init.sql
unset {PASSWORD_VARIABLE}
exec mariadbd --user=mysql --datadir=/var/lib/mysql --bind-address=0.0.0.0 --port=3306 \\
    --skip-name-resolve --init-file=/run/mysqld/init.sql
"""
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
    entry.write_text(ENTRYPOINT_SCRIPT)
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
