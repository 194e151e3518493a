"""The OCI sandbox: a fresh container per task, run by crun (or runc) with no daemon.

Each container is an OCI bundle: a new overlay (an empty upper layer on the read-only root
file system), the runtime's namespaces (pid, mount, network, ipc, uts, cgroup), no network,
the judge's toolset mounted read-only at /.lgj, and the Docker sandbox's limits as the
bundle's `linux.resources` (memory without swap, processes, CPU) and rlimits (file size).
PID 1 starts both shells of a sandbox on pipes given to the runtime (later shells are
`RUNTIME exec` processes); the pipes carry the same protocol as Docker's exec sockets.
The runtime starts a container in tens of milliseconds, where the engine takes hundreds.
The host's state of a run is kept and swept by `state`.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import resource
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lifelong_gym.envs.os.backends.oci.host import check_host, find_runtime
from lifelong_gym.envs.os.backends.oci.rootfs import ensure_dir_toolset, resolve_rootfs
from lifelong_gym.envs.os.backends.oci.state import (
    CGROUP_PARENT,
    STATE_ROOT,
    claim_run,
    ending,
    mount_overlay,
    remove_cgroup,
    remove_run,
    sweep_dead_runs,
    unmount,
)
from lifelong_gym.envs.os.backends.sandbox import (
    KEEPER_ARGV,
    Limits,
    Sandbox,
    SandboxPool,
    start_shells,
)
from lifelong_gym.envs.os.backends.shell import AGENT_SHELL_ARGV, SHELL_ARGV, Channel, PipeChannel
from lifelong_gym.envs.os.backends.toolset import (
    AGENT_MANIFEST,
    EMPTY_FILE,
    JUDGE_ENVIRONMENT,
    TOOLSET_ROOT,
    TRUSTED_BASH,
)
from lifelong_gym.envs.os.image import DEFAULT_IMAGE, IMAGE_CHANGES
from lifelong_gym.errors import EnvArgumentError, SandboxError

logger = logging.getLogger(__name__)

HOSTNAME = "lifelong-os"
# The image's environment (its ENV settings), as `docker exec` gives it
ENVIRONMENT = {
    **dict(c[4:].split("=", 1) for c in IMAGE_CHANGES if c.startswith("ENV ")),
    "HOSTNAME": HOSTNAME,
    "HOME": "/root",
}
HOSTS = f"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n127.0.0.1\t{HOSTNAME}\n"
# Docker's default capabilities: no CAP_SYS_ADMIN, so no mount, umount or remount of /.lgj
CAPABILITIES = [
    f"CAP_{name}"
    for name in (
        "CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP SETPCAP "
        "NET_BIND_SERVICE SYS_CHROOT KILL AUDIT_WRITE"
    ).split()
]
MASKED_PATHS = [
    "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
    "/sys/firmware", "/sys/devices/virtual/powercap",
]  # fmt: skip
READONLY_PATHS = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
# What Docker's seccomp profile refuses a container without CAP_SYS_ADMIN, among the calls
# that can reach past the container: new namespaces, the kernel's keyring, modules, BPF.
DENIED_CALLS = [
    "unshare", "setns", "mount", "umount2", "pivot_root", "keyctl", "add_key",
    "request_key", "bpf", "perf_event_open", "userfaultfd", "open_by_handle_at",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "swapon", "swapoff", "reboot", "acct", "quotactl", "lookup_dcookie",
]  # fmt: skip
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def memory_bytes(text: str) -> int:
    """Docker's memory notation ("512m", "2g", "1048576") in bytes."""
    number, unit = text.strip().lower(), ""
    if number and number[-1] in _UNITS:
        number, unit = number[:-1], number[-1]
    try:
        return int(float(number) * _UNITS[unit])
    except ValueError:
        raise EnvArgumentError(f"memory limit {text!r} is not like '512m' or '2g'") from None


def bundle_config(
    root: Path,
    toolset: Path,
    limits: Limits,
    *,
    args: list[str],
    toolset_writable: bool = False,
    agent_programs: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """The OCI runtime configuration of one container.

    `agent_programs` (image paths) get the toolset's read-only copies mounted over them.
    """
    memory = memory_bytes(limits.memory)
    open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[1]  # the host's, as Docker gives
    namespaces = ["pid", "mount", "ipc", "uts", "cgroup"] + ([] if limits.network else ["network"])
    sysfs = (
        {"destination": "/sys", "type": "sysfs", "source": "sysfs"}
        if not limits.network  # sysfs needs the container's own network namespace
        else {"destination": "/sys", "type": "bind", "source": "/sys", "options": ["rbind"]}
    )
    sysfs["options"] = [*sysfs.get("options", []), "nosuid", "noexec", "nodev", "ro"]
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": args,
            "env": [f"{key}={value}" for key, value in ENVIRONMENT.items()],
            "cwd": "/root",
            "capabilities": {kind: CAPABILITIES for kind in ("bounding", "effective", "permitted")},
            "rlimits": [
                {"type": "RLIMIT_FSIZE", "hard": limits.file_size, "soft": limits.file_size},
                {"type": "RLIMIT_NOFILE", "hard": open_files, "soft": open_files},
            ],
        },
        "root": {"path": str(root), "readonly": False},
        "hostname": HOSTNAME,
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {
                "destination": "/dev",
                "type": "tmpfs",
                "source": "tmpfs",
                "options": ["nosuid", "strictatime", "mode=755", "size=65536k"],
            },
            {
                "destination": "/dev/pts",
                "type": "devpts",
                "source": "devpts",
                "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"],
            },
            {
                "destination": "/dev/shm",
                "type": "tmpfs",
                "source": "shm",
                "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"],
            },
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue"},
            sysfs,
            {
                "destination": "/sys/fs/cgroup",
                "type": "cgroup",
                "source": "cgroup",
                "options": ["nosuid", "noexec", "nodev", "relatime", "ro"],
            },
            {
                "destination": TOOLSET_ROOT,
                "type": "bind",
                "source": str(toolset),
                "options": ["rbind", "nosuid", "nodev", "rw" if toolset_writable else "ro"],
            },
            *(
                {
                    "destination": path,
                    "type": "bind",
                    "source": f"{toolset}{path}",
                    "options": ["bind", "nosuid", "nodev", "ro"],
                }
                for path in agent_programs
            ),
        ],
        "linux": {
            "namespaces": [{"type": kind} for kind in namespaces],
            "cgroupsPath": f"/{CGROUP_PARENT}/{root.parent.name}",
            "resources": {
                "memory": {"limit": memory, "swap": memory},
                "pids": {"limit": limits.pids},
                "cpu": {"quota": int(limits.cpus * 100_000), "period": 100_000},
                "devices": [{"allow": False, "access": "rwm"}],
            },
            "maskedPaths": MASKED_PATHS,
            "readonlyPaths": READONLY_PATHS,
            "seccomp": {
                "defaultAction": "SCMP_ACT_ALLOW",
                "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
                "syscalls": [{"names": DENIED_CALLS, "action": "SCMP_ACT_ERRNO", "errnoRet": 1}],
            },
        },
    }


def init_script() -> str:
    """PID 1 of a sandbox: it starts the agent's shell on its standard input and output and
    the judge's on descriptors 3 and 4, lets go of all four, and becomes KEEPER_ARGV (which
    drops the judge's capability the shells were started before).

    The shells start as jobs with job control on, so that neither ignores SIGINT and
    SIGQUIT (a background job without job control does), and before KEEPER's trap.
    """
    agent = " ".join(AGENT_SHELL_ARGV)
    shell = " ".join(SHELL_ARGV)
    judge = " ".join(f"{key}={shlex.quote(value)}" for key, value in JUDGE_ENVIRONMENT.items())
    return (
        f"set -m; {agent} <&0 2>&1 3<&- 4>&- & {judge} {shell} <&3 >&4 2>&4 3<&- 4>&- & "
        f"set +m; exec <{EMPTY_FILE} >/dev/null 2>&1 3<&- 4>&-; exec {shlex.join(KEEPER_ARGV)}"
    )


def _high_pipe() -> tuple[int, int]:
    """A pipe whose ends are above 4: none is overwritten while descriptors 0-4 are placed."""
    ends = os.pipe()
    high = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5) for fd in ends)
    for fd in ends:
        os.close(fd)
    return high[0], high[1]


def _shell_key(argv: list[str], environment: dict[str, str] | None) -> tuple[Any, ...]:
    return (*argv, *sorted((environment or {}).items()))


class OciContainer:
    """One container of an OCI runtime, in its own folder of the run.

    The folder holds the bundle (config.json), the overlay's upper and work layers, and
    `rootfs`, where the overlay is mounted; removing the container removes the folder.
    A container started by `start` runs `init_script`: the two shells that PID 1 started
    are handed out by the first `exec` of the same program and environment, so that a
    fresh sandbox costs one runtime call, not three. Stopping a container kills what its
    cgroups hold (the pid namespace ends with its PID 1) and removes the runtime's state
    of it, which is what `RUNTIME delete --force` does, without the pause it makes before
    it returns.
    """

    def __init__(
        self,
        runtime: str,
        state: Path,
        folder: Path,
        lower: Path,
        config: dict[str, Any],
        later: Callable[[Callable[[], object]], None],
    ):
        self.runtime = runtime
        self.state = state
        self.folder = folder
        self._later = later  # runs work in the background
        self.id = folder.name
        self._shells: dict[tuple[Any, ...], Channel] = {}
        for layer in ("upper", "work", "rootfs"):
            (folder / layer).mkdir(parents=True)
        mount_overlay(lower, folder / "upper", folder / "work", folder / "rootfs")
        (folder / "upper/etc").mkdir()
        (folder / "upper/etc/hosts").write_text(HOSTS)
        (folder / "config.json").write_text(json.dumps(config))

    def _command(self, *args: str) -> list[str]:
        return [self.runtime, "--root", str(self.state), *args]

    def start(self) -> None:
        """Start PID 1 (`init_script`) in the background, and with it both shells."""
        agent_input, agent_output, judge_input, judge_output = (_high_pipe() for _ in range(4))
        container_ends = (agent_input[0], agent_output[1], judge_input[0], judge_output[1])
        ours = (agent_input[1], agent_output[0], judge_input[1], judge_output[0])
        argv = self._command(
            "run", "--detach", "--preserve-fds", "2", "--bundle", str(self.folder), self.id
        )
        # the runtime's errors go to the folder's `log`; PID 1 hands its own copy of them on
        with open(self.folder / "log", "w+b") as log:
            placed = zip(
                (*container_ends[:2], log.fileno(), *container_ends[2:]), range(5), strict=True
            )
            try:
                pid = os.posix_spawn(
                    self.runtime,
                    argv,
                    os.environ,
                    file_actions=[(os.POSIX_SPAWN_DUP2, fd, to) for fd, to in placed],
                )
                status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                if status != 0:
                    log.seek(0)
                    raise SandboxError(
                        f"{Path(self.runtime).name} could not start a container: "
                        + log.read().decode(errors="replace").strip()[-500:]
                    )
            except BaseException:
                for fd in ours:
                    os.close(fd)
                raise
            finally:
                for fd in container_ends:
                    os.close(fd)
        self._shells = {
            _shell_key(AGENT_SHELL_ARGV, None): PipeChannel(ours[0], ours[1]),
            _shell_key(SHELL_ARGV, JUDGE_ENVIRONMENT): PipeChannel(ours[2], ours[3]),
        }

    def run_to_end(self, timeout: float) -> tuple[int, str]:
        """Run PID 1 in the foreground; return its exit status and output."""
        result = subprocess.run(
            self._command("run", "--bundle", str(self.folder), self.id),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
        return result.returncode, (result.stdout + result.stderr).decode(errors="replace")

    def exec(self, argv: list[str], environment: dict[str, str] | None) -> Channel:
        started = self._shells.pop(_shell_key(argv, environment), None)
        if started is not None:
            return started
        variables = {**ENVIRONMENT, **(environment or {})}
        options = [f"--env={key}={value}" for key, value in variables.items()]
        return PipeChannel.spawn(self._command("exec", "--cwd", "/root", *options, self.id, *argv))

    def running(self) -> bool:
        state = subprocess.run(self._command("state", self.id), capture_output=True, text=True)
        if state.returncode != 0:
            return False
        found = json.loads(state.stdout)
        return found.get("status") == "running" and not ending(int(found.get("pid") or 0))

    def _stop(self) -> None:
        for channel in self._shells.values():
            channel.close()
        self._shells = {}
        remove_cgroup(self.id)
        shutil.rmtree(self.state / self.id, ignore_errors=True)

    def restart(self) -> None:
        self._stop()
        self.start()

    def remove(self) -> None:
        """End the container now; its files go in the background (deleting waits on I/O)."""
        self._stop()
        unmount(self.folder / "rootfs")
        self._later(lambda: shutil.rmtree(self.folder, ignore_errors=True))


class OciPool(SandboxPool):
    """The OCI sandbox: containers of crun or runc, created ahead of need in the run's folder.

    `rootfs` is a root file system folder (`lifelong-gym build-image os --rootfs DIR`);
    without one, the Docker image `image` is exported once and cached.
    """

    def __init__(
        self,
        rootfs: str | Path | None = None,
        *,
        image: str = DEFAULT_IMAGE,
        runtime: str | None = None,
        size: int = 2,
        limits: Limits | None = None,
    ):
        super().__init__(size=size, limits=limits)
        self.runtime = find_runtime(runtime)
        check_host()
        sweep_dead_runs()
        self.rootfs = resolve_rootfs(rootfs, image)
        self.run_dir = STATE_ROOT / self.run_id[:12]
        self.state = self.run_dir / "runtime"
        claim_run(self.run_dir)
        self._count = 0
        try:
            self.toolset = ensure_dir_toolset(self.rootfs, self._container)
        except BaseException:
            remove_run(self.run_dir)
            raise
        self.agent_programs = (
            (self.toolset / AGENT_MANIFEST).read_text().split()
            if self.limits.restrict_commands
            else []
        )
        self._start_making()

    def _container(self, args: list[str], *, toolset: Path, writable: bool) -> OciContainer:
        with self._lock:
            self._count += 1
            name = f"{self.run_id[:12]}-{self._count}"
        folder = self.run_dir / name
        config = bundle_config(
            folder / "rootfs",
            toolset,
            self.limits,
            args=args,
            toolset_writable=writable,
            agent_programs=() if writable else self.agent_programs,
        )
        return OciContainer(
            self.runtime, self.state, folder, self.rootfs, config, self.in_background
        )

    def create(self) -> Sandbox:
        container = self._container(
            [TRUSTED_BASH, "-c", init_script()], toolset=self.toolset, writable=False
        )
        try:
            container.start()
        except BaseException:
            container.remove()
            raise
        return start_shells(container, self.limits)

    def _remove_all(self) -> None:
        remove_run(self.run_dir)
