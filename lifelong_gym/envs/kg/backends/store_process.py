"""The embedded store in a child process, so that a query past its time limit can be stopped.

Oxigraph cannot cancel a query, and a thread cannot be killed: a runaway join left on a
thread keeps a core busy after `close()`. `StoreProcess` runs this file as a script
(`python store_process.py GRAPH FORMAT PREFIX MEMORY`: the standard library and pyoxigraph
only, no package import, so it starts in a fraction of a second). The child loads its own
copy of the graph and answers one query at a time over its stdin and stdout, as
length-prefixed JSON frames. A query past its limit is stopped by killing the child; the
next one is started at once and loads while the agent thinks. The child dies with its
parent (PR_SET_PDEATHSIG) and cannot use more than MEMORY bytes beyond the loaded graph.
"""

from __future__ import annotations

import gzip
import json
import os
import select
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

GRAPH_FORMATS = {".nt": "N_TRIPLES", ".ttl": "TURTLE"}
START_TIMEOUT = 300.0  # seconds to load the graph: a user's graph may be large
_FRAME = struct.Struct(">I")


class StoreStopped(Exception):
    """The child stopped before answering: `reason` says why (time limit, memory)."""

    def __init__(self, reason: str, *, timed_out: bool):
        super().__init__(reason)
        self.reason = reason
        self.timed_out = timed_out


class QueryRejected(Exception):
    """The store rejected a query (syntax, evaluation error); the message is Oxigraph's."""


def graph_format(path: Path) -> str:
    """The pyoxigraph format name for a graph file, from its suffix."""
    suffixes = path.suffixes
    core = suffixes[-2] if suffixes and suffixes[-1] == ".gz" and len(suffixes) > 1 else None
    suffix = core or (suffixes[-1] if suffixes else "")
    if suffix not in GRAPH_FORMATS:
        raise ValueError(
            f"graph file {path} must end in .nt, .ttl, .nt.gz or .ttl.gz "
            "(N-Triples or Turtle with Freebase-style IRIs)"
        )
    return GRAPH_FORMATS[suffix]


def load_store(path: Path, format_name: str) -> Any:
    """A new in-memory Oxigraph store holding the triples of `path`."""
    import pyoxigraph

    store = pyoxigraph.Store()
    opener: Any = gzip.open if path.suffix == ".gz" else open
    handle: IO[bytes]
    with opener(path, "rb") as handle:
        try:
            store.bulk_load(handle, format=getattr(pyoxigraph.RdfFormat, format_name))
        except SyntaxError as error:
            raise ValueError(
                f"graph file {path} does not parse as {format_name}: {error}"
            ) from None
    return store


class StoreProcess:
    """A child process holding a copy of the store; `select` runs a query there, bounded."""

    def __init__(self, path: Path, format_name: str, prefix: str, memory: int):
        self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, __file__, str(path), format_name, prefix, str(memory)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._ready = False

    @property
    def pid(self) -> int | None:
        """The child's process id (None once it was stopped)."""
        return self._process.pid if self._process is not None else None

    def select(self, query: str, timeout: float) -> list[str]:
        """The values of a one-variable query; StoreStopped when the child had to be killed."""
        if not self._ready:
            answer = self._receive(time.monotonic() + START_TIMEOUT, "loading the graph")
            if "error" in answer:
                self.stop()
                raise ValueError(answer["message"])
            self._ready = True
        assert self._process is not None and self._process.stdin is not None
        body = query.encode()
        try:
            self._process.stdin.write(_FRAME.pack(len(body)) + body)
            self._process.stdin.flush()
        except OSError:
            self.stop()
            raise StoreStopped("the store's process had exited", timed_out=False) from None
        answer = self._receive(
            time.monotonic() + timeout, f"longer than {timeout:g} s (its time limit)"
        )
        if "error" in answer:
            raise QueryRejected(answer["message"])
        return answer["values"]

    def _receive(self, deadline: float, overrun: str) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        descriptor = self._process.stdout.fileno()
        data = b""
        needed = _FRAME.size
        while len(data) < needed:
            remaining = deadline - time.monotonic()
            ready = select.select([descriptor], [], [], max(remaining, 0))[0]
            if not ready:
                self.stop()
                raise StoreStopped(f"the query ran {overrun}", timed_out=True)
            chunk = os.read(descriptor, max(needed - len(data), 1 << 16))
            if not chunk:
                self.stop()
                raise StoreStopped(
                    "the query needed more memory than the store may use", timed_out=False
                )
            data += chunk
            if needed == _FRAME.size and len(data) >= _FRAME.size:
                needed += _FRAME.unpack_from(data)[0]
        return json.loads(data[_FRAME.size :])

    def stop(self) -> None:
        """Kill the child (whatever it is doing) and wait for it; safe to call twice."""
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


# -- the child ------------------------------------------------------------------------------


def _die_with_parent() -> None:
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):  # not Linux: the closed stdin ends the loop instead
        pass
    if os.getppid() != parent:  # the parent died before the call
        os._exit(0)


def _limit_memory(extra: int) -> None:
    if extra <= 0:
        return
    import resource

    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, size + extra))


def _send(out: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    out.write(_FRAME.pack(len(body)) + body)
    out.flush()


def _serve(graph: str, format_name: str, prefix: str, memory: int) -> None:
    _die_with_parent()
    requests, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        store = load_store(Path(graph), format_name)
    except Exception as error:  # reported to the parent, which raises it
        _send(out, {"error": "load", "message": str(error)})
        return
    _limit_memory(memory)
    _send(out, {"ready": True})
    cut = len(prefix)
    while header := requests.read(_FRAME.size):
        query = requests.read(_FRAME.unpack(header)[0]).decode()
        try:
            values = []
            for solution in store.query(query):
                term = solution[0]
                if term is not None:
                    value = term.value
                    values.append(value[cut:] if value.startswith(prefix) else value)
            _send(out, {"values": values})
        except MemoryError:
            os._exit(1)  # the parent reports it as the memory limit
        except Exception as error:  # the store's own message, for the agent
            _send(out, {"error": type(error).__name__, "message": str(error)})


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
