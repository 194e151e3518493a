"""`LifelongKGEnv`: answering questions over a knowledge graph with seven actions."""

from __future__ import annotations

import logging
from pathlib import Path

from lifelong_gym.core import (
    DEFAULT_MAX_ACTION_LENGTH,
    DEFAULT_MAX_OBSERVATION_LENGTH,
    Evaluation,
    Interaction,
    InvalidReply,
    LifelongEnv,
)
from lifelong_gym.envs.kg.actions import (
    TOOLS,
    ActionError,
    ActionExecutor,
    FinalAnswer,
    from_tool_call,
    parse_reply,
)
from lifelong_gym.envs.kg.backends import (
    SHIPPED_GRAPH,
    BackendError,
    KGBackend,
    OxigraphBackend,
    SparqlEndpointBackend,
    generated_graph,
)
from lifelong_gym.envs.kg.graph_binding import check_graph, graph_sha256
from lifelong_gym.envs.kg.prompt import opening_prompt
from lifelong_gym.envs.kg.sexpr import ActionCall
from lifelong_gym.envs.kg.tasks import KGTask, kg_task_from_record
from lifelong_gym.errors import EnvArgumentError, QueryRefused, QueryTimeout
from lifelong_gym.session import EvaluationOutcome, OpeningPrompt, Session, SessionStatus
from lifelong_gym.tasks import TaskSet, load_task_set, shipped_task_sets
from lifelong_gym.tool_calls import ToolCall

logger = logging.getLogger(__name__)

DEFAULT_TASK_SET = "default"
BACKENDS = ("oxigraph", "sparql")


def load_kg_tasks(source: str | Path | None = None) -> TaskSet[KGTask]:
    """A shipped KG task set by name, or a KG task file (benchmark or ours) by path."""
    return load_task_set(
        source, environment="kg", default=DEFAULT_TASK_SET, convert=kg_task_from_record
    )


class LifelongKGEnv(LifelongEnv[KGTask]):
    """Answer a question about given entities by exploring a knowledge graph.

    ## Description
    Each episode is one task of the benchmark's knowledge-graph subset: a question and the
    Freebase ids of the entities it names. The agent explores the graph with seven actions
    (`get_relations`, `get_neighbors`, `intersection`, `get_attributes`, `argmax`,
    `argmin`, `count`); actions that yield entity sets answer with a variable (`#0`,
    `#1`, ...) standing for the logical form that made it, compiled to SPARQL. The agent
    ends with `Final Answer: #N`. The graph is the shipped Freebase-shaped graph in an
    embedded Oxigraph store, a user's graph file, or any SPARQL 1.1 endpoint.

    ## Action Space
    `UnicodeText`: the agent's raw reply. Its first `Action: name(args)` or
    `Final Answer: #N` is used. A reply with neither ends the task
    (`agent_validation_failed`); a wrong action, argument or variable is an observation.

    ## Observation Space
    `UnicodeText`: the task prompt on reset; then the list of relations or attributes, the
    new variable and its size, or an error message. Empty after the final answer.

    ## Rewards
    Given on the step that ends the task. With `reward="binary"` (default, the
    benchmark's) 1.0 when the final answer's set equals the task's answer set exactly,
    else 0.0. With `reward="partial"` a wrong answer earns its F1 against the answer set
    (`info["f1"]`; 0.0 without a final answer). `info` holds `f1`, `precision`, `recall`
    and `executed` (one flag per action).

    ## Starting State
    `reset` returns the instructions and the task (question and entity ids) as one
    message; no variable exists yet. Without `options={"task_index": i}` the task is the
    next of the epoch (see `task_sampling`).

    ## Episode End
    Terminated on the final answer, an unparsable reply, or a store failure
    (`task_environment_error`); truncated after `max_turns` replies
    (`task_limit_reached`).

    ## Arguments
    - `tasks`: a shipped task set name or a task file (JSON, JSON Lines, parquet);
      default the shipped set.
    - `backend`: `"oxigraph"` (embedded, default) or `"sparql"` (an endpoint at `url`).
    - `url`: the SPARQL endpoint for `backend="sparql"`.
    - `graph`: an N-Triples or Turtle file (optionally .gz) to load instead of the shipped
      graph (embedded back-end only). Without it, a task file NAME.jsonl that has the graph
      `lifelong-gym generate kg` wrote beside it (`NAME.graph.nt.gz`, else `graph.nt.gz`)
      is played on that graph, and the environment logs one line saying so. Tasks that
      record the hash of the graph they were generated on (`lifelong-gym generate kg`
      writes it) are refused on a graph of another content (`GraphMismatchError`).
    - `max_turns`: replies per task (15, as in the benchmark).
    - `max_results`: entities or relations kept per action (larger results are cut).
    - `query_timeout`: seconds a query may run before the agent is told it timed out;
      `None` runs every query unguarded (faster on the embedded store; trusted agents only).
    - `reward`: `"binary"` (default) or `"partial"` (see Rewards).
    - `task_sampling`: `"epoch"` (default: each pass over the task set plays every task
      once, in an order drawn from `np_random`; `reset(seed=s)` starts a new pass) or
      `"uniform"` (each reset draws any task, with replacement).
    - `max_observation_length` (16,000), `max_action_length` characters of a reply
      (100,000), `render_mode` (`"ansi"`).
    - `action_format`: `"text"` (the benchmark's reply format, default) or `"tools"`
      (native tool calls: `env.unwrapped.tools` lists the function schemas; `step` takes
      an OpenAI assistant message in JSON or as a dict, or `<tool_call>{...}</tool_call>`
      markup).

    `env.unwrapped.graph_sha256` is the sha256 of the embedded store's graph content
    (decompressed), None on an endpoint.

    ## Example
    >>> import gymnasium as gym
    >>> import lifelong_gym
    >>> gym.register_envs(lifelong_gym)
    >>> env = gym.make("LifelongKG-v0")
    >>> obs, info = env.reset(options={"task_index": 0})
    >>> "Question:" in obs
    True
    >>> obs, reward, terminated, truncated, info = env.step("Action: count(#0)")
    >>> obs, terminated
    ('Error: there is no variable #0 (variables made: none yet)', False)
    >>> obs, reward, terminated, truncated, info = env.step("I do not know.")
    >>> terminated, info["status"], reward
    (True, 'agent_validation_failed', 0.0)
    >>> env.close()

    ## Version History
    - v0: first version.
    """

    partial_credit = "f1"

    def __init__(
        self,
        tasks: str | Path | TaskSet[KGTask] | None = None,
        *,
        backend: str = "oxigraph",
        url: str | None = None,
        graph: str | Path | None = None,
        max_turns: int = 15,
        max_results: int = 10_000,
        query_timeout: float | None = 10.0,
        max_observation_length: int = DEFAULT_MAX_OBSERVATION_LENGTH,
        max_action_length: int = DEFAULT_MAX_ACTION_LENGTH,
        render_mode: str | None = None,
        action_format: str = "text",
        reward: str = "binary",
        task_sampling: str = "epoch",
    ):
        task_set = tasks if isinstance(tasks, TaskSet) else load_kg_tasks(tasks)
        super().__init__(
            task_set,
            max_turns=max_turns,
            max_observation_length=max_observation_length,
            max_action_length=max_action_length,
            render_mode=render_mode,
            action_format=action_format,
            reward=reward,
            task_sampling=task_sampling,
        )
        if max_results < 1:
            raise EnvArgumentError(f"max_results must be at least 1, got {max_results}")
        self.max_results = max_results
        if backend == "oxigraph" and graph is None:
            graph = graph_beside(tasks)
        self.backend = make_backend(backend, url=url, graph=graph, timeout=query_timeout)
        # the embedded store's graph is known by its content; an endpoint's is not
        self.graph_sha256: str | None = None
        if isinstance(self.backend, OxigraphBackend):
            self.graph_sha256 = graph_sha256(self.backend.path)
            check_graph(self.tasks, self.backend.path, self.graph_sha256)
        self._executor: ActionExecutor | None = None
        self._executed: list[bool] = []
        self._answer: tuple[str, ...] | None = None

    tool_schemas = TOOLS

    def parse_text_action(self, reply: str) -> ActionCall | FinalAnswer | InvalidReply:
        """An action call, the final answer, or why the reply holds neither."""
        return parse_reply(reply)

    def action_from_tool_call(self, call: ToolCall) -> ActionCall | FinalAnswer | InvalidReply:
        """One of the seven actions, or `final_answer(variable)`."""
        return from_tool_call(call)

    def interact(self, action: str) -> Interaction:
        """Run the reply's action, or take its final answer."""
        executor = self._executor
        assert executor is not None, "interact() needs a started task"
        parsed = self.parse_action(action)
        if isinstance(parsed, InvalidReply):
            return Interaction.invalid(parsed)
        try:
            if isinstance(parsed, FinalAnswer):
                self._answer = executor.answer(parsed.target).values
                return Interaction("", done=True, status=SessionStatus.COMPLETED)
            observation = executor.run(parsed)
        except ActionError as error:
            self._executed.append(False)
            return Interaction.error(str(error))
        except QueryTimeout as error:
            self._executed.append(False)
            return Interaction.error(f"{error}; try a narrower action.")
        except QueryRefused as error:
            self._executed.append(False)
            return Interaction.error(f"{error}; try a smaller action.")
        except BackendError as error:
            self._executed.append(False)
            return Interaction(
                f"The knowledge graph failed: {error}",
                done=True,
                status=SessionStatus.TASK_ENVIRONMENT_ERROR,
            )
        self._executed.append(True)
        return Interaction(observation)

    def data_content(self) -> dict[str, dict[str, str]]:
        """The graph the embedded store loaded (none for an endpoint: its content is the
        server's)."""
        if self.graph_sha256 is None:
            return {}
        return {"graph": {"source": str(self.backend.path.resolve()), "sha256": self.graph_sha256}}

    def release(self) -> None:
        """Close the store or endpoint connection."""
        self.backend.close()

    def _start_task(self, task: KGTask) -> OpeningPrompt:
        self.backend.recover()
        self._executor = ActionExecutor(self.backend, self.max_results)
        self._executed = []
        self._answer = None
        return opening_prompt(task, self.max_turns, self.action_format)

    def _evaluate(self, task: KGTask, session: Session) -> Evaluation:
        truth = set(task.answer_list)
        predicted = set(self._answer or ())
        hits = len(truth & predicted)
        precision = hits / len(predicted) if predicted else 0.0
        recall = hits / len(truth) if truth else 0.0
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        correct = self._answer is not None and predicted == truth
        return Evaluation(
            EvaluationOutcome.CORRECT if correct else EvaluationOutcome.INCORRECT,
            {
                "f1": f1,
                "precision": precision,
                "recall": recall,
                "executed": list(self._executed),
            },
        )

    def _end_task(self) -> None:
        self._executor = None


def graph_beside(tasks: str | Path | TaskSet[KGTask] | None) -> Path | None:
    """The graph generated beside a task file, if there is one other than the shipped graph
    (then it is said in one line); None for a shipped set's name or a `TaskSet`."""
    if tasks is None or isinstance(tasks, TaskSet) or str(tasks) in shipped_task_sets("kg"):
        return None
    path = generated_graph(Path(tasks).expanduser())
    if path is None or path.resolve() == SHIPPED_GRAPH:
        return None
    logger.warning(
        "tasks=%s: playing them on the graph generated beside them, %s (graph= names another)",
        tasks,
        path,
    )
    return path


def make_backend(
    backend: str, *, url: str | None, graph: str | Path | None, timeout: float | None
) -> KGBackend:
    """The store named by the environment's `backend` argument."""
    if backend == "oxigraph":
        if url is not None:
            raise EnvArgumentError("url= is for backend='sparql'; the embedded store reads graph=")
        return OxigraphBackend(graph, timeout=timeout)
    if backend == "sparql":
        if graph is not None:
            raise EnvArgumentError(
                "graph= is for the embedded store (backend='oxigraph'); load the file into "
                "your endpoint instead"
            )
        return SparqlEndpointBackend(url, timeout=timeout)
    raise EnvArgumentError(f"backend must be one of {BACKENDS}, got {backend!r}")
