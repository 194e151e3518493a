"""The judge's toolset: a read-only volume with a relocated copy of the image's programs.

The agent is root in its container and may replace any program, library or loader
setting there (`ln -sf /bin/true /usr/bin/bash`, `/etc/ld.so.preload`, ...). The judge,
the container's PID 1 and the process killer therefore run programs from TOOLSET_ROOT, a
named volume mounted read-only into every container: the agent has no CAP_SYS_ADMIN, so
it can neither remount nor unmount it, nor rename the mount point. The volume is built
once per image (by `toolset_build.py`, run by the image's own python3 in a fresh
container) and kept, like the image, for later runs; a marker volume says it is complete.

The toolset also holds what `restrict_commands=True` gives the agent (restricted_shell.py):
AGENT_MANIFEST lists where the image keeps the agent's programs (AGENT_PROGRAMS and the
interpreters of those that are scripts), whose toolset copies the agent may execute.
"""

from __future__ import annotations

import fcntl
import hashlib
import tempfile
from pathlib import Path
from typing import Any

from lifelong_gym.errors import SandboxError

TOOLSET_ROOT = "/.lgj"
TRUSTED_BASH = f"{TOOLSET_ROOT}/usr/bin/bash"
TRUSTED_PYTHON = f"{TOOLSET_ROOT}/usr/bin/python3"
TRUSTED_SETPRIV = f"{TOOLSET_ROOT}/usr/bin/setpriv"
EMPTY_FILE = f"{TOOLSET_ROOT}/empty"
AGENT_MANIFEST = "agent-programs"  # in the toolset's root
# The benchmark's 29 commands (cd, echo and exit are bash builtins too; the image has no
# program for cd or exit), the shell that runs them, and the one that awk's system(), sed's
# `e` and vi's `:!` run commands with: what a restricted agent may execute.
ALLOWED_COMMANDS = (
    "addgroup awk cat cd chage chgrp chmod chown chsh cp echo exit find gpasswd grep groupadd "
    "ln ls mkdir mv rm sed sleep tee touch useradd usermod vi wc".split()
)
AGENT_PROGRAMS = (*ALLOWED_COMMANDS, "bash", "sh")
# The image's PATH with every folder moved into the toolset: as many entries, all existing,
# so an evaluation that inspects $PATH (AgentBench's) reads what the agent's shell has.
TRUSTED_PATH = ":".join(
    TOOLSET_ROOT + folder
    for folder in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
)
# What the judge's processes see: only toolset programs, no variable the agent could set.
JUDGE_ENVIRONMENT = {
    "PATH": TRUSTED_PATH,
    "HOME": "/root",
    "LC_ALL": "C.UTF-8",
    "LOCPATH": f"{TOOLSET_ROOT}/usr/lib/locale",
    "GCONV_PATH": f"{TOOLSET_ROOT}/usr/lib/x86_64-linux-gnu/gconv",
    "PYTHONSAFEPATH": "1",  # no script folder or working directory on sys.path
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PERL5LIB": ":".join(
        f"{TOOLSET_ROOT}/usr/{folder}"
        for folder in ("share/perl5", "lib/x86_64-linux-gnu/perl5/5.36", "share/perl/5.36")
    ),
}
VOLUME_LABEL = "org.lifelong-gym.os.toolset"
BUILD_TIMEOUT = 900


def ensure_toolset(client: Any, image: str, labels: dict[str, str]) -> str:
    """The name of the image's toolset volume, built first if it is not complete."""
    image_id = client.images.get(image).id.split(":")[-1][:12]
    argv = build_argv()
    # a changed build, a new volume
    version = hashlib.sha256("\0".join(argv).encode()).hexdigest()[:8]
    name = f"lifelong-gym-toolset-{image_id}-{version}"
    lock_path = Path(tempfile.gettempdir()) / f"{name}.lock"
    with open(lock_path, "w") as lock:  # one builder per host; the others wait for it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _exists(client, f"{name}-ready"):
            _build(client, image, name, labels, argv)
            client.volumes.create(f"{name}-ready", labels={VOLUME_LABEL: image_id})
    return name


def build_argv() -> list[str]:
    """The command that builds a toolset in a fresh container of the image."""
    script = Path(__file__).with_name("toolset_build.py").read_text()
    return ["python3", "-c", script, *AGENT_PROGRAMS]


def agent_programs(client: Any, image: str, toolset: str) -> list[str]:
    """AGENT_MANIFEST of a toolset volume: where the image keeps the agent's programs."""
    output = client.containers.run(
        image,
        [f"{TOOLSET_ROOT}/usr/bin/cat", f"{TOOLSET_ROOT}/{AGENT_MANIFEST}"],
        remove=True,
        network_mode="none",
        volumes={toolset: {"bind": TOOLSET_ROOT, "mode": "ro"}},
    )
    return output.decode().split()


def _exists(client: Any, volume: str) -> bool:
    from docker.errors import NotFound

    try:
        client.volumes.get(volume)
    except NotFound:
        return False
    return True


def _build(client: Any, image: str, name: str, labels: dict[str, str], argv: list[str]) -> None:
    if _exists(client, name):  # a build that did not finish: start again
        client.volumes.get(name).remove(force=True)
    client.volumes.create(name, labels={VOLUME_LABEL: name})
    builder = client.containers.run(
        image,
        argv,
        detach=True,
        network_mode="none",
        labels={**labels, VOLUME_LABEL: name},
        volumes={name: {"bind": TOOLSET_ROOT, "mode": "rw"}},
    )
    try:
        status = builder.wait(timeout=BUILD_TIMEOUT)["StatusCode"]
        log = builder.logs().decode(errors="replace")[-2000:]
    finally:
        builder.remove(force=True)
    if status != 0:
        raise SandboxError(
            f"building the judge's toolset from {image!r} failed (the image needs python3, "
            f"cp and ldconfig):\n{log}"
        )
