"""The OCI sandbox's root file system and judge's toolset, both folders cached on the host.

The root file system is a folder built by `lifelong-gym build-image os --rootfs DIR`
(debootstrap, no Docker), or the Docker image exported once. Its toolset (see toolset.py)
is built by `toolset_build.py` in a one-off container of the same runtime and kept beside
it; a folder is complete once it is renamed into place, so a killed build leaves nothing
that is used.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lifelong_gym.envs.os.backends.oci.state import STATE_ROOT
from lifelong_gym.envs.os.backends.toolset import BUILD_TIMEOUT, build_argv
from lifelong_gym.errors import SandboxError

CACHE = STATE_ROOT / "cache"
BUILD_HINT = (
    "build one with `lifelong-gym build-image os --rootfs DIR` (debootstrap, no Docker) and "
    "pass rootfs=DIR"
)


def resolve_rootfs(rootfs: str | Path | None, image: str) -> Path:
    """The root file system folder: `rootfs` checked, or `image` exported from Docker."""
    if rootfs is not None:
        path = Path(rootfs).expanduser().resolve()
        if not all((path / program).exists() for program in ("usr/bin/bash", "usr/bin/python3")):
            raise SandboxError(f"{path} is not a root file system with bash and python3; "
                               + BUILD_HINT.replace("DIR", str(path)))  # fmt: skip
        return path
    return _exported(image)


def _exported(image: str) -> Path:
    inspected = (
        subprocess.run(
            ["docker", "image", "inspect", "--format", "{{.Id}}", image],
            capture_output=True,
            text=True,
        )
        if shutil.which("docker")
        else None
    )
    if inspected is None or inspected.returncode != 0:
        raise SandboxError(
            f"the OCI sandbox has no root file system: the Docker image {image!r} is not "
            f"there to export; {BUILD_HINT}"
        )
    target = CACHE / f"rootfs-{inspected.stdout.strip().split(':')[-1][:12]}"
    with _locked(target):
        if not (target / "usr").is_dir():
            _build_into(target, lambda folder: _export(image, folder))
    return target


def _export(image: str, folder: Path) -> None:
    created = subprocess.run(
        ["docker", "create", "--label", "org.lifelong-gym.os.export=1", image, "true"],
        capture_output=True,
        text=True,
        check=True,
    )
    container = created.stdout.strip()
    try:
        export = subprocess.Popen(["docker", "export", container], stdout=subprocess.PIPE)
        untar = subprocess.run(["tar", "-x", "-C", str(folder)], stdin=export.stdout)
        assert export.stdout is not None
        export.stdout.close()
        if export.wait() != 0 or untar.returncode != 0:
            raise SandboxError(f"exporting the Docker image {image!r} failed")
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True)


# makes a one-off container: (argv, toolset=folder, writable=bool) -> OciContainer
MakeContainer = Callable[..., Any]


def ensure_dir_toolset(rootfs: Path, make: MakeContainer) -> Path:
    """The toolset folder of `rootfs`, built first in a container from `make` if absent."""
    argv = build_argv()
    stamp = rootfs / "var/lib/dpkg/status"  # changes whenever a package is installed
    changed = stamp.stat().st_mtime_ns if stamp.exists() else 0
    key = hashlib.sha256("\0".join([str(rootfs), str(changed), *argv]).encode()).hexdigest()[:12]
    target = CACHE / f"toolset-{key}"
    with _locked(target):
        if not (target / "ready").exists():
            _build_into(target, lambda folder: _build_toolset(folder, make, argv))
    return target


def _build_toolset(folder: Path, make: MakeContainer, argv: list[str]) -> None:
    container = make(argv, toolset=folder, writable=True)
    try:
        status, log = container.run_to_end(BUILD_TIMEOUT)
    finally:
        container.remove()
    if status != 0 or not (folder / "ready").exists():
        raise SandboxError(
            "building the judge's toolset failed (the root file system needs python3, cp "
            f"and ldconfig):\n{log[-2000:]}"
        )


def _build_into(target: Path, build: Callable[[Path], None]) -> None:
    """Build in a fresh folder beside `target`, then rename it into place."""
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        build(partial)
        partial.rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


class _locked:
    """An exclusive lock on `target`'s lock file: one builder per host, the others wait."""

    def __init__(self, target: Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(target.with_name(target.name + ".lock"), "w")  # noqa: SIM115

    def __enter__(self) -> None:
        fcntl.flock(self._file, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        self._file.close()
