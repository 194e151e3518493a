"""Sandboxes for the OS tasks: a warm pool of limited, disposable containers, each with the
agent's shell and the judge's.

Containers are created ahead of need by background threads, several at once, because a
container takes a few hundred milliseconds to start while a reset should not wait. The
kinds of container: Docker's (docker_sandbox.py) and an OCI runtime's (oci.py).
"""

from __future__ import annotations

import atexit
import logging
import math
import queue
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from lifelong_gym.envs.os.backends.reaper import FUNCTIONS, kill_command, parse_pids
from lifelong_gym.envs.os.backends.shell import (
    AGENT_SHELL_ARGV,
    RESTRICTED_SHELL_ARGV,
    SHELL_ARGV,
    WITHOUT_JUDGE_CAPABILITY,
    Channel,
    CommandResult,
    Mode,
    ShellSession,
)
from lifelong_gym.envs.os.backends.toolset import (
    TOOLSET_ROOT,
    TRUSTED_BASH,
)
from lifelong_gym.errors import EnvArgumentError, SandboxError

logger = logging.getLogger(__name__)

# A container holding this share of its process limit is taken to run a fork bomb; a
# command that left processes running is watched this long, in these pauses, for one. A
# container holding the crowded share before a command is watched the same way: a bomb at
# the limit keeps dipping below it (a fork that fails ends its branch) and climbing back.
FULL_SHARE = 0.9
CROWDED_SHARE = 0.5
GROWTH_WATCH = 1.0
GROWTH_PAUSE = 0.05
JUDGE_EXIT_WAIT = 2.0  # seconds a released judge's shell is given to leave /proc
# Nothing inside can end PID 1 (KEEPER): a container that stopped was ended from outside
STOPPED = "the task's container stopped under it (its PID 1 was ended)"

# PID 1, from the toolset: ignores signals (so `kill -9 -1` inside cannot stop the container)
# and reaps orphans; a restart runs it again even if the agent replaced the container's bash
KEEPER = (
    f"trap '' TERM INT HUP QUIT USR1 USR2; "
    f"while :; do {TOOLSET_ROOT}/usr/bin/sleep 3600 & wait; done"
)
# It runs without the judge's capability, as the agent's shells do: the agent may then
# read its /proc entries, as in AgentBench's container, and the judge's shells are the only
# processes whose entries the agent may not read (none runs beside its commands).
KEEPER_ARGV = [*WITHOUT_JUDGE_CAPABILITY, TRUSTED_BASH, "-c", KEEPER]


@dataclass(frozen=True)
class Limits:
    """Resource limits of one container, and whether its agent is restricted to its programs.

    With `restrict_commands`, the agent's programs (AGENT_MANIFEST) are the toolset's
    read-only copies, mounted over the image's, and the agent's shell executes nothing else
    once the task is set up (`Sandbox.restrict_agent`).
    """

    memory: str = "512m"
    pids: int = 256
    cpus: float = 1.0
    file_size: int = 512 * 1024 * 1024  # bytes per file (RLIMIT_FSIZE)
    storage: str | None = "2G"  # root file system quota, where the storage driver has one
    network: bool = False
    restrict_commands: bool = False


class Container(Protocol):
    """A running container of either sandbox kind (Docker, OCI runtime)."""

    id: str

    def exec(self, argv: list[str], environment: dict[str, str] | None) -> Channel:
        """Start a program in the container, attached (None: the container's environment)."""

    def restart(self) -> None:
        """End every process and start PID 1 again; the files stay."""

    def running(self) -> bool:
        """Whether PID 1 still runs (nothing inside can end it: see KEEPER)."""

    def remove(self) -> None:
        """Remove the container and everything it holds (its processes, its files)."""


@dataclass
class Sandbox:
    """One container, the bash session the agent types into, and one for the judge.

    Both shells start with the container, ahead of need: a new exec is slow, slower on a
    busy engine (docs/os.md). The agent cannot type into the judge's shell (the judge holds
    a capability no agent process has, `start_shells` checks it), which runs only toolset
    programs and is the one that ends the agent's processes.
    """

    container: Container
    shell: ShellSession
    judge: ShellSession | None = None
    limits: Limits = field(default_factory=Limits)
    # processes of the task itself (PID 1, its setup's background programs): never the agent's
    baseline: frozenset[int] = frozenset()
    agent_argv: list[str] = field(default_factory=lambda: AGENT_SHELL_ARGV)  # the agent's bash

    def run(self, script: str, mode: Mode, *, timeout: float, limit: int) -> CommandResult:
        """Run a script in the agent's shell; an overrun ends every process of the agent.

        A fork bomb is ended in the step that started it, or, when it filled the limit
        only later, before the next command runs.
        """
        full = math.ceil(self.limits.pids * FULL_SHARE)
        crowded = math.ceil(self.limits.pids * CROWDED_SHARE)
        result = self.shell.run(script, mode, timeout=timeout, limit=limit, full=crowded)
        if result.limit_full and self._peak_count(result.processes or 0, full) < full:
            # many processes, and no bomb among them: the command runs
            result = self.shell.run(script, mode, timeout=timeout, limit=limit, full=full)
        if result.limit_full:  # processes left running filled the limit since the last step
            self.shell.close()
            ended = self.end_agent_processes()
            self.shell = self._new_shell()
            self.release_judge()
            result = self.shell.run(script, mode, timeout=timeout, limit=limit, full=full)
            result.ended_before = ended
        if result.processes is not None and result.processes_before is not None:
            if result.processes > result.processes_before:  # it left processes running
                result.processes = self._settled_count(result.processes, full)
        if result.limit_full or (result.processes is not None and result.processes >= full):
            result.out_of_processes = True  # a fork bomb left running in the background
        if result.timed_out or result.out_of_processes:
            self.shell.close()
            result.stopped = self.end_agent_processes()
        if result.shell_lost:
            # PID 1 ended from outside (a killed runtime, engine) takes the task's processes
            # with it, so the task cannot go on as it was
            self.ensure_running()
        if result.timed_out or result.shell_lost or result.out_of_processes:
            self.shell = self._new_shell()
            self.release_judge()
        return result

    def _peak_count(self, count: int, full: int) -> int:
        """The highest process count seen over the watch, which ends once it is `full`."""
        peak, deadline = count, time.monotonic() + GROWTH_WATCH
        while peak < full and time.monotonic() < deadline:
            time.sleep(GROWTH_PAUSE)
            probe = self.shell.run(":", Mode.PERSISTENT, timeout=5, limit=100)
            if probe.processes is None:  # even a builtin got no answer: the slots are taken
                return full
            peak = max(peak, probe.processes)
        return peak

    def _settled_count(self, count: int, full: int) -> int:
        """The process count once it stops changing: a fork bomb's grows to the limit."""
        deadline = time.monotonic() + GROWTH_WATCH
        while count < full and time.monotonic() < deadline:
            time.sleep(GROWTH_PAUSE)
            probe = self.shell.run(":", Mode.PERSISTENT, timeout=5, limit=100)
            if probe.processes is None:  # even a builtin got no answer: end them all
                return full
            if probe.processes == count:
                break
            count = probe.processes
        return count

    def restrict_agent(self) -> None:
        """From now on, the agent's shell and every process it starts execute only the
        agent's programs; so does each shell started for the agent later."""
        self.agent_argv = RESTRICTED_SHELL_ARGV
        try:
            self.shell.replace(self.agent_argv)
        except RuntimeError as error:
            raise SandboxError(f"restrict_commands=True cannot be enforced here: {error}") from None

    def remember_task_processes(self) -> None:
        """Take the processes running now (the task's own) as the ones never to kill."""
        listed = self.run_judged("__lg_pids", Mode.PERSISTENT, timeout=30, limit=100_000)
        shells = {self.shell.pid, self.judge.pid if self.judge is not None else None}
        self.baseline = parse_pids(listed.output) - shells

    def release_judge(self) -> None:
        """End the judge's shell until it is needed again (`run_judged` starts a new one).

        No judge process runs beside the agent's commands: an agent process may not read a
        judge's /proc entries (AGENT_SHELL_ARGV), so one left running would show in the
        agent's `find /` or `ls /proc/*/fd` as `Permission denied`, which AgentBench's
        container never prints. Returns once its /proc entry is gone (or after
        JUDGE_EXIT_WAIT seconds).
        """
        if self.judge is None:
            return
        pid = self.judge.pid
        self.judge.close()
        self.judge = None
        deadline = time.monotonic() + JUDGE_EXIT_WAIT
        while pid is not None and time.monotonic() < deadline:
            gone = self.shell.run(f"[ ! -e /proc/{pid} ]", Mode.PERSISTENT, timeout=5, limit=100)
            if gone.exit_code != 1:
                return
            time.sleep(0.002)

    def end_agent_processes(self) -> str:
        """Kill every process the agent started, by the container's process list.

        Returns what happened, for the agent's note. When processes keep coming back, or no
        judge shell can start (a fork bomb holds every slot), the container is restarted:
        its files stay, every process ends (the task's background programs too).
        """
        result = self.run_judged(
            kill_command(self.baseline), Mode.PERSISTENT, timeout=30, limit=100
        )
        if result.exit_code == 0 and result.output.strip().isdigit():
            count = int(result.output.strip())
            return f"{count} process{'es' if count != 1 else ''} killed"
        self.restart()
        return "the container was restarted to end them (its files are kept)"

    def restart(self) -> None:
        """Restart the container: every process ends, the files stay, new shells start."""
        self.shell.close()
        if self.judge is not None:
            self.judge.close()
            self.judge = None
        self._restart_container()
        self.shell = ShellSession(self.container.exec, argv=self.agent_argv)

    def ensure_running(self) -> None:
        """SandboxError when the container has stopped: what ran in it since can no longer be
        trusted to be the task's (a verdict, an observation), nor the task go on."""
        if not self.container.running():
            raise SandboxError(STOPPED)

    def _restart_container(self) -> None:
        """Restart a container the agent's processes hold (a fork bomb in every slot); one
        that stopped is never revived under its task, whose processes died with it."""
        self.ensure_running()
        self.container.restart()
        self.baseline = frozenset()

    def _new_shell(self, *, trusted: bool = False) -> ShellSession:
        argv = SHELL_ARGV if trusted else self.agent_argv
        try:
            shell = ShellSession(self.container.exec, trusted=trusted, argv=argv)
        except Exception:  # no process slot is free, or the container stopped
            self._restart_container()
            shell = ShellSession(self.container.exec, trusted=trusted, argv=argv)
        if trusted:
            shell.run(FUNCTIONS, Mode.PERSISTENT, timeout=30, limit=1000)
        return shell

    def run_judged(self, script: str, mode: Mode, **options: Any) -> CommandResult:
        """Run a script in the judge's shell (a new one if the agent killed it).

        `options` are those of `ShellSession.run` (timeout, limit, args).
        """
        for _ in range(2):
            if self.judge is None:
                self.judge = self._new_shell(trusted=True)
            result = self.judge.run(script, mode, **options)
            if result.timed_out:
                self.judge.close()
                self.judge = None
            if not result.shell_lost:
                return result
            self.judge = None
        return result

    def end_agent(self) -> None:
        """End the agent's shell and every process it started, before the evaluation."""
        self.shell.close()
        self.end_agent_processes()

    def remove(self) -> None:
        """Remove the container (and everything running in it)."""
        self.shell.close()
        if self.judge is not None:
            self.judge.close()
        try:
            self.container.remove()
        except Exception as error:  # already gone
            logger.debug("removing %s: %s", self.container.id[:12], error)


def start_shells(container: Container, limits: Limits) -> Sandbox:
    """The sandbox of a new container: the agent's shell and the judge's, started now.

    SandboxError when the judge holds no capability the agent's shell lacks (a container
    started without CAP_AUDIT_WRITE): the agent could then write into the judge's shell.
    """
    try:
        shell = ShellSession(container.exec)
        judge = ShellSession(container.exec, trusted=True)
        judge.run(FUNCTIONS, Mode.PERSISTENT, timeout=30, limit=1000)
        agent_has = _capabilities(judge, "CapEff", shell.pid)
        if _capabilities(judge, "CapPrm") & ~agent_has == 0:
            raise SandboxError(
                "the container's processes lack CAP_AUDIT_WRITE, which keeps the agent out of "
                "the judge's shell: run the containers with Docker's default capabilities"
            )
    except BaseException:
        container.remove()
        raise
    return Sandbox(container, shell, judge, limits)


def _capabilities(judge: ShellSession, kind: str, pid: int | None = None) -> int:
    """The capability set `kind` (CapEff, CapPrm) of process `pid` (by default the judge's
    shell), from its /proc status as the judge reads it."""
    script = f'while read -r key value; do [[ $key == {kind}: ]] && echo "$value"; done'
    status = f"/proc/{pid if pid is not None else '$$'}/status"
    result = judge.run(f"{script} <{status}", Mode.PERSISTENT, timeout=30, limit=100)
    try:
        return int(result.output.strip(), 16)
    except ValueError:
        how = "timed out" if result.timed_out else "lost" if result.shell_lost else "answered"
        raise SandboxError(
            f"the container's shell {how} without {kind} of {status}: {result.output!r}"
        ) from None


_LIVE_POOLS: weakref.WeakSet[SandboxPool] = weakref.WeakSet()


@atexit.register
def _close_live_pools() -> None:
    for pool in list(_LIVE_POOLS):
        pool.close()


class SandboxPool:
    """Sandboxes created ahead of need, each used for one task and then removed.

    A subclass makes one sandbox (`create`) and removes all of its run (`_remove_all`);
    it calls `_start_making()` at the end of its `__init__`.
    """

    def __init__(self, *, size: int, limits: Limits | None):
        if size < 1:
            raise EnvArgumentError(f"pool_size must be at least 1, got {size}")
        self.size = size
        self.limits = limits or Limits()
        self.run_id = uuid.uuid4().hex
        self._ready: queue.Queue[Sandbox | BaseException] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self._removers = ThreadPoolExecutor(2, thread_name_prefix="lifelong-os-remove")
        self._pending = 0  # background jobs (making, removing) not done yet
        self._idle = threading.Condition()

    def _start_making(self) -> None:
        self._makers = ThreadPoolExecutor(self.size, thread_name_prefix="lifelong-os-create")
        for _ in range(self.size):
            self._submit(self._makers, self._make)
        _LIVE_POOLS.add(self)

    def _submit(self, executor: ThreadPoolExecutor, work: Callable[[], object]) -> None:
        """Run `work` on `executor`, counted as pending until it ends (`wait_idle`)."""

        def counted() -> None:
            try:
                work()
            finally:
                self._count_pending(-1)

        self._count_pending(+1)
        try:
            executor.submit(counted)
        except RuntimeError:  # shut down
            self._count_pending(-1)
            raise

    def _count_pending(self, change: int) -> None:
        with self._idle:
            self._pending += change
            self._idle.notify_all()

    def wait_idle(self, timeout: float = 120) -> bool:
        """Wait until no sandbox is being made or removed in the background (the pool then
        holds its ready sandboxes only); whether it got there within `timeout` seconds."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def create(self) -> Sandbox:
        """Start one new sandbox now, its shells ready (the caller removes it)."""
        raise NotImplementedError

    def _remove_all(self) -> None:
        raise NotImplementedError

    def _make(self) -> None:
        if self._closed:
            return
        try:
            sandbox = self.create()
        except BaseException as error:
            self._ready.put(error)
            return
        with self._lock:
            closed = self._closed
            if not closed:
                self._ready.put(sandbox)
        if closed:
            sandbox.remove()

    def acquire(self, timeout: float = 120) -> Sandbox:
        """A ready sandbox (waiting for one if the pool is empty); a new one is started.

        One made ahead whose container has stopped since (its engine restarted), or a
        failure to make one (the engine was down then), is replaced by one made now, once
        the engine answers (`wait_until_ready`): a restart costs the task in flight only.
        """
        if self._closed:
            raise SandboxError("the container pool is closed")
        self._submit(self._makers, self._make)
        try:
            item = self._ready.get(timeout=timeout)
        except queue.Empty:
            raise SandboxError(f"no container became ready within {timeout} s") from None
        if isinstance(item, Sandbox):
            if item.container.running():
                return item
            logger.warning("a container made ahead has stopped (its engine restarted?)")
            self.discard(item)
        try:
            self.wait_until_ready()
            return self.create()
        except Exception as error:
            raise SandboxError(f"creating a container failed: {error}") from error

    def wait_until_ready(self) -> None:
        """Return once containers can be made (a subclass waits for its engine)."""

    def discard(self, sandbox: Sandbox) -> None:
        """Remove a used sandbox in the background."""
        self.in_background(sandbox.remove)

    def in_background(self, work: Callable[[], object]) -> None:
        """Run `work` on a removing thread (now, once the pool is closing); close() waits."""
        try:
            self._submit(self._removers, work)
        except RuntimeError:  # shut down
            work()

    def close(self) -> None:
        """Stop creating, and remove every container of this run; safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._makers.shutdown(wait=True, cancel_futures=True)
        self._removers.shutdown(wait=True)
        while not self._ready.empty():
            item = self._ready.get_nowait()
            if isinstance(item, Sandbox):
                item.remove()
        self._remove_all()
        _LIVE_POOLS.discard(self)
