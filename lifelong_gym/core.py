"""`LifelongEnv`: the benchmark's environment contract on top of `gymnasium.Env`."""

from __future__ import annotations

import logging
import numbers
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic

import gymnasium as gym

from lifelong_gym.actions import InvalidReply, ParsedAction, TextAction
from lifelong_gym.errors import EnvArgumentError, ResetOptionError, TaskIndexError
from lifelong_gym.metrics import LifelongMetrics, compute_metrics
from lifelong_gym.session import EvaluationOutcome, OpeningPrompt, Role, Session, SessionStatus
from lifelong_gym.spaces import UnicodeText
from lifelong_gym.tasks import TaskSet, TaskT
from lifelong_gym.tool_calls import ToolCall, message_text, parse_tool_call
from lifelong_gym.truncation import truncate_middle

logger = logging.getLogger(__name__)

DEFAULT_MAX_OBSERVATION_LENGTH = 16_000
DEFAULT_MAX_ACTION_LENGTH = 100_000
ACTION_FORMATS = ("text", "tools")
# "epoch": each pass over the task set plays every task once, in an order drawn from
# `np_random` (what an RL user expects of a dataset); "uniform": each reset draws any task.
TASK_SAMPLINGS = ("epoch", "uniform")
RESET_OPTIONS = ("task_index",)
# What a message to the agent repeats of its own text (a 1 MB argument in an error) is cut
# to this many characters, head and tail kept.
MAX_ECHO_LENGTH = 1_000
# "binary": 1.0 for a correct task, else 0.0 (the benchmark's); "partial": a wrong task
# earns its partial credit (the environment's `partial_credit` detail) instead of 0.0.
REWARDS: tuple[str, ...] = ("binary", "partial")
# A wrong task never earns what a correct one does, whatever its partial credit (the right
# rows in the wrong order have full row overlap): an RL policy must not be paid for it.
MAX_PARTIAL_REWARD = 0.9


@dataclass
class Interaction:
    """What one agent action did: the observation, and whether it ended the task."""

    observation: str
    done: bool = False
    status: SessionStatus = SessionStatus.COMPLETED

    @classmethod
    def invalid(cls, reply: InvalidReply) -> Interaction:
        """The end of a task whose reply is in none of the action formats, saying why."""
        return cls(
            f"Invalid reply: {truncate_middle(reply.reason, MAX_ECHO_LENGTH)}.",
            done=True,
            status=SessionStatus.AGENT_VALIDATION_FAILED,
        )

    @classmethod
    def error(cls, message: str) -> Interaction:
        """An action that could not run, and why (the task goes on)."""
        return cls(error_text(message))


def error_text(message: str) -> str:
    """The observation of an action that could not run: `Error: ` and why, bounded."""
    return f"Error: {truncate_middle(message, MAX_ECHO_LENGTH)}"


@dataclass
class Evaluation:
    """The verdict on a finished task, with partial credit and other details."""

    outcome: EvaluationOutcome
    details: dict[str, Any] = field(default_factory=dict)


class LifelongEnv(gym.Env[str, str], Generic[TaskT]):
    """Base of the suite's environments: one task per episode, scored like the benchmark.

    The appendix's five methods map onto Gymnasium's API: `reset` starts a task,
    `interact` executes one parsed agent action (called by `step`), `complete` scores the
    finished task and restores the back-end (called by `step` when the episode ends),
    `calculate_metric` summarises many sessions, and `release` frees the back-end
    (called by `close`). Subclasses implement `_start_task`, `interact`, `_evaluate`,
    `_end_task` and `release`.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 1}
    # the key of the evaluation details holding partial credit in [0, 1]; None: none exists
    partial_credit: ClassVar[str | None] = None

    def __init__(
        self,
        tasks: TaskSet[TaskT],
        *,
        max_turns: int,
        max_observation_length: int = DEFAULT_MAX_OBSERVATION_LENGTH,
        max_action_length: int = DEFAULT_MAX_ACTION_LENGTH,
        render_mode: str | None = None,
        action_format: str = "text",
        reward: str = "binary",
        task_sampling: str = "epoch",
    ):
        if task_sampling not in TASK_SAMPLINGS:
            raise EnvArgumentError(
                f"task_sampling must be one of {', '.join(map(repr, TASK_SAMPLINGS))}; "
                f"got {task_sampling!r}"
            )
        if reward not in REWARDS:
            raise EnvArgumentError(
                f"reward must be one of {', '.join(map(repr, REWARDS))}; got {reward!r}"
            )
        if max_turns < 1:
            raise EnvArgumentError(f"max_turns must be at least 1, got {max_turns}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise EnvArgumentError(f"render_mode must be one of {self.metadata['render_modes']}")
        if action_format not in ACTION_FORMATS:
            raise EnvArgumentError(
                f"action_format must be one of {', '.join(ACTION_FORMATS)}, got {action_format!r}"
            )
        self.action_format = action_format
        self.task_sampling = task_sampling
        self._epoch: list[int] = []  # the current epoch's tasks not yet played, last first
        self.tasks = tasks
        self.reward_mode = reward
        self.max_turns = max_turns
        self.max_observation_length = max_observation_length
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_observation_length)
        self.action_space = UnicodeText(max_action_length)
        self.session: Session | None = None
        self.task: TaskT | None = None

    # -- the Gymnasium API -------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a task: `options={"task_index": i}`, else the next of the epoch (a new
        epoch with `seed`), or with `task_sampling="uniform"` one drawn from `np_random`."""
        super().reset(seed=seed)
        index = self._choose_index(options or {}, new_epoch=seed is not None)
        self._abandon_task()
        task = self.tasks[index]
        self.task = task
        self.session = Session(task_index=index, skills=list(task.skills))
        opening = self._start_task(task)
        if isinstance(opening, str):
            opening = OpeningPrompt("", opening)
        prompt = self._fit(opening.text)
        if prompt.startswith(opening.text[: opening.task_start]):
            # a prompt cut to fit keeps its instructions whole, or memory goes before it all
            self.session.task_start = opening.task_start
        self.session.status = SessionStatus.RUNNING
        self.session.add(Role.USER, prompt)
        return prompt, {"task_index": index, "skills": list(task.skills)}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply one agent reply; the episode ends when the task does or turns run out."""
        session = self.session
        if session is None or session.finished:
            raise gym.error.ResetNeeded("call reset() before step(): no task is running")
        reply = self._reply_text(action)
        session.add(Role.AGENT, reply)
        try:
            interaction = self.interact(reply)
        except Exception as error:  # a broken back-end must not crash the caller's loop
            logger.exception("environment error during interact")
            session.error = f"{type(error).__name__}: {error}"
            interaction = Interaction(
                f"The environment failed: {type(error).__name__}: {error}",
                done=True,
                status=SessionStatus.TASK_ENVIRONMENT_ERROR,
            )
        observation = self._fit(interaction.observation)
        terminated = interaction.done
        truncated = not terminated and session.agent_turns >= self.max_turns
        if observation:
            session.add(Role.USER, observation)
        if terminated:
            session.status = interaction.status
        elif truncated:
            session.status = SessionStatus.TASK_LIMIT_REACHED
        if terminated or truncated:
            self.complete()
        return observation, session.reward, terminated, truncated, self.task_info()

    def close(self) -> None:
        """Abandon the task in flight and free the back-end; safe to call twice."""
        self._abandon_task()
        self.release()
        super().close()

    def render(self) -> str | None:
        """The session so far as text (render_mode="ansi")."""
        if self.render_mode != "ansi" or self.session is None:
            return None
        return "\n\n".join(f"[{m.role}] {m.content}" for m in self.session.chat_history)

    # -- the appendix's methods ------------------------------------------------------

    @abstractmethod
    def interact(self, action: str) -> Interaction:
        """Parse and execute one agent reply against the current task."""

    def complete(self) -> Session:
        """Score the finished session, then restore the back-end for the next task."""
        session, task = self.session, self.task
        assert session is not None and task is not None, "complete() needs a started task"
        try:
            evaluation = self._evaluate(task, session)
        except Exception as error:
            logger.exception("environment error while scoring")
            evaluation = Evaluation(EvaluationOutcome.UNKNOWN, {"error": str(error)})
            session.error = session.error or f"{type(error).__name__}: {error}"
            if session.status == SessionStatus.COMPLETED:
                session.status = SessionStatus.TASK_ENVIRONMENT_ERROR
        finally:
            self._release_task()
        session.outcome = evaluation.outcome
        session.details.update(evaluation.details)
        session.reward = self._reward(evaluation)
        return session

    def end_task(self, status: SessionStatus, error: str = "") -> Session:
        """Stop the running task with `status` and score it as it stands.

        For ends that come from outside the environment: Gymnasium's `TimeLimit`
        (`status=TASK_LIMIT_REACHED`), a runner that stops a session, a failing agent.
        """
        session = self.session
        assert session is not None and not session.finished, "end_task() needs a running task"
        session.status = status
        if error:
            session.error = session.error or error
        return self.complete()

    def calculate_metric(self, sessions: Sequence[Session]) -> LifelongMetrics:
        """Overall, per-status and per-skill success over finished sessions."""
        return compute_metrics(sessions)

    #: OpenAI-style function schemas of the environment's actions (`action_format="tools"`)
    tool_schemas: ClassVar[tuple[dict[str, Any], ...]] = ()

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The environment's actions as OpenAI-style function tools, for a model's `tools=`."""
        return [dict(schema) for schema in self.tool_schemas]

    def parse_action(self, reply: str) -> ParsedAction | InvalidReply:
        """The action a reply asks for, in the environment's action format, or why not."""
        if self.action_format == "tools":
            call = parse_tool_call(reply)
            return call if isinstance(call, InvalidReply) else self.action_from_tool_call(call)
        return self.parse_text_action(reply)

    def parse_text_action(self, reply: str) -> ParsedAction | InvalidReply:
        """The action of a reply in the text format (environments override this)."""
        text = TextAction(reply)
        return text if text.key() else InvalidReply("the reply is empty")

    def action_from_tool_call(self, call: ToolCall) -> ParsedAction | InvalidReply:
        """The action a tool call asks for (environments with tools override this)."""
        return InvalidReply(f"this environment has no tool {call.name!r}")

    def normalize_action(self, reply: str) -> str | None:
        """A key equal for replies that do the same thing (for voting); None if invalid."""
        parsed = self.parse_action(reply)
        return None if isinstance(parsed, InvalidReply) else parsed.key()

    def data_content(self) -> dict[str, dict[str, str]]:
        """The data besides the task set whose content decides the tasks' answers (a
        knowledge graph), by name: its `source` and the `sha256` of its content; a run keeps
        them so that it never resumes over other data."""
        return {}

    @abstractmethod
    def release(self) -> None:
        """Free every resource the environment holds; safe to call twice."""

    # -- what subclasses provide -----------------------------------------------------

    @abstractmethod
    def _start_task(self, task: TaskT) -> str | OpeningPrompt:
        """Prepare the back-end for `task`; return the opening prompt, split into its
        instructions and its task where it has both (a plain string has no instructions)."""

    @abstractmethod
    def _evaluate(self, task: TaskT, session: Session) -> Evaluation:
        """Decide whether the finished session solved the task."""

    @abstractmethod
    def _end_task(self) -> None:
        """Undo what `_start_task` set up (drop the database, remove the container)."""

    # -- internals --------------------------------------------------------------------

    def _choose_index(self, options: Mapping[str, Any], *, new_epoch: bool) -> int:
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            raise ResetOptionError(
                f"reset() options {', '.join(map(repr, unknown))} are unknown; "
                f"the options are {', '.join(map(repr, RESET_OPTIONS))}"
            )
        index = options.get("task_index")
        if index is not None:
            if not isinstance(index, numbers.Integral) or isinstance(index, bool):
                raise ResetOptionError(
                    f"options['task_index'] must be an int (a sample index); got {index!r}"
                )
            try:
                self.tasks[int(index)]
            except KeyError as error:
                raise TaskIndexError(error.args[0]) from None
            return int(index)
        if self.task_sampling == "uniform":
            return self.tasks.indices[int(self.np_random.integers(len(self.tasks)))]
        if new_epoch or not self._epoch:
            self._epoch = [int(i) for i in self.np_random.permutation(self.tasks.indices)[::-1]]
        return self._epoch.pop()

    def _reply_text(self, action: object) -> str:
        """The reply as text; an assistant message dict is its JSON (tools format only)."""
        if isinstance(action, str):
            return action
        if isinstance(action, Mapping) and self.action_format == "tools":
            return message_text(action)
        takes = "a str (the model's reply)"
        if self.action_format == "tools":
            takes += " or an OpenAI assistant message as a dict (an SDK message's .model_dump())"
        raise TypeError(f"step() takes {takes}; got {type(action).__name__}")

    def task_info(self) -> dict[str, Any]:
        """The `info` of the current task as `step` returns it (status and outcome once ended)."""
        session = self.session
        assert session is not None
        info: dict[str, Any] = {
            "task_index": session.task_index,
            "skills": list(session.skills),
            "turn": session.agent_turns,
        }
        if session.finished:
            info["status"] = session.status.value
            info["outcome"] = session.outcome.value
            info.update(session.details)
        return info

    def _reward(self, evaluation: Evaluation) -> float:
        if evaluation.outcome == EvaluationOutcome.CORRECT:
            return 1.0
        if self.reward_mode == "partial" and self.partial_credit is not None:
            credit = float(evaluation.details.get(self.partial_credit, 0.0))
            return min(max(credit, 0.0), MAX_PARTIAL_REWARD)
        return 0.0

    def _fit(self, text: str) -> str:
        return truncate_middle(text, self.max_observation_length)

    def _release_task(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            self._end_task()

    def _abandon_task(self) -> None:
        """Clean up a task left unfinished (reset mid-episode, close)."""
        if self.session is not None and not self.session.finished and self.task is not None:
            self._release_task()
