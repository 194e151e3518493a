"""What the OCI sandbox needs from its host: a runtime, root, and cgroups for its limits.

Without root it refuses with one line that names what the host lacks for rootless use:
user namespaces for unprivileged users (and overlayfs inside them, Linux 5.11), ranges
of subordinate user and group ids with `newuidmap`/`newgidmap` (the tasks create users),
and a cgroup v2 subtree delegated to the user with the memory, pids and cpu controllers
(cgroup v1 cannot be delegated, so its limits would silently not apply).
"""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

from lifelong_gym.envs.os.backends.oci.state import CGROUP_ROOT
from lifelong_gym.errors import EnvArgumentError, SandboxError

RUNTIMES = ("crun", "runc")
CONTROLLERS = ("memory", "pids", "cpu")
_PROC_SYS = Path("/proc/sys")


def find_runtime(name: str | None) -> str:
    """The runtime program: `name` ("crun" or "runc"), or crun else runc when None.

    crun refuses a hybrid cgroup layout whose v2 part holds controllers; there runc
    (which handles it) is chosen, and asking for crun is an error that says so.
    """
    if name is not None and name not in RUNTIMES:
        raise EnvArgumentError(f"runtime must be one of {', '.join(RUNTIMES)}, got {name!r}")
    unified = CGROUP_ROOT / "unified/cgroup.controllers"
    hybrid = unified.exists() and unified.read_text().split()
    if name == "crun" and hybrid:
        raise SandboxError(
            f"crun cannot run here: this host's cgroups are hybrid and their v2 part holds "
            f"controllers ({' '.join(hybrid)}); use runtime='runc'"
        )
    candidates = [name] if name else [r for r in RUNTIMES if not (hybrid and r == "crun")]
    for candidate in candidates:
        path = shutil.which(candidate)
        if path is not None:
            return path
    wanted = " or ".join(candidates)
    raise SandboxError(
        f"the OCI sandbox needs the {wanted} runtime; on Debian: apt-get install " + candidates[0]
    )


def check_host() -> None:
    """Refuse to start where the limits cannot be enforced, or without root (one line)."""
    if os.geteuid() != 0:
        raise SandboxError(rootless_refusal(os.geteuid()))
    if (CGROUP_ROOT / "cgroup.controllers").exists():  # cgroup v2
        present = set((CGROUP_ROOT / "cgroup.controllers").read_text().split())
    else:  # cgroup v1: one hierarchy per controller
        present = {c for c in CONTROLLERS if (CGROUP_ROOT / c / "cgroup.procs").exists()}
        if (
            "memory" in present
            and not (CGROUP_ROOT / "memory/memory.memsw.limit_in_bytes").exists()
        ):
            present.discard("memory")  # no swap accounting: memory without swap is not enforced
    missing = [c for c in CONTROLLERS if c not in present]
    if missing:
        raise SandboxError(
            f"the OCI sandbox cannot enforce its limits: no usable cgroup controller for "
            f"{', '.join(missing)} under {CGROUP_ROOT} (mount cgroup v2 with them, or use "
            "sandbox='docker')"
        )


def rootless_missing(uid: int) -> list[str]:
    """What this host lacks for the OCI sandbox run by the non-root user `uid` (empty: none)."""
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    missing = []
    if not _user_namespaces_allowed():
        missing.append("user namespaces for unprivileged users (sysctl user.max_user_namespaces)")
    release = tuple(int(part) for part in os.uname().release.split(".")[:2] if part.isdigit())
    if release < (5, 11):
        missing.append("overlayfs in user namespaces (Linux 5.11 or later)")
    for table in ("/etc/subuid", "/etc/subgid"):
        if not _has_subordinate_ids(Path(table), name, uid):
            missing.append(f"subordinate ids for {name} in {table}")
    if not (shutil.which("newuidmap") and shutil.which("newgidmap")):
        missing.append("newuidmap and newgidmap (Debian: uidmap)")
    if not _delegated_cgroup(uid):
        layout = "v2" if (CGROUP_ROOT / "cgroup.controllers").exists() else "v1 or hybrid"
        missing.append(
            f"a cgroup v2 subtree delegated to {name} with {', '.join(CONTROLLERS)} "
            f"(this host's cgroups are {layout}; systemd: Delegate=yes)"
        )
    return missing


def rootless_refusal(uid: int) -> str:
    """The one-line refusal to run as the non-root user `uid`, naming what is missing."""
    missing = rootless_missing(uid)
    if missing:
        lacks = f"for rootless use this host lacks {'; '.join(missing)}"
    else:
        lacks = "this host has what rootless use needs, but rootless mode is not built yet"
    return (
        f"the OCI sandbox runs as root (uid {uid} is not): {lacks} (docs/os.md); run as root, "
        "or use sandbox='docker'"
    )


def _user_namespaces_allowed() -> bool:
    def value(path: str, default: int) -> int:
        try:
            return int((_PROC_SYS / path).read_text())
        except (OSError, ValueError):
            return default

    return (
        value("user/max_user_namespaces", 0) > 0
        and value("kernel/unprivileged_userns_clone", 1) == 1  # Debian's switch
        and value("kernel/apparmor_restrict_unprivileged_userns", 0) == 0  # Ubuntu's
    )


def _has_subordinate_ids(table: Path, name: str, uid: int) -> bool:
    try:
        lines = table.read_text().splitlines()
    except OSError:
        return False
    owners = {name, str(uid)}
    for line in lines:
        fields = line.strip().split(":")
        if len(fields) == 3 and fields[0] in owners and fields[2].isdigit():
            if int(fields[2]) >= 65536:  # enough for the users a task creates
                return True
    return False


def _delegated_cgroup(uid: int) -> bool:
    """Whether this process's cgroup v2 folder is the user's and offers the controllers."""
    if not (CGROUP_ROOT / "cgroup.controllers").exists():  # v1 or hybrid
        return False
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            folder = CGROUP_ROOT / line[3:].strip().lstrip("/")
            break
    else:
        return False
    try:
        offered = set((folder / "cgroup.controllers").read_text().split())
        owned = folder.stat().st_uid == uid
    except OSError:
        return False
    return owned and all(c in offered for c in CONTROLLERS)
