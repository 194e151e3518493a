"""`Method`: the base of a lifelong method, one object with a runner face and a Gymnasium face
(`MethodWrapper`, also exported as `lifelong_gym.wrappers.MethodWrapper`)."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym

from lifelong_gym.session import Session


class Method:
    """A lifelong-learning method: what it does before each task, what it learns after it,
    and its memory. Subclass it and override what the method needs.

    - `setup(agent, env)`: the runner is about to start (its callback face only); a method
      that needs the agent's model (to count tokens, to vote, to distill) takes it here.
    - `start(session)`: the opening prompt is written and the agent has not replied; put
      memory into it with `session.insert_memory(text, title=...)`.
    - `finish(session)`: the task is scored (`session.outcome`, `session.status`, the
      `chat_history`); learn from it. A probe (`session.probe`) must teach nothing.
    - `state()` / `load_state(state)`: the memory as JSON-ready values, saved with every
      snapshot of a run and taken back when it resumes.

    `method.as_callback()` gives the runner's callback (`Runner(..., callbacks=[...])`),
    `Class.callback_class()` a callback class for `--callback module.Name:key=value` (its
    keyword arguments are the method's; it is named for the class, `...Method` dropped,
    with `Callback` added), and `method.as_wrapper(env)` a Gymnasium wrapper for a plain
    `reset`/`step` loop.
    """

    # The runner's face lives in the layer above (lifelong_gym.run), which sets it when
    # imported: this layer may not import it.
    callback_face: ClassVar[Any] = None

    def setup(self, agent: Any, env: Any) -> None:
        """The runner starts with `agent` on `env` (nothing by default; not called by the
        wrapper, whose method is given what it needs when made)."""

    def start(self, session: Session) -> None:
        """A task begins: put memory into its opening prompt (nothing by default)."""

    def finish(self, session: Session) -> None:
        """A task is scored: learn from it (nothing by default)."""

    def state(self) -> dict[str, Any]:
        """The method's memory as JSON-ready values (nothing by default)."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back what `state()` returned (nothing by default)."""

    def as_callback(self) -> Any:
        """This method as a runner callback: `start` at each reset, `finish` at each
        completion, its state saved with the run's snapshots."""
        return _face(Method.callback_face, "as_callback", "lifelong_gym.run").of(self)

    @classmethod
    def callback_class(cls) -> Any:
        """A callback class building this method from keyword arguments, for
        `--callback module.Name:key=value` (name it in the method's module)."""
        face = _face(Method.callback_face, "callback_class", "lifelong_gym.run")
        return face.for_method(cls)

    def as_wrapper(self, env: gym.Env[str, str]) -> MethodWrapper:
        """`env` wrapped so that each `reset` calls `start` and each task's end `finish`."""
        return MethodWrapper(env, self)


class MethodWrapper(gym.Wrapper[str, str, str, str]):
    """Runs `method` around each task: `start` at every reset (so the observation is the
    opening prompt with the method's memory in it), `finish` when the task ends.

    `info["memory"]` at reset lists what the method inserted (`session.inserted_memory()`).
    A subclass may say, in `reset_info`, what else the reset's info adds, and may set
    `self.method` itself instead of passing it.

    Example:
        >>> import gymnasium as gym
        >>> import lifelong_gym
        >>> from lifelong_gym.methods import Method
        >>> class Note(Method):
        ...     def start(self, session):
        ...         session.insert_memory("Check the column names first.", title="note")
        >>> env = Note().as_wrapper(gym.make("LifelongDB-v0"))
        >>> obs, info = env.reset(options={"task_index": 0})
        >>> [(m["title"], m["text"]) for m in info["memory"]]
        [('note', 'Check the column names first.')]
        >>> obs.index("Check the column names first.") < obs.rindex("Task: ")  # before the task
        True
        >>> env.close()
    """

    method: Method

    def __init__(self, env: gym.Env[str, str], method: Method | None = None):
        super().__init__(env)
        if method is not None:
            self.method = method

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start the next task with the method's additions in its prompt."""
        _, info = self.env.reset(seed=seed, options=options)
        session = self.env.unwrapped.session
        self.method.start(session)
        memory = {"memory": session.inserted_memory()} if "memory" in session.details else {}
        return session.chat_history[0].content, {**info, **memory, **self.reset_info(session)}

    def reset_info(self, session: Any) -> dict[str, Any]:
        """What the method adds to the reset's info (nothing unless a subclass says)."""
        return {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Step the task; when it ends, the method learns from it."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self.method.finish(self.env.unwrapped.session)
        return obs, reward, terminated, truncated, info


def _face(face: Any, what: str, module: str) -> Any:
    if face is None:
        raise RuntimeError(f"Method.{what} needs {module}: import it first")
    return face
