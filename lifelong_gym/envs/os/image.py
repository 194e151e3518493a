"""The OS environment's image: built offline with debootstrap and `docker import`.

The recipe (the benchmark image's tools) is built by `lifelong_gym.rootfs_image`; users
with a registry can build `docker/os/Dockerfile` instead; both give the commands the
benchmark's tasks use.

Run as `lifelong-gym build-image os [--name NAME] [--force]` (as root, with `debootstrap`
and a Docker engine), or `lifelong-gym build-image os --rootfs DIR` for the OCI sandbox's
root file system folder (no Docker needed).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lifelong_gym.errors import ImageBuildError
from lifelong_gym.rootfs_image import (
    DEFAULT_MIRROR,
    DEFAULT_SUITE,
    RootfsRecipe,
    build_rootfs_image,
    debootstrap,
    image_exists,
)

DEFAULT_IMAGE = "lifelong-gym/os:latest"

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


RECIPE = RootfsRecipe(packages=PACKAGES, changes=IMAGE_CHANGES, hostname="lifelong-os")

__all__ = ["DEFAULT_IMAGE", "build_image", "build_rootfs", "image_exists"]


def build_image(
    name: str = DEFAULT_IMAGE,
    *,
    suite: str = DEFAULT_SUITE,
    mirror: str = DEFAULT_MIRROR,
    force: bool = False,
) -> str:
    """Build the OS image offline (debootstrap + docker import) and return its name."""
    return build_rootfs_image(name, RECIPE, suite=suite, mirror=mirror, force=force)


def build_rootfs(
    folder: str | Path,
    *,
    suite: str = DEFAULT_SUITE,
    mirror: str = DEFAULT_MIRROR,
    force: bool = False,
) -> str:
    """Build the OS root file system into `folder` (debootstrap only), for sandbox='oci'."""
    root = Path(folder).expanduser().resolve()
    if (root / "usr/bin/bash").exists() and not force:
        return str(root)
    if root.is_dir() and any(root.iterdir()):
        if not force:
            raise ImageBuildError(f"{root} is not empty; give an empty folder, or --force")
        shutil.rmtree(root)
    debootstrap(root, RECIPE, suite=suite, mirror=mirror)
    return str(root)
