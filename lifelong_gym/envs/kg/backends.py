"""Where SPARQL runs: an embedded Oxigraph store, or any SPARQL 1.1 endpoint."""

from __future__ import annotations

import logging
import time
import urllib.error
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lifelong_gym.envs.kg.sparql import NS
from lifelong_gym.envs.kg.store_process import (
    QueryRejected,
    StoreProcess,
    StoreStopped,
    graph_format,
    load_store,
)
from lifelong_gym.errors import BackendError, EnvArgumentError, LifelongGymError

logger = logging.getLogger(__name__)

SHIPPED_GRAPH = Path(__file__).resolve().parents[2] / "data" / "kg" / "graph.nt.gz"
QUERY_MEMORY = 1 << 30  # bytes a guarded query may use beyond the loaded graph


class QueryRefused(LifelongGymError):
    """The store would not finish the agent's query (a limit of time, memory or size).

    The query came from the agent's actions, so this is an observation: the task goes on.
    """


class QueryTimeout(QueryRefused):
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

    Oxigraph cannot cancel a query. Bounded queries (one pattern from a fixed entity) run
    on the caller's thread and stop at the first row past the time limit. Others (joins,
    aggregates) run in a child process holding its own copy of the store
    (`StoreProcess`); one past its limit, or past `QUERY_MEMORY`, is stopped by killing
    that process, and a fresh one starts loading at once. `close()` kills it: nothing of
    the store keeps running. With `timeout=None` every query runs on the caller's thread,
    unguarded: faster, for trusted agents only.
    """

    def __init__(self, graph: str | Path | None = None, *, timeout: float | None = 10.0):
        super().__init__(timeout)
        self.path = Path(graph).expanduser() if graph is not None else SHIPPED_GRAPH
        if not self.path.is_file():
            raise FileNotFoundError(
                f"graph={str(self.path)!r} is not a file; pass the path of an N-Triples (.nt) "
                "or Turtle (.ttl) file, optionally gzip-compressed (.nt.gz, .ttl.gz)"
            )
        try:
            self._format = graph_format(self.path)
        except ValueError as error:
            raise EnvArgumentError(str(error)) from None
        self._store: Any = None
        self._process: StoreProcess | None = None

    def store(self) -> Any:
        """The loaded store (loaded on first use; the guarded child starts loading too)."""
        if self._store is None:
            if self.timeout is not None and self._process is None:
                self._start_process()
            try:
                self._store = load_store(self.path, self._format)
            except ValueError as error:
                self.close()
                raise EnvArgumentError(str(error)) from None
        return self._store

    def select(self, query: str, *, bounded: bool = False) -> list[str]:
        """Run a SELECT query on the embedded store."""
        store = self.store()
        if self.timeout is None:
            return _collect(store, query, float("inf"))
        if bounded:
            return _collect(store, query, time.monotonic() + self.timeout)
        process = self._process or self._start_process()
        try:
            return process.select(query, self.timeout)
        except StoreStopped as stopped:
            self._start_process()  # loads while the agent reads the observation
            raise (QueryTimeout if stopped.timed_out else QueryRefused)(stopped.reason) from None
        except QueryRejected as error:
            raise BackendError(f"the store rejected the query: {error}") from None

    def _start_process(self) -> StoreProcess:
        self._process = StoreProcess(self.path, self._format, NS, QUERY_MEMORY)
        return self._process

    def close(self) -> None:
        """Drop the store and kill its child process."""
        if self._process is not None:
            self._process.stop()
            self._process = None
        self._store = None


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
        except (QueryRefused, BackendError) as error:
            raise BackendError(
                f"{error}; start the endpoint, or give url= the address of one that runs"
            ) from None

    def select(self, query: str, *, bounded: bool = False) -> list[str]:
        """Send a SELECT query to the endpoint and read its JSON results."""
        from SPARQLWrapper.SPARQLExceptions import (
            EndPointInternalError,
            QueryBadFormed,
            SPARQLWrapperException,
        )

        try:
            response = self._client(query).query()
            # Virtuoso answers a query stopped at its own time limit with partial rows
            stopped = response.response.headers.get("X-SQL-State")
            result = response.convert()
        except TimeoutError as error:
            raise QueryTimeout(f"the endpoint did not answer within {self.timeout:g} s") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise QueryTimeout(
                    f"the endpoint did not answer within {self.timeout:g} s"
                ) from error
            raise BackendError(f"the SPARQL endpoint {self.url} is unreachable: {error}") from None
        except QueryBadFormed as error:  # our queries parse: the server's limits refused it
            raise QueryRefused(f"the endpoint refused the query: {_reason(error)}") from None
        except EndPointInternalError as error:
            if self._answers():  # the server is fine: it was this query
                reason = _reason(error)
                raise QueryRefused(f"the endpoint could not run the query: {reason}") from None
            raise BackendError(f"the SPARQL endpoint {self.url} failed: {error}") from None
        except (SPARQLWrapperException, OSError, ValueError) as error:
            raise BackendError(f"the SPARQL endpoint {self.url} failed: {error}") from None
        if stopped:
            raise QueryRefused(f"the endpoint stopped the query at its own limit ({stopped})")
        if not isinstance(result, dict) or "results" not in result:
            raise BackendError(f"the SPARQL endpoint {self.url} did not return JSON results")
        first = result["head"]["vars"][0]
        bindings = result["results"]["bindings"]
        return [short_name(b[first]["value"]) for b in bindings if first in b]

    def _client(self, query: str) -> Any:
        from SPARQLWrapper import JSON, POST, SPARQLWrapper

        client = SPARQLWrapper(self.url)
        client.setMethod(POST)
        client.setReturnFormat(JSON)
        if self.timeout is not None:
            client.setTimeout(max(1, round(self.timeout)))
        client.setQuery(query)
        return client

    def _answers(self) -> bool:
        """Whether the endpoint answers a trivial query (so a failure was the query's)."""
        try:
            self._client("ASK {}").queryAndConvert()
        except Exception:  # noqa: BLE001 - any failure means the server is not well
            return False
        return True

    def close(self) -> None:
        """Nothing to free: every query opens and closes its own connection."""


def _reason(error: Exception) -> str:
    """The server's own message in a SPARQLWrapper error: its first line, shortened."""
    text = str(error)
    body = text.split("Response:\n", 1)[-1].strip()
    if body.startswith(("b'", 'b"')):
        body = body[2:]
    first = body.replace("\\n", "\n").strip().splitlines()[0] if body.strip() else text
    return first[:300]
