"""`LifelongOSEnv`: the benchmark's operating-system tasks in fresh containers (Docker or OCI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lifelong_gym.actions import not_text
from lifelong_gym.core import (
    DEFAULT_MAX_ACTION_LENGTH,
    DEFAULT_MAX_OBSERVATION_LENGTH,
    Evaluation,
    Interaction,
    InvalidReply,
    LifelongEnv,
)
from lifelong_gym.envs.os.actions import (
    TOOLS,
    Action,
    format_output,
    from_tool_call,
    parse_action,
)
from lifelong_gym.envs.os.backends.docker import ContainerPool
from lifelong_gym.envs.os.backends.sandbox import Limits, Sandbox, SandboxPool
from lifelong_gym.envs.os.backends.shell import CommandResult, Mode
from lifelong_gym.envs.os.harbor.tasks import load_harbor_tasks
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.judge import judge, prepare
from lifelong_gym.envs.os.prompt import opening_prompt
from lifelong_gym.envs.os.tasks import OSTask, load_os_tasks
from lifelong_gym.errors import EnvArgumentError
from lifelong_gym.session import EvaluationOutcome, OpeningPrompt, Session
from lifelong_gym.tasks import TaskSet
from lifelong_gym.tool_calls import ToolCall


class LifelongOSEnv(LifelongEnv[OSTask]):
    """Linux shell tasks: each in a fresh container, solved with bash commands.

    ## Description
    The benchmark's OS environment. `reset` takes a warm container from a pool, runs the
    task's initialization script, and returns the instructions with the task. The agent
    acts with bash scripts; the task is solved when its evaluation script exits 0 (or, for
    AgentBench tasks, when the agent's answer passes the task's checker).

    ## Action Space
    The model's reply as text (`UnicodeText`): `Act: bash` followed by fenced ```bash
    blocks (run as one script), `Act: finish`, or `Act: answer(TEXT)`. A reply in none of
    these forms ends the task with status `agent_validation_failed` (it is still scored).

    ## Observation Space
    Text: the opening prompt after `reset`; after a command, `The output of the OS:` and
    its output (head and tail kept past `max_output_length`, with the number of characters
    cut), or `The output of the OS is empty.`; notes when a command was stopped by the
    timeout.

    ## Rewards
    1.0 when the finished task is correct, else 0.0, given on the step that ends it.
    An evaluation script passes or fails, so `reward="partial"` gives the same 0/1.

    ## Starting State
    `reset` takes a fresh container from the warm pool, runs the task's initialization
    script in it, and returns the instructions and the task as one message. Without
    `options={"task_index": i}` the task is the next of the epoch (see `task_sampling`).

    ## Episode End
    Terminated on `finish`, `answer` or an unparsable reply; truncated after `max_turns`
    replies (the task is still scored, as in the reference). The session's details (and the
    last step's `info`) hold `exit_codes`: one per script the agent sent, in order (None
    when the script timed out), and `answer` on tasks checked by answer.

    ## Arguments
    - `tasks`: a shipped task-set name (default "default"), a task file path in our,
      the benchmark's or AgentBench's OS format, or a folder of Harbor task folders
      (their Dockerfiles must start FROM `image`).
    - `image`: the container image (build it: `lifelong-gym build-image os`).
    - `sandbox`: "docker" (the default: containers of the Docker engine) or "oci" (a
      container per task run by crun or runc with no daemon; see docs/os.md).
    - `runtime`: the OCI runtime, "crun" or "runc" (default: crun, else runc).
    - `rootfs`: the OCI sandbox's root file system folder (`lifelong-gym build-image os
      --rootfs DIR`); without it, `image` is exported from Docker once.
    - `pool_size`: containers kept warm ahead of need.
    - `shell`: "persistent" (one bash per task: `cd` and variables persist) or "bash-c"
      (each action in a new `bash -c`, exactly as the reference).
    - `command_timeout`: seconds before a command's whole process session is killed.
    - `max_output_length`: characters of command output shown per action.
    - `restrict_commands`: the agent's shell executes only the benchmark's 29 commands
      (and bash, and what they need); any other program fails as `Permission denied`
      (enforced by the kernel, see docs/security.md; needs Landlock, Linux 5.13+).
    - `network`: give containers a network (off by default).
    - `max_turns`, `max_observation_length` (16,000), `max_action_length` (100,000),
      `render_mode`: as every environment of the suite.
    - `action_format`: `"text"` (the benchmark's reply format, default) or `"tools"`
      (native tool calls: `env.unwrapped.tools` lists the function schemas; `step` takes
      an OpenAI assistant message in JSON or as a dict, or `<tool_call>{...}</tool_call>`
      markup).
    - `reward`: `"binary"` (default) or `"partial"` (the same here; see Rewards).
    - `task_sampling`: `"epoch"` (default: each pass over the task set plays every task
      once, in an order drawn from `np_random`; `reset(seed=s)` starts a new pass) or
      `"uniform"` (each reset draws any task, with replacement).

    ## Example
    (needs a Docker engine and the image: `lifelong-gym build-image os`)

    >>> import gymnasium as gym
    >>> import lifelong_gym
    >>> gym.register_envs(lifelong_gym)
    >>> env = gym.make("LifelongOS-v0", pool_size=1)
    >>> obs, info = env.reset(options={"task_index": 0})
    >>> obs, reward, terminated, truncated, info = env.step("Act: bash\\n```bash\\necho hi\\n```")
    >>> obs
    'The output of the OS:\\n\\nhi\\n'
    >>> obs, reward, terminated, truncated, info = env.step("Act: finish")
    >>> terminated, info["status"]
    (True, 'completed')
    >>> env.close()

    ## Version History
    - v0: initial version.
    """

    def __init__(
        self,
        tasks: str | Path | TaskSet[OSTask] | None = None,
        *,
        image: str = DEFAULT_IMAGE,
        sandbox: str = "docker",
        runtime: str | None = None,
        rootfs: str | Path | None = None,
        pool_size: int = 2,
        shell: str = "persistent",
        command_timeout: float = 20.0,
        max_output_length: int = 8_000,
        restrict_commands: bool = False,
        network: bool = False,
        max_turns: int = 5,
        max_observation_length: int = DEFAULT_MAX_OBSERVATION_LENGTH,
        max_action_length: int = DEFAULT_MAX_ACTION_LENGTH,
        render_mode: str | None = None,
        action_format: str = "text",
        reward: str = "binary",
        task_sampling: str = "epoch",
    ):
        if sandbox not in ("docker", "oci"):
            raise EnvArgumentError(f"sandbox must be 'docker' or 'oci', got {sandbox!r}")
        if sandbox == "docker" and (runtime is not None or rootfs is not None):
            raise EnvArgumentError("runtime= and rootfs= apply to sandbox='oci' only")
        if shell not in ("persistent", "bash-c"):
            raise EnvArgumentError(f"shell must be 'persistent' or 'bash-c', got {shell!r}")
        if command_timeout <= 0:
            raise EnvArgumentError(f"command_timeout must be positive, got {command_timeout}")
        if isinstance(tasks, TaskSet):
            task_set = tasks
        elif tasks is not None and Path(tasks).expanduser().is_dir():
            task_set = load_harbor_tasks(tasks)
        else:
            task_set = load_os_tasks(tasks)
        foreign = sorted({task.image for task in task_set if task.image not in (None, image)})
        if foreign:
            raise EnvArgumentError(
                f"tasks are set up on the image {', '.join(foreign)}, but this environment runs "
                f"{image}: pass image= (an image the Docker engine holds)"
            )
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
        self.mode = Mode.PERSISTENT if shell == "persistent" else Mode.BASH_C
        self.command_timeout = command_timeout
        self.max_output_length = max_output_length
        self.restrict_commands = restrict_commands
        limits = Limits(network=network, restrict_commands=restrict_commands)
        if sandbox == "oci":
            from lifelong_gym.envs.os.backends.oci.sandbox import OciPool

            self.pool: SandboxPool = OciPool(
                rootfs, image=image, runtime=runtime, size=pool_size, limits=limits
            )
        else:
            self.pool = ContainerPool(image, size=pool_size, limits=limits)
        self.sandbox: Sandbox | None = None
        self.answer: str | None = None
        self.exit_codes: list[int | None] = []  # one per script of the current task

    # -- the appendix's methods --------------------------------------------------------

    def _start_task(self, task: OSTask) -> OpeningPrompt:
        self.answer = None
        self.exit_codes = []
        self.sandbox = self.pool.acquire()
        prepare(self.sandbox, task)
        return opening_prompt(task.instruction, self.action_format)

    tool_schemas = TOOLS

    def parse_text_action(self, reply: str) -> Action | InvalidReply:
        """A script to run, `finish`, an answer, or why the reply is invalid."""
        return parse_action(reply)

    def action_from_tool_call(self, call: ToolCall) -> Action | InvalidReply:
        """`bash(script)`, `finish()` or `answer(text)`."""
        return from_tool_call(call)

    def interact(self, action: str) -> Interaction:
        """Parse the reply; run its script, or end the task on `finish` / `answer`."""
        parsed = self.parse_action(action)
        if isinstance(parsed, InvalidReply):
            return Interaction.invalid(parsed)
        invalid = not_text(parsed.content, f"the {'script' if parsed.kind == 'bash' else 'answer'}")
        if invalid is not None:  # the shell and the judge take UTF-8 only
            return Interaction.error(invalid)
        if parsed.kind == "finish":
            return Interaction("", done=True)
        if parsed.kind == "answer":
            self.answer = parsed.content
            return Interaction("", done=True)
        assert self.sandbox is not None
        result = self.sandbox.run(
            parsed.content, self.mode, timeout=self.command_timeout, limit=self.max_output_length
        )
        self.exit_codes.append(None if result.timed_out else result.exit_code)
        return Interaction(self._observation(result))

    def _observation(self, result: CommandResult) -> str:
        text = format_output(result.output)
        if result.ended_before:
            text += (
                "\n\n[Before this command ran, the processes you had left running filled the "
                f"container's process limit, so every one was ended ({result.ended_before}); "
                "a new shell was started.]"
            )
        if result.timed_out:
            text += (
                f"\n\n[The command did not finish within {self.command_timeout:g} s, so every "
                f"process you started was ended ({result.stopped}); a new shell was started.]"
            )
        elif result.out_of_processes:
            text += (
                "\n\n[The processes you started filled the container's process limit, so "
                f"every one was ended ({result.stopped}); a new shell was started.]"
            )
        elif result.shell_lost and self.mode == Mode.PERSISTENT:
            text += "\n\n[The shell exited; a new shell was started.]"
        return text

    def _evaluate(self, task: OSTask, session: Session) -> Evaluation:
        assert self.sandbox is not None
        correct = judge(self.sandbox, task, self.answer)
        outcome = EvaluationOutcome.CORRECT if correct else EvaluationOutcome.INCORRECT
        details: dict[str, Any] = {"exit_codes": list(self.exit_codes)}
        if task.answer_check:
            details["answer"] = self.answer
        return Evaluation(outcome, details)

    def _end_task(self) -> None:
        sandbox, self.sandbox = self.sandbox, None
        if sandbox is not None:
            self.pool.discard(sandbox)

    def release(self) -> None:
        """Remove the current container, stop the pool and remove all its containers."""
        self._end_task()
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.close()
