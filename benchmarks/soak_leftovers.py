"""What a soak's environment left behind after `close()`, in this process and outside it.

In this process: child processes still alive, threads and open descriptors beyond those
before the environment was built. Outside: on a MySQL server the databases and accounts
named after this process and the connections it still holds; on the Docker engine the
containers labelled with its pid; in the OCI sandbox's state root the folders it owns; on
a SPARQL endpoint the graphs that were not there before.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

GRACE = 5.0  # seconds for threads and processes that a close() ended to be gone
GRAPHS = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"


@dataclass
class Before:
    """This process's figures before the environment was built, and where it reaches."""

    env_id: str
    env_kwargs: dict
    children: set[int]
    threads: set[str]
    fds: set[str]
    graphs: set[str] = field(default_factory=set)


def descendants(pid: int | None = None) -> list[int]:
    """The pids of every process below `pid` (this process by default)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [os.getpid() if pid is None else pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def _fds() -> dict[str, str]:
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor listdir itself used
            pass
    return found


def _fd_keys() -> set[str]:
    return {f"{fd} -> {target}" for fd, target in _fds().items()}


def _thread_names() -> set[str]:
    return {f"{t.name} ({t.ident})" for t in threading.enumerate()}


def _sparql(env_kwargs: dict) -> str | None:
    return env_kwargs.get("url") if env_kwargs.get("backend") == "sparql" else None


def snapshot_before(env_id: str, env_kwargs: dict) -> Before:
    """What is there before the environment is built."""
    url = _sparql(env_kwargs)
    return Before(
        env_id=env_id,
        env_kwargs=dict(env_kwargs),
        children=set(descendants()),
        threads=_thread_names(),
        fds=_fd_keys(),
        graphs=graphs(url) if url else set(),
    )


def leftovers_of(before: Before) -> list[str]:
    """Everything the closed environment left, one description each (none: an empty list)."""
    found: list[str] = []
    deadline = time.monotonic() + GRACE
    while True:
        children = set(descendants()) - before.children
        threads = _thread_names() - before.threads
        if (not children and not threads) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    found += [f"child process {pid} ({_command(pid)})" for pid in sorted(children)]
    found += [f"thread {name}" for name in sorted(threads)]
    found += [f"open fd {key}" for key in sorted(_fd_keys() - before.fds)]
    kwargs = before.env_kwargs
    if before.env_id == "LifelongDB-v0" and kwargs.get("backend") == "mysql":
        found += mysql_leftovers(kwargs["url"])
    if before.env_id == "LifelongOS-v0":
        found += oci_leftovers() if kwargs.get("sandbox") == "oci" else docker_leftovers()
    url = _sparql(kwargs)
    if url:
        found += [f"graph {g}" for g in sorted(graphs(url) - before.graphs)]
    return found


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()[:80]
    except OSError:
        return "ended"


def local_ports() -> set[int]:
    """The local TCP ports of the sockets this process holds open."""
    inodes = {t[8:-1] for t in _fds().values() if t.startswith("socket:[")}
    ports = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table) as rows:
                next(rows)
                for row in rows:
                    columns = row.split()
                    if columns[9] in inodes:
                        ports.add(int(columns[1].rsplit(":", 1)[1], 16))
        except OSError:  # no IPv6
            pass
    return ports


def mysql_leftovers(url: str) -> list[str]:
    """This process's databases, accounts and connections on the MySQL server at `url`."""
    import pymysql

    from lifelong_gym.envs.db.backends.mysql.backend import names_like, parse_url
    from lifelong_gym.envs.db.backends.mysql.cleanup import run

    pattern = names_like(os.getpid())
    with pymysql.connect(**parse_url(url)) as admin:
        databases = run(admin, "SHOW DATABASES LIKE %s", (pattern,))
        users = run(admin, "SELECT User FROM mysql.user WHERE User LIKE %s", (pattern,))
        ports = local_ports()
        connections = [
            (thread, user, host)
            for thread, user, host in run(
                admin,
                "SELECT ID, USER, HOST FROM information_schema.PROCESSLIST "
                "WHERE ID <> CONNECTION_ID()",
            )
            if _like(user, pattern) or _port(host) in ports
        ]
    return (
        [f"database {name}" for (name,) in databases]
        + [f"account {name}" for (name,) in users]
        + [f"connection {thread} of {user} from {host}" for thread, user, host in connections]
    )


def _like(name: str, pattern: str) -> bool:
    """Whether `name` matches a LIKE pattern of literal text, `\\_` and a final `%`."""
    return name.startswith(pattern.removesuffix("%").replace("\\_", "_"))


def _port(host: str) -> int | None:
    """The client's port of a TCP connection (PROCESSLIST shows it as host:port)."""
    tail = host.rsplit(":", 1)[-1]
    return int(tail) if ":" in host and tail.isdigit() else None


def docker_leftovers() -> list[str]:
    """The containers on the Docker engine labelled with this process's pid."""
    from lifelong_gym.docker_engine import docker_client
    from lifelong_gym.envs.os.backends.docker import LABEL_PID

    client = docker_client()
    try:
        found = client.api.containers(all=True, filters={"label": f"{LABEL_PID}={os.getpid()}"})
    finally:
        client.close()
    return [f"container {c['Id'][:12]} ({c['State']})" for c in found]


def oci_leftovers() -> list[str]:
    """The OCI sandbox's state folders owned by this process."""
    from lifelong_gym.envs.os.backends.oci.state import STATE_ROOT

    if not STATE_ROOT.is_dir():
        return []
    found = []
    for run in STATE_ROOT.iterdir():
        try:
            owner = json.loads((run / "owner").read_text())
        except (OSError, ValueError):
            continue
        if owner.get("pid") == os.getpid():
            found.append(f"OCI state folder {run}")
    return found


def graphs(url: str) -> set[str]:
    """The named graphs a SPARQL endpoint holds."""
    query = urllib.parse.urlencode({"query": GRAPHS})
    request = urllib.request.Request(
        f"{url}?{query}", headers={"Accept": "application/sparql-results+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        rows = json.load(response)["results"]["bindings"]
    return {row["g"]["value"] for row in rows}
