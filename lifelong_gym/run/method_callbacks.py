"""The lifelong methods as runner callbacks: each made from its method class.

`Method.callback_class()` is `MethodCallback.for_method`: a callback class whose keyword
arguments build the method, named for it. The shipped methods are registered here by
name; only group self-consistency adds a hook of its own (the vote on every reply).
What a method needs from the agent (its model, its tokenizer) it takes in `Method.setup`.
"""

from __future__ import annotations

import functools
from typing import Any

from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.methods import (
    EmbeddingReplayMethod,
    ExperienceReplayMethod,
    GroupSelfConsistencyMethod,
    Method,
    ProceduralMemoryMethod,
    ReasoningMemoryMethod,
    RelevantReplayMethod,
    WorkflowMemoryMethod,
)
from lifelong_gym.methods.budget import model_of

from .callbacks import Callback
from .registry import register_callback


class MethodCallback(Callback):
    """A method object run by the runner: `setup` before the first task, `start` at reset,
    `finish` at completion; its state saved with every snapshot and restored on resume.

    `Method.as_callback()` gives one for any method. A method's refusal in `setup` (an
    agent without the model it needs, an unusable budget) stops the run before any task.
    """

    method: Method

    def __init__(self, method: Method | None = None):
        if method is not None:  # a subclass may set `self.method` itself
            self.method = method

    @classmethod
    def of(cls, method: Method) -> MethodCallback:
        """The callback running `method`, of its class's callback class (so its saved
        state is keyed by the method's name, from Python and the command line alike)."""
        callback = object.__new__(cls.for_method(type(method)))
        MethodCallback.__init__(callback, method)
        return callback

    @classmethod
    @functools.cache
    def for_method(cls, method_class: type[Method]) -> type[MethodCallback]:
        """A callback class whose keyword arguments build `method_class`, named for it
        (`ExperienceReplayMethod` gives `ExperienceReplayCallback`); a `ValueError` of the
        method's is one line naming the class."""
        name = method_class.__name__.removesuffix("Method") + "Callback"

        @functools.wraps(method_class.__init__)  # its signature, which --callback checks
        def __init__(self, **kwargs: Any) -> None:
            try:
                method = method_class(**kwargs)
            except ValueError as error:
                raise CallbackSpecError(f"callback {name}: {error}") from None
            MethodCallback.__init__(self, method)

        namespace = {"__init__": __init__, "__doc__": method_class.__doc__}
        namespace["__module__"] = method_class.__module__
        return type(name, (cls,), namespace)

    def setup(self, agent, env):
        """The method takes what it needs from the agent (its model, its tokenizer)."""
        self.method.setup(agent, env)

    def on_environment_reset(self, run, state, control, *, session, **kwargs):
        """The task began: the method sees its opening prompt."""
        self.method.start(session)

    def on_environment_complete(self, run, state, control, *, session, **kwargs):
        """The task is scored: the method learns from it."""
        self.method.finish(session)

    def state(self) -> dict[str, Any]:
        """The method's state."""
        return self.method.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore the method's state."""
        self.method.load_state(state)


Method.callback_face = MethodCallback

ExperienceReplayCallback = register_callback("experience_replay")(
    ExperienceReplayMethod.callback_class()
)
RelevantReplayCallback = register_callback("relevant_replay")(RelevantReplayMethod.callback_class())
EmbeddingReplayCallback = register_callback("embedding_replay")(
    EmbeddingReplayMethod.callback_class()
)
ReasoningMemoryCallback = register_callback("reasoning_memory")(
    ReasoningMemoryMethod.callback_class()
)
WorkflowMemoryCallback = register_callback("workflow_memory")(WorkflowMemoryMethod.callback_class())
ProceduralMemoryCallback = register_callback("procedural_memory")(
    ProceduralMemoryMethod.callback_class()
)


@register_callback("group_self_consistency")
class GroupSelfConsistencyCallback(GroupSelfConsistencyMethod.callback_class()):
    """Replace each agent reply by the group vote (with the agent's own model)."""

    def on_agent_inference(self, run, state, control, *, agent, env, session, **kwargs):
        """Vote on the agent's reply before it reaches the environment."""
        if control.reply is None:
            return None
        normalize = env.unwrapped.normalize_action
        control.reply = self.method.vote(model_of(agent), normalize, session, control.reply)
        return control
