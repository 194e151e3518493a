"""The OCI sandbox on a real runtime (crun or runc): its limits, its errors, and that nothing of
a run (container, mount, cgroup, folder) outlives close(), an exception or a SIGKILL.

The root file system is exported once from the Docker image (cached in the state folder);
the oracle, bad-input and hostile tests of both sandboxes are in test_os.py and
tests/security/test_os.py.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import pytest

import lifelong_gym  # noqa: F401 (registers the ids)
from lifelong_gym.envs.os.backends.oci.host import find_runtime
from lifelong_gym.envs.os.backends.oci.sandbox import OciPool
from lifelong_gym.envs.os.backends.oci.state import STATE_ROOT, cgroup_folders, mounts_under
from lifelong_gym.envs.os.backends.sandbox import Limits
from lifelong_gym.envs.os.backends.shell import Mode
from lifelong_gym.errors import EnvArgumentError, SandboxError

from .test_os import crashed_run


@pytest.fixture(scope="module")
def runtime(os_image) -> str:
    try:
        return Path(find_runtime(None)).name
    except SandboxError as error:
        pytest.skip(str(error))


def leftovers(run_id: str) -> list[str]:
    """What of the run is still on the host: its folder, mounts, cgroups, containers."""
    run_dir = STATE_ROOT / run_id[:12]
    found = [str(run_dir)] if run_dir.exists() else []
    found += mounts_under(STATE_ROOT)  # of this run, or of any run of this test: none may stay
    prefix = run_id[:12]
    for folder in cgroup_folders(""):
        found += [str(p) for p in folder.glob(f"{prefix}-*")]
    return [item for item in found if prefix in item]


FORKS = """
import os, time
count = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        count += 1
except OSError as error:
    print(count, error.errno)
"""


def test_limits_are_enforced(runtime):
    limits = Limits(memory="64m", pids=64, cpus=0.5, file_size=8 << 20)
    pool = OciPool(size=1, runtime=runtime, limits=limits)
    try:
        sandbox = pool.acquire()
        memory = sandbox.run(
            "python3 -c 'x = bytearray(300 << 20); print(len(x))'; echo status=$?",
            Mode.PERSISTENT, timeout=30, limit=2000,
        )  # fmt: skip
        assert "314572800" not in memory.output and "status=137" in memory.output
        big = sandbox.run(
            "dd if=/dev/zero of=/root/big bs=1M count=20 2>&1; stat -c %s /root/big",
            Mode.PERSISTENT, timeout=30, limit=2000,
        )  # fmt: skip
        assert "File size limit exceeded" in big.output  # SIGXFSZ
        assert big.output.rstrip().endswith(str(8 << 20))
        forks = sandbox.run(FORKS, Mode.PYTHON, timeout=30, limit=2000)
        count, errno = map(int, forks.output.split())
        assert 50 < count < 64 and errno == 11  # EAGAIN: the pids controller said no
        assert forks.out_of_processes and forks.stopped  # all ended, a new shell started
        network = sandbox.run("ls /sys/class/net", Mode.PERSISTENT, timeout=10, limit=200)
        assert network.output.split() == ["lo"]
        pool.discard(sandbox)
    finally:
        pool.close()


def test_close_leaves_nothing(runtime):
    environment = gym.make("LifelongOS-v0", sandbox="oci", runtime=runtime)
    environment.reset(options={"task_index": 0})
    run_id = environment.unwrapped.pool.run_id
    assert leftovers(run_id)
    environment.close()
    environment.close()
    assert leftovers(run_id) == []


@pytest.mark.parametrize("ending", ["exception", "kill"])
def test_nothing_outlives_a_crash(runtime, ending):
    run_id = crashed_run(ending, sandbox="oci")
    if ending == "exception":
        assert leftovers(run_id) == []
        return
    left = leftovers(run_id)
    assert any("/sys/fs/cgroup" in item for item in left)  # running containers ...
    assert any(item.endswith("/rootfs") for item in left)  # ... on mounted overlays
    environment = gym.make("LifelongOS-v0", sandbox="oci", pool_size=1)  # the next start
    try:
        assert leftovers(run_id) == []
    finally:
        environment.close()


NOBODY = 65534


def as_nobody(work: Callable[[], str]) -> str:
    """What `work` returns in a forked child that runs as the user nobody (its modules are
    imported already: the interpreter's own files may be closed to other users)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.write(write, work().encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as output:
        return output.read().decode()


def test_without_root_the_refusal_names_what_rootless_use_lacks(runtime):
    def start() -> str:
        try:
            OciPool(size=1, runtime=runtime).close()
        except SandboxError as error:
            return str(error)
        return "started"

    uid = NOBODY if os.geteuid() == 0 else os.geteuid()
    message = as_nobody(start) if os.geteuid() == 0 else start()
    assert message.startswith(f"the OCI sandbox runs as root (uid {uid} is not): ")
    assert "\n" not in message and message.endswith("or use sandbox='docker'")
    # what this host lacks, read here on its own: each must be named
    if not Path("/sys/fs/cgroup/cgroup.controllers").exists():  # v1 or hybrid
        assert "a cgroup v2 subtree delegated to" in message
        assert "this host's cgroups are v1 or hybrid" in message
    for table in ("/etc/subuid", "/etc/subgid"):
        text = Path(table).read_text() if Path(table).exists() else ""
        if not text.strip():
            assert "subordinate ids for" in message and f"in {table}" in message
    if shutil.which("newuidmap") is None:
        assert "newuidmap and newgidmap" in message
    assert not list(STATE_ROOT.parent.glob(f"lifelong-gym-oci-{uid}/*/owner"))  # nothing made


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"sandbox": "lxc"}, EnvArgumentError, "'docker' or 'oci'"),
        ({"sandbox": "oci", "runtime": "docker"}, EnvArgumentError, "crun, runc"),
        ({"runtime": "runc"}, EnvArgumentError, "sandbox='oci' only"),
        ({"sandbox": "oci", "rootfs": "/nonexistent"}, SandboxError, "--rootfs /nonexistent"),
        ({"sandbox": "oci", "image": "no/such:0"}, SandboxError, "build-image os --rootfs"),
    ],
)
def test_bad_settings_are_one_clear_error(runtime, options, error, words):
    with pytest.raises(error, match=re.escape(words)) as raised:
        gym.make("LifelongOS-v0", **options)
    assert "\n" not in str(raised.value)


def test_build_image_rootfs_refuses_a_used_folder_and_another_environment(tmp_path):
    from click.testing import CliRunner

    from lifelong_gym.cli import main

    (tmp_path / "notes.txt").write_text("mine")
    used = CliRunner().invoke(main, ["build-image", "os", "--rootfs", str(tmp_path)])
    assert used.exit_code != 0 and "is not empty" in used.output
    assert (tmp_path / "notes.txt").read_text() == "mine"
    other = CliRunner().invoke(main, ["build-image", "mysql", "--rootfs", str(tmp_path)])
    assert other.exit_code != 0 and "--rootfs goes with `os`" in other.output
