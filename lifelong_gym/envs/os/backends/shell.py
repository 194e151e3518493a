"""A bash session inside a sandbox, driven through an attached exec stream.

Writing a command to a bash that is already running answers far sooner than a fresh
`exec` per command (docs/os.md has the figures). Each command
is sent as one line that ends by printing a random marker and the exit status, so the
reader knows where the output ends without waiting for the stream to close. The stream
is a Docker exec socket or the pipes of an OCI runtime's `exec`. The bash is
the judge's toolset's own (read-only, see toolset.py), so an agent that replaced
/usr/bin/bash still gets a shell; its commands find the container's programs on its PATH.
"""

from __future__ import annotations

import os
import secrets
import select
import socket
import struct
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from lifelong_gym.envs.os.backends.toolset import (
    EMPTY_FILE,
    JUDGE_ENVIRONMENT,
    TRUSTED_BASH,
    TRUSTED_PYTHON,
    TRUSTED_SETPRIV,
)
from lifelong_gym.truncation import truncate_stream

_FRAME_HEADER = struct.Struct(">BxxxL")
SHELL_ARGV = [TRUSTED_BASH, "--noprofile", "--norc"]  # the judge's shell
# The agent's: the same bash, without CAP_AUDIT_WRITE (of no use in a container's own pid
# namespace) for it and every process it starts. The judge keeps it, so the kernel refuses
# every agent process the judge's descriptors (/proc/PID/fd), memory and tracing: a process
# may reach those of another of its user id only when it holds every capability the other has.
WITHOUT_JUDGE_CAPABILITY = [TRUSTED_SETPRIV, "--bounding-set=-audit_write", "--"]
AGENT_SHELL_ARGV = [*WITHOUT_JUDGE_CAPABILITY, *SHELL_ARGV]
# The agent's bash, once restricted to the agent's programs (restricted_shell.py)
RESTRICTED_SHELL_ARGV = [
    *WITHOUT_JUDGE_CAPABILITY,
    TRUSTED_PYTHON,
    "-I",
    "-S",
    "-c",
    Path(__file__).with_name("restricted_shell.py").read_text(),
    *SHELL_ARGV,
]
# The container's process count (cgroup v1 or v2) into a variable, read without forking so
# that it works even when a fork bomb holds every process slot.
_COUNT = (
    "{var}=; {{{{ read -r {var} < /sys/fs/cgroup/pids/pids.current || "
    "read -r {var} < /sys/fs/cgroup/pids.current; }}}} 2>/dev/null"
)
# After a command: its status, the process count, and the count before it (if read).
_STATUS = (
    "__lg_s=$?; " + _COUNT.format(var="__lg_p") + "; "
    'printf \'\\n%s:%d:%s:%s\\n\' {marker} "$__lg_s" "${{__lg_p:-}}" "${{__lg_b:-}}"'
)
# Before an agent's command: the count, and the command not run when it is already `full`.
_FULL = (
    _COUNT.format(var="__lg_b") + "; "
    'if [ "${{__lg_b:-0}}" -ge {full} ]; then '
    'printf \'\\n%s:full:%s:%s\\n\' {marker} "$__lg_b" "$__lg_b"; '
    "else {command}; {status}; fi"
)


class Mode(StrEnum):
    """How a script runs in the session."""

    PERSISTENT = "persistent"  # in the shell itself: `cd` and variables persist
    BASH_C = "bash-c"  # `bash -c SCRIPT` in a child, as the reference does
    PYTHON = "python"  # `python3 -c SCRIPT` in a child
    DETACHED = "detached"  # `bash -c SCRIPT` in a new session (init, background programs)


@dataclass
class CommandResult:
    """What one command printed, how it ended, and whether the shell survived."""

    output: str
    exit_code: int | None
    timed_out: bool = False
    shell_lost: bool = False
    processes: int | None = None  # the container's process count when the command ended
    processes_before: int | None = None  # and when it began (an agent's command only)
    limit_full: bool = False  # not run: processes left running already filled the limit
    out_of_processes: bool = False  # the count neared the limit, so all were killed
    stopped: str | None = None  # how the agent's processes were ended after it, if they were
    ended_before: str | None = None  # how those left running were ended before it, if so


def ansi_c_quote(text: str) -> str:
    """`text` as a bash `$'...'` word that bash reads back byte for byte (NULs dropped)."""
    out = []
    for byte in text.replace("\0", "").encode("utf-8"):
        char = chr(byte)
        if char.isascii() and (char.isalnum() or char in " _-./,:=+@%^"):
            out.append(char)
        else:
            out.append(f"\\x{byte:02x}")
    return "$'" + "".join(out) + "'"


def command_line(
    script: str,
    mode: Mode,
    args: tuple[str, ...] = (),
    stdin: str = "/dev/null",
    launcher: str = "",
) -> str:
    """The bash text that runs `script` in `mode` reading `stdin`, with stderr merged; a
    child (every mode but PERSISTENT) starts through `launcher`, if given."""
    word = ansi_c_quote(script)
    extra = " ".join(ansi_c_quote(a) for a in args)
    runner = {
        Mode.PERSISTENT: f"eval {word}",
        Mode.BASH_C: f"{launcher}bash -c {word} lifelong-gym {extra}",
        Mode.PYTHON: f"{launcher}python3 -c {word} {extra}",
        Mode.DETACHED: f"{launcher}setsid --wait bash -c {word}",
    }[mode]
    return f"{runner} <{stdin} 2>&1"


def _count(text: bytes) -> int | None:
    return int(text) if text.strip().isdigit() else None


class _Capture:
    """Output kept as head and tail within a byte budget, counting what fell between."""

    def __init__(self, budget: int):
        self.budget = budget
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.budget - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self.budget
            if excess > 0:
                self.dropped += excess
                del self.tail[:excess]

    def text(self, limit: int) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        return truncate_stream(head, tail, limit, dropped=self.dropped)


class Channel(Protocol):
    """A byte stream to one process in a sandbox: its standard input, and its merged output."""

    def send(self, data: bytes) -> None:
        """Write to the process's input (OSError once it is gone)."""

    def receive(self, timeout: float) -> bytes | None:
        """The next output (b"" after `timeout` seconds of silence, None at its end)."""

    def end_input(self) -> None:
        """Close the process's input: a bash reading it sees the end and exits."""

    def close(self) -> None:
        """Let go of the stream (the process itself is not killed)."""


# Starts a program in the sandbox with an environment (None: the sandbox's own).
Starter = Callable[[list[str], "dict[str, str] | None"], Channel]


class DockerChannel:
    """An attached `docker exec` socket, its output split from the engine's stream frames."""

    def __init__(
        self, client: Any, container_id: str, argv: list[str], environment: dict[str, str] | None
    ):
        exec_id = client.api.exec_create(
            container_id, argv, stdin=True, tty=False, environment=environment
        )["Id"]
        self._stream = client.api.exec_start(exec_id, socket=True)  # keeps its socket open
        self._socket: socket.socket = self._stream._sock
        self._pending = b""  # raw stream bytes not yet split into frames

    def send(self, data: bytes) -> None:
        self._socket.sendall(data)

    def receive(self, timeout: float) -> bytes | None:
        while True:
            if len(self._pending) >= _FRAME_HEADER.size:
                _, size = _FRAME_HEADER.unpack_from(self._pending)
                if len(self._pending) >= _FRAME_HEADER.size + size:
                    payload = self._pending[_FRAME_HEADER.size : _FRAME_HEADER.size + size]
                    self._pending = self._pending[_FRAME_HEADER.size + size :]
                    return payload
            ready, _, _ = select.select([self._socket], [], [], max(timeout, 0))
            if not ready:
                return b""
            try:
                data = self._socket.recv(1 << 16)
            except OSError:
                return None
            if not data:
                return None
            self._pending += data

    def end_input(self) -> None:
        self._socket.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        # shutdown, not just close: the stream wrapper holds the descriptor open, and an
        # unread stream stalls the engine's other execs in this container
        for end in (lambda: self._socket.shutdown(socket.SHUT_RDWR), self._socket.close):
            try:
                end()
            except OSError:
                pass
        self._stream.close()


class PipeChannel:
    """The pipes of a program in a sandbox: its input, and its merged output.

    `process` is the host process holding the program (`runc exec`, ...), when there is one.
    """

    def __init__(self, input_fd: int, output_fd: int, process: subprocess.Popen | None = None):
        self._input = os.fdopen(input_fd, "wb")
        self._output = os.fdopen(output_fd, "rb", buffering=0)
        self._process = process

    @classmethod
    def spawn(cls, argv: list[str]) -> PipeChannel:
        """Start the host program `argv` (`runc exec ...`) and attach to its pipes."""
        input_read, input_write = os.pipe()
        output_read, output_write = os.pipe()
        try:
            process = subprocess.Popen(
                argv, stdin=input_read, stdout=output_write, stderr=output_write
            )
        except BaseException:
            for fd in (input_write, output_read):
                os.close(fd)
            raise
        finally:
            for fd in (input_read, output_write):
                os.close(fd)
        return cls(input_write, output_read, process)

    def send(self, data: bytes) -> None:
        self._input.write(data)
        self._input.flush()

    def receive(self, timeout: float) -> bytes | None:
        ready, _, _ = select.select([self._output], [], [], max(timeout, 0))
        if not ready:
            return b""
        try:
            return os.read(self._output.fileno(), 1 << 16) or None
        except OSError:
            return None

    def end_input(self) -> None:
        self._input.close()

    def close(self) -> None:
        for stream in (self._input, self._output):
            try:
                stream.close()
            except OSError:
                pass
        if self._process is not None:
            self._process.poll()  # reaped now if it ended, else by `subprocess` later


class ShellSession:
    """One bash process in a sandbox, fed commands over a `Channel`.

    A `trusted` shell (the judge's) sees only toolset programs (JUDGE_ENVIRONMENT), reads
    the toolset's empty file as input, not the container's /dev/null, and starts every
    script it runs in a child without its capability (WITHOUT_JUDGE_CAPABILITY). `argv` is the
    program that starts the bash (by default SHELL_ARGV for the judge, AGENT_SHELL_ARGV for
    the agent; or RESTRICTED_SHELL_ARGV).
    """

    def __init__(self, start: Starter, *, trusted: bool = False, argv: list[str] | None = None):
        self._starter = start
        self.argv = argv or (SHELL_ARGV if trusted else AGENT_SHELL_ARGV)
        self.environment = JUDGE_ENVIRONMENT if trusted else None
        self.stdin = EMPTY_FILE if trusted else "/dev/null"
        # what the judge runs as a child (an evaluation, which may run the agent's files)
        # lacks the judge's capability: it cannot read the judge's memory or descriptors
        self.launcher = " ".join(WITHOUT_JUDGE_CAPABILITY) + " " if trusted else ""
        self.pid: int | None = None
        self._channel: Channel | None = None
        self._start()

    @property
    def alive(self) -> bool:
        """Whether the shell can take a command."""
        return self._channel is not None

    def _start(self) -> None:
        self._channel = self._starter(self.argv, self.environment)
        self._greet()

    def _greet(self) -> None:
        result = self.run("echo $$", Mode.PERSISTENT, timeout=30, limit=1000)
        if result.exit_code != 0 or not result.output.strip().isdigit():
            self.close()
            raise RuntimeError(f"the container's shell did not start: {result.output.strip()!r}")
        self.pid = int(result.output.strip())

    def replace(self, argv: list[str]) -> None:
        """Execute `argv` in place of this bash (it must start a bash on the same stream);
        shells started later run it too. RuntimeError when no bash answers after it."""
        if self._channel is None:
            self._start()
        assert self._channel is not None
        self.argv = argv
        try:
            self._channel.send(f"exec {' '.join(ansi_c_quote(word) for word in argv)}\n".encode())
        except OSError:
            self._drop_channel()
        self._greet()

    def run(
        self,
        script: str,
        mode: Mode,
        *,
        timeout: float,
        limit: int,
        args: tuple[str, ...] = (),
        full: int | None = None,
    ) -> CommandResult:
        """Run `script`; output beyond `limit` characters keeps its head and tail.

        With `full`, the script is not run (`limit_full`) when the container already holds
        that many processes.
        """
        if self._channel is None:
            self._start()
        assert self._channel is not None
        marker = secrets.token_hex(8).encode()
        status = _STATUS.format(marker=marker.decode())
        command = command_line(script, mode, args, self.stdin, self.launcher)
        if full is None:
            line = f"__lg_b=; {command}; {status}\n"
        else:
            line = _FULL.format(full=full, marker=marker.decode(), command=command, status=status)
            line += "\n"
        capture = _Capture(max(limit, 1) * 4)
        try:
            self._channel.send(line.encode())
        except OSError:
            self._drop_channel()
            return CommandResult("", None, shell_lost=True)
        return self._read_until(marker, capture, time.monotonic() + timeout, limit)

    def _read_until(
        self, marker: bytes, capture: _Capture, deadline: float, limit: int
    ) -> CommandResult:
        assert self._channel is not None
        needle = b"\n" + marker + b":"
        window = b""  # the unflushed end of the output, where the marker may begin
        while True:
            end = window.find(needle)
            if end >= 0 and window.find(b"\n", end + len(needle)) >= 0:
                status_end = window.find(b"\n", end + len(needle))
                capture.add(window[:end])
                code, _, counts = window[end + len(needle) : status_end].partition(b":")
                after, _, before = counts.partition(b":")
                if code == b"full":
                    return CommandResult("", None, processes=_count(after), limit_full=True)
                return CommandResult(
                    capture.text(limit),
                    int(code),
                    processes=_count(after),
                    processes_before=_count(before),
                )
            keep = len(needle) + 32
            if len(window) > keep:
                capture.add(window[:-keep])
                window = window[-keep:]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                capture.add(window)
                return CommandResult(capture.text(limit), None, timed_out=True)
            chunk = self._channel.receive(remaining)
            if chunk is None:
                capture.add(window)
                self._drop_channel()
                return CommandResult(capture.text(limit), None, shell_lost=True)
            window += chunk

    def _drop_channel(self) -> None:
        if self._channel is not None:
            self._channel.close()
        self._channel = None
        self.pid = None

    def close(self) -> None:
        """End the bash (its background jobs stay) and close the connection."""
        if self._channel is not None:
            try:
                self._channel.send(b"\nexit 0\n")
                self._channel.end_input()
            except OSError:
                pass
        self._drop_channel()
