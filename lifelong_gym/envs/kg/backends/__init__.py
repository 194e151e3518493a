"""Where SPARQL runs: an embedded Oxigraph store, or any SPARQL 1.1 endpoint."""

from __future__ import annotations

import logging
import time
import urllib.error
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lifelong_gym.envs.kg import sparql
from lifelong_gym.envs.kg.backends.local import Evaluation, Exhausted, Known, Overrun
from lifelong_gym.envs.kg.backends.store_process import (
    QueryRejected,
    StoreProcess,
    StoreStopped,
    graph_format,
    load_store,
)
from lifelong_gym.envs.kg.sexpr import SExpr
from lifelong_gym.envs.kg.sparql import NS, short_name
from lifelong_gym.errors import BackendError, EnvArgumentError, QueryRefused, QueryTimeout
from lifelong_gym.reconnect import wait_for_server
from lifelong_gym.tasks import DATA_DIR

logger = logging.getLogger(__name__)

SHARED_GRAPH = "graph.nt.gz"  # the graph the default set and a seed's splits share
SHIPPED_GRAPH = DATA_DIR / "kg" / SHARED_GRAPH
QUERY_MEMORY = 1 << 30  # bytes a guarded query may use beyond the loaded graph
PROBE = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"  # whether an endpoint answers


def graph_files(tasks_path: Path) -> tuple[Path, Path]:
    """The names `lifelong-gym generate kg` gives a graph beside the task file NAME.jsonl:
    NAME's own `NAME.graph.nt.gz`, and the folder's shared `graph.nt.gz`."""
    name = tasks_path.name.removesuffix(".jsonl")
    return tasks_path.with_name(f"{name}.graph.nt.gz"), tasks_path.with_name(SHARED_GRAPH)


def generated_graph(tasks_path: Path) -> Path | None:
    """The graph a task file is played on without graph=: the first of `graph_files` that
    exists, if any."""
    return next((path for path in graph_files(tasks_path) if path.is_file()), None)


class KGBackend(ABC):
    """A read-only SPARQL store answering an action's query as rows of short names.

    `entities`, `count` and `relations` compile a logical form to SPARQL (which checks
    every argument and the form's size) and run it through `answer`; a store may answer
    some forms another way there (`OxigraphBackend`). They raise QueryTimeout,
    QueryRefused or BackendError on failure.
    """

    def __init__(self, timeout: float | None):
        if timeout is not None and timeout <= 0:
            raise EnvArgumentError(f"query_timeout must be positive or None, got {timeout}")
        self.timeout = timeout

    def entities(self, expr: SExpr, limit: int) -> list[str]:
        """The values `expr` denotes (at most `limit` of them), as short names."""
        query = sparql.entities_query(expr, limit)
        return self.answer(query, lambda evaluation: evaluation.entities(expr, limit))

    def count(self, expr: SExpr) -> str:
        """How many distinct values `expr` denotes, as the store writes the number."""
        query = sparql.count_query(expr)
        rows = self.answer(query, lambda evaluation: evaluation.count(expr))
        return rows[0] if rows else "0"

    def relations(self, subject: SExpr, limit: int, *, numeric: bool = False) -> list[str]:
        """The relations leaving an entity or a form's values (`numeric`: orderable ones)."""
        compile_ = sparql.attributes_query if numeric else sparql.relations_query
        query = compile_(subject, limit)
        return self.answer(
            query, lambda evaluation: evaluation.relations(subject, limit, query, numeric=numeric)
        )

    def answer(self, query: str, evaluate: Callable[[Evaluation], list[str]]) -> list[str]:
        """The rows of `query`; `evaluate` computes the same rows by index lookups."""
        return self.select(query)

    @abstractmethod
    def select(self, query: str) -> list[str]:
        """The bound values of a one-variable SELECT query, as short names."""

    def recover(self) -> None:  # noqa: B027 - a store in this process cannot go away
        """Before a task: wait for a store that went away during an earlier one."""

    @abstractmethod
    def close(self) -> None:
        """Free the store or connection; safe to call twice."""


class OxigraphBackend(KGBackend):
    """An in-memory Oxigraph store loaded from an N-Triples or Turtle file (optionally .gz).

    Oxigraph cannot cancel a query. An action's form is first evaluated on the caller's
    thread by index lookups (`local.Evaluation`: at most `local.WORK` steps, reading the
    clock at every lookup, reusing the sets of earlier forms), which answers every action
    of the shipped tasks. A form past that budget runs as SPARQL in a child process
    holding its own copy of the store (`StoreProcess`, started by the first such form);
    one past its time limit, or past `QUERY_MEMORY`, is stopped by killing that process,
    and a fresh one starts loading at once. `close()` kills it: nothing of the store keeps
    running. With `timeout=None` such a form runs on the caller's thread instead,
    unguarded: for trusted agents only.
    """

    def __init__(self, graph: str | Path | None = None, *, timeout: float | None = 10.0):
        super().__init__(timeout)
        self.path = Path(graph).expanduser() if graph is not None else SHIPPED_GRAPH
        if not self.path.is_file():
            raise EnvArgumentError(
                f"graph={str(self.path)!r} is not a file; pass the path of an N-Triples (.nt) "
                "or Turtle (.ttl) file, optionally gzip-compressed (.nt.gz, .ttl.gz)"
            )
        try:
            self._format = graph_format(self.path)
        except ValueError as error:
            raise EnvArgumentError(str(error)) from None
        self._store: Any = None
        self._process: StoreProcess | None = None
        self._known = Known()

    def store(self) -> Any:
        """The loaded store (loaded on first use)."""
        if self._store is None:
            try:
                self._store = load_store(self.path, self._format)
            except ValueError as error:
                self.close()
                raise EnvArgumentError(str(error)) from None
        return self._store

    def answer(self, query: str, evaluate: Callable[[Evaluation], list[str]]) -> list[str]:
        """The rows by index lookups when they fit the budget, else by the guarded query."""
        timeout = float("inf") if self.timeout is None else self.timeout
        try:
            return evaluate(Evaluation(self.store(), time.monotonic() + timeout, self._known))
        except Overrun:
            overran = True
        except Exhausted:
            overran = False
        # out of the handler, so that the lookups' iterators are gone: they die on this thread
        if overran:
            raise QueryTimeout(f"the query ran longer than {timeout:g} s (its time limit)")
        return self.select(query)

    def select(self, query: str) -> list[str]:
        """Run a SELECT query on the embedded store (in the child, under the time limit)."""
        store = self.store()
        if self.timeout is None:
            return _collect(store, query)
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
        self._known = Known()


def _collect(store: Any, query: str) -> list[str]:
    """A query's values on the caller's thread, unguarded (`timeout=None`)."""
    try:
        solutions = store.query(query)
    except SyntaxError as error:
        raise BackendError(f"the store rejected the query: {error}") from None
    return [short_name(row[0].value) for row in solutions if row[0] is not None]


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
        self._lost = False  # a query found it unreachable or failing: see `recover`
        self._check_answers()

    def _check_answers(self) -> None:
        """Fail at start, with one clear message, when the endpoint does not answer."""
        try:
            self.select(PROBE)
        except (QueryRefused, BackendError) as error:
            raise BackendError(
                f"{error}; start the endpoint, or give url= the address of one that runs"
            ) from None

    def recover(self) -> None:
        """Before a task: when an earlier query found the endpoint gone (restarted,
        killed), wait up to RECONNECT_TIMEOUT seconds for it to answer again."""
        if self._lost:
            wait_for_server(lambda: self.select(PROBE))
            self._lost = False

    def select(self, query: str) -> list[str]:
        """Send a SELECT query to the endpoint and read its JSON results."""
        try:
            return self._select(query)
        except BackendError:
            self._lost = True
            raise

    def _select(self, query: str) -> list[str]:
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
        except ConnectionError as error:  # it went down while our request was on its way
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
