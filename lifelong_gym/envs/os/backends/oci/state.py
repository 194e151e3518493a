"""The OCI sandbox's state on the host, and sweeping what a dead run left there.

Each run owns one folder under STATE_ROOT: the runtime's state (`runtime/`), one folder per
container (its bundle, overlay layers and mounted root), and `owner`, which names the
process by pid and start time (a pid alone may be reused). `close()` and the exit handler
remove the run's folder; a run killed by SIGKILL leaves it, and the next start of any run
on this host removes it: its containers, mounts, cgroups and files.
"""

from __future__ import annotations

import ctypes
import errno
import json
import logging
import os
import shutil
import signal
import time
from pathlib import Path

from lifelong_gym.processes import process_alive

logger = logging.getLogger(__name__)

STATE_ROOT = Path("/var/tmp") / f"lifelong-gym-oci-{os.getuid()}"
CGROUP_PARENT = "lifelong-gym-oci"  # every container's cgroup is CGROUP_PARENT/<name>
CGROUP_ROOT = Path("/sys/fs/cgroup")
_MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


_EXITING = 0x4  # PF_EXITING in a process's flags: it is on its way out
_SIGKILL = 1 << (signal.SIGKILL - 1)  # its bit in a pending-signal mask


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name, from the state on (None: gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (None when it is gone)."""
    fields = _stat_fields(pid)
    return None if fields is None else fields[19]


def ending(pid: int) -> bool:
    """Whether process `pid` is gone, a zombie, exiting, or has SIGKILL pending.

    A runtime reports a container killed from outside as running until its PID 1 has
    exited, which takes a while on a busy host once its processes are being killed; this
    says so from the moment the kill is sent.
    """
    fields = _stat_fields(pid)
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    if fields is None or fields[0] in ("Z", "X", "x") or int(fields[6]) & _EXITING:
        return True
    pending = (line.split() for line in status.splitlines())
    return any(f[0] in ("SigPnd:", "ShdPnd:") and int(f[1], 16) & _SIGKILL for f in pending if f)


def claim_run(run_dir: Path) -> None:
    """Create the run's folder, owned by this process."""
    run_dir.mkdir(parents=True)
    owner = {"pid": os.getpid(), "start": start_time(os.getpid())}
    (run_dir / "owner").write_text(json.dumps(owner))


def run_is_alive(run_dir: Path) -> bool:
    """Whether the process that owns the run's folder still runs (a folder being made does)."""
    try:
        owner = json.loads((run_dir / "owner").read_text())
    except (OSError, ValueError):  # no owner yet: dead only once it is a minute old
        return time.time() - run_dir.stat().st_mtime < 60
    pid = int(owner.get("pid", 0))
    return process_alive(pid) and start_time(pid) == owner.get("start")


def sweep_dead_runs() -> int:
    """Remove everything of the runs whose owner died; return how many."""
    if not STATE_ROOT.is_dir():
        return 0
    dead = [
        run
        for run in STATE_ROOT.iterdir()
        if run.is_dir() and run.name != "cache" and not run_is_alive(run)
    ]
    for run in dead:
        logger.info("removing the OCI containers left by a dead run in %s", run)
        remove_run(run)
    return len(dead)


def remove_run(run_dir: Path) -> None:
    """End the run's containers (their cgroups' processes), then remove its mounts and files."""
    for folder in run_dir.iterdir():
        if folder.is_dir():
            remove_cgroup(folder.name)
    for target in mounts_under(run_dir):
        unmount(target)
    shutil.rmtree(run_dir, ignore_errors=True)


def cgroup_folders(name: str) -> list[Path]:
    """The container's cgroup folders: one on cgroup v2, one per controller on v1."""
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return [CGROUP_ROOT / CGROUP_PARENT / name]
    return [folder / CGROUP_PARENT / name for folder in CGROUP_ROOT.iterdir()]


def remove_cgroup(name: str, timeout: float = 10) -> None:
    """Kill what runs in the container's cgroups, wait until they are empty, remove them.

    The container's PID 1 is among the first killed, and the kernel then kills the rest of
    its pid namespace; processes that fork meanwhile are killed in the next rounds.
    """
    deadline = time.monotonic() + timeout
    for folder in cgroup_folders(name):
        while folder.is_dir():
            try:
                pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
            except OSError:
                pids = []
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                folder.rmdir()
            except OSError as error:
                if time.monotonic() > deadline:
                    logger.warning("cgroup %s not removed: %s", folder, error)
                    break
                time.sleep(0.002)  # the killed processes are still exiting


def mounts_under(folder: Path) -> list[str]:
    """The mount points at or below `folder`, deepest first."""
    prefix = str(folder.resolve()) + "/"
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        target = line.split()[4].replace("\\040", " ")
        if target.startswith(prefix):
            found.append(target)
    return sorted(found, key=len, reverse=True)


def mount_overlay(lower: Path, upper: Path, work: Path, target: Path) -> None:
    """Mount an overlay of the read-only `lower` with the writable `upper` on `target`.

    `volatile` (Linux 5.10) skips every sync of the upper layer, which is thrown away: else
    the unmount syncs the whole host file system under it. Older kernels mount without it.
    """
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    for extra in (",volatile", ""):
        if _libc.mount(b"overlay", bytes(target), b"overlay", 0, (options + extra).encode()) == 0:
            return
        error = ctypes.get_errno()
        if error != errno.EINVAL:  # EINVAL: an option this kernel does not know
            break
    raise OSError(error, f"mounting the overlay on {target}: {os.strerror(error)}")


def unmount(target: str | Path) -> None:
    """Detach a mount (no error if it is gone)."""
    if _libc.umount2(str(target).encode(), _MNT_DETACH) != 0:
        logger.debug("unmounting %s: %s", target, os.strerror(ctypes.get_errno()))
