"""Where SPARQL runs: an embedded Oxigraph store, or any SPARQL 1.1 endpoint."""

from __future__ import annotations

import gzip
import logging
import queue
import threading
import time
import urllib.error
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlparse

from lifelong_gym.envs.kg.sparql import NS
from lifelong_gym.errors import BackendError, EnvArgumentError, LifelongGymError

logger = logging.getLogger(__name__)

SHIPPED_GRAPH = Path(__file__).resolve().parents[2] / "data" / "kg" / "graph.nt.gz"
GRAPH_FORMATS = {".nt": "N_TRIPLES", ".ttl": "TURTLE"}


class QueryTimeout(LifelongGymError):
    """A query ran past its time limit (the agent's query, so the task goes on)."""


def short_name(value: str) -> str:
    """A Freebase IRI as its short name (`m.0abc12`); other values unchanged."""
    return value[len(NS) :] if value.startswith(NS) else value


class KGBackend(ABC):
    """A read-only SPARQL store answering SELECT queries as rows of short names."""

    def __init__(self, timeout: float | None):
        if timeout is not None and timeout <= 0:
            raise EnvArgumentError(f"query_timeout must be positive or None, got {timeout}")
        self.timeout = timeout

    @abstractmethod
    def select(self, query: str, *, bounded: bool = False) -> list[str]:
        """The bound values of a one-variable SELECT query, as short names.

        Raises QueryTimeout or BackendError on failure.

        `bounded` marks a query of one triple pattern from a fixed entity: its work is
        linear in what it returns, so a store may skip the guard against runaway joins.
        """

    @abstractmethod
    def close(self) -> None:
        """Free the store or connection; safe to call twice."""


class OxigraphBackend(KGBackend):
    """An in-memory Oxigraph store loaded from an N-Triples or Turtle file (optionally .gz).

    Oxigraph cannot cancel a query. Bounded queries run on the caller's thread and stop
    at the first row past the time limit. Others (joins, aggregates) run on a worker
    thread; one past its limit is left to finish there while later queries get a new
    worker, so `step` returns in bounded time. With `timeout=None` every query runs on the
    caller's thread, unguarded: faster, for trusted agents only.
    """

    def __init__(self, graph: str | Path | None = None, *, timeout: float | None = 10.0):
        super().__init__(timeout)
        self.path = Path(graph).expanduser() if graph is not None else SHIPPED_GRAPH
        if not self.path.is_file():
            raise FileNotFoundError(
                f"graph={str(self.path)!r} is not a file; pass the path of an N-Triples (.nt) "
                "or Turtle (.ttl) file, optionally gzip-compressed (.nt.gz, .ttl.gz)"
            )
        self._format = graph_format(self.path)
        self._store: Any = None
        self._worker: _QueryWorker | None = None

    def store(self) -> Any:
        """The loaded store (loaded on first use)."""
        if self._store is None:
            self._store = load_store(self.path, self._format)
        return self._store

    def select(self, query: str, *, bounded: bool = False) -> list[str]:
        """Run a SELECT query on the embedded store."""
        store = self.store()
        if self.timeout is None:
            return _collect(store, query, float("inf"))
        deadline = time.monotonic() + self.timeout
        if bounded:
            return _collect(store, query, deadline)
        if self._worker is None:
            self._worker = _QueryWorker()
        try:
            return self._worker.run(lambda: _collect(store, query, deadline), self.timeout + 0.1)
        except TimeoutError:
            self._worker.stop()  # it ends once the runaway query does; the next gets a new one
            self._worker = None
            raise QueryTimeout(f"the query ran longer than {self.timeout:g} s") from None

    def close(self) -> None:
        """Drop the store and stop the worker thread."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        self._store = None


class _QueryWorker:
    """A daemon thread running one query at a time (daemon: a runaway never blocks exit)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="oxigraph-query", daemon=True).start()

    def run(self, job: Callable[[], list[str]], wait: float) -> list[str]:
        """The job's result, or TimeoutError when it takes longer than `wait` seconds."""
        done = threading.Event()
        outcome: list[Any] = []
        self._jobs.put((job, done, outcome))
        if not done.wait(wait):
            raise TimeoutError
        rows, error = outcome[0]
        if error is not None:
            raise error
        return rows

    def stop(self) -> None:
        """Let the thread end after its current job."""
        self._jobs.put(None)

    def _serve(self) -> None:
        while (item := self._jobs.get()) is not None:
            job, done, outcome = item
            try:
                outcome.append((job(), None))
            except Exception as error:  # handed to the caller's thread
                outcome.append((None, error))
            done.set()


def graph_format(path: Path) -> str:
    """The pyoxigraph format name for a graph file, from its suffix."""
    suffixes = path.suffixes
    core = suffixes[-2] if suffixes and suffixes[-1] == ".gz" and len(suffixes) > 1 else None
    suffix = core or (suffixes[-1] if suffixes else "")
    if suffix not in GRAPH_FORMATS:
        raise EnvArgumentError(
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
            raise EnvArgumentError(
                f"graph file {path} does not parse as {format_name}: {error}"
            ) from None
    return store


def _collect(store: Any, query: str, deadline: float) -> list[str]:
    values, finished = _read_values(store, query, deadline)
    if not finished:  # raised here, once Oxigraph's objects are gone: they must die on this thread
        raise QueryTimeout("the query ran past its time limit")
    return values


def _read_values(store: Any, query: str, deadline: float) -> tuple[list[str], bool]:
    try:
        solutions = store.query(query)
    except SyntaxError as error:
        raise BackendError(f"the store rejected the query: {error}") from None
    values: list[str] = []
    for number, solution in enumerate(solutions):
        term = solution[0]
        if term is not None:
            values.append(short_name(term.value))
        if not number % 256 and time.monotonic() > deadline:
            return values, False
    return values, True


class SparqlEndpointBackend(KGBackend):
    """Any SPARQL 1.1 endpoint over HTTP (Virtuoso serving Freebase, Fuseki, ...)."""

    def __init__(self, url: str | None, *, timeout: float | None = 10.0):
        super().__init__(timeout)
        parsed = urlparse(url or "")
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise EnvArgumentError(
                f"backend='sparql' needs url= the http(s) address of a SPARQL endpoint, "
                f"such as http://127.0.0.1:8890/sparql; got {url!r}"
            )
        self.url = str(url)
        self._check_answers()

    def _check_answers(self) -> None:
        """Fail at start, with one clear message, when the endpoint does not answer."""
        try:
            self.select("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1")
        except (QueryTimeout, BackendError) as error:
            raise BackendError(
                f"{error}; start the endpoint, or give url= the address of one that runs"
            ) from None

    def select(self, query: str, *, bounded: bool = False) -> list[str]:
        """Send a SELECT query to the endpoint and read its JSON results."""
        from SPARQLWrapper import JSON, POST, SPARQLWrapper
        from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

        client = SPARQLWrapper(self.url)
        client.setMethod(POST)
        client.setReturnFormat(JSON)
        if self.timeout is not None:
            client.setTimeout(max(1, round(self.timeout)))
        client.setQuery(query)
        try:
            result = client.queryAndConvert()
        except TimeoutError as error:
            raise QueryTimeout(f"the endpoint did not answer within {self.timeout:g} s") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise QueryTimeout(
                    f"the endpoint did not answer within {self.timeout:g} s"
                ) from error
            raise BackendError(f"the SPARQL endpoint {self.url} is unreachable: {error}") from None
        except (SPARQLWrapperException, OSError, ValueError) as error:
            raise BackendError(f"the SPARQL endpoint {self.url} failed: {error}") from None
        if not isinstance(result, dict) or "results" not in result:
            raise BackendError(f"the SPARQL endpoint {self.url} did not return JSON results")
        first = result["head"]["vars"][0]
        bindings = result["results"]["bindings"]
        return [short_name(b[first]["value"]) for b in bindings if first in b]

    def close(self) -> None:
        """Nothing to free: every query opens and closes its own connection."""
