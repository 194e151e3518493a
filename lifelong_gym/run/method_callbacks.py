"""The lifelong methods as runner callbacks: thin adapters over `lifelong_gym.methods`."""

from __future__ import annotations

import functools
from typing import Any

from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.methods import (
    ExperienceReplayMethod,
    GroupSelfConsistencyMethod,
    Method,
    ProceduralMemoryMethod,
    ReasoningMemoryMethod,
    WorkflowMemoryMethod,
)
from lifelong_gym.methods.budget import model_of, resolve_budget
from lifelong_gym.methods.experience import DEFAULT_REPLY_RESERVE, Strategy

from .callbacks import Callback
from .registry import register_callback


class MethodCallback(Callback):
    """A method object run by the runner: `start` at reset, `finish` at completion.

    `Method.as_callback()` gives one for any method. `budget` (None, a number of tokens,
    or "auto": the agent's model's context window), for the methods that replay a memory
    of experiences, is resolved against the agent at setup; an unusable budget stops the
    run before any task. The method's state is saved with every snapshot and restored on
    resume.
    """

    method: Method

    def __init__(self, method: Method | None = None, budget: int | str | None = None):
        if method is not None:
            self.method = method
        self.budget = budget

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
        """A callback class, named for `method_class`, whose keyword arguments build it."""

        def __init__(self, **kwargs: Any) -> None:
            MethodCallback.__init__(self, method_class(**kwargs))

        namespace = {"__init__": __init__, "__doc__": method_class.__doc__}
        namespace["__module__"] = method_class.__module__
        return type(f"{method_class.__name__}Callback", (cls,), namespace)

    def setup(self, agent, env):
        """Resolve the budget against the agent's model (a method with a budget only)."""
        if self.budget is None:
            return
        memory = self.method.memory
        memory.token_budget, memory.count_tokens = resolve_budget(self.budget, agent)

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


@register_callback("experience_replay")
class ExperienceReplayCallback(MethodCallback):
    """Put the last `n` solved sessions into each new task's opening prompt (the paper's replay).

    With a `budget`, experiences are dropped until the prompt plus `reserve` tokens fits.
    """

    strategy: Strategy = "recent"

    def __init__(
        self, n: int = 4, budget: int | str | None = None, reserve: int = DEFAULT_REPLY_RESERVE
    ):
        super().__init__(ExperienceReplayMethod(n, self.strategy, reply_reserve=reserve), budget)


@register_callback("relevant_replay")
class RelevantReplayCallback(ExperienceReplayCallback):
    """Replay the `n` solved sessions sharing most skills, then most similar instructions."""

    strategy: Strategy = "relevant"


@register_callback("group_self_consistency")
class GroupSelfConsistencyCallback(MethodCallback):
    """Replace each agent reply by the group vote (uses the agent's own model)."""

    def __init__(
        self,
        groups: int = 2,
        per_group: int = 2,
        budget: int | str | None = None,
        reserve: int = DEFAULT_REPLY_RESERVE,
    ):
        super().__init__(GroupSelfConsistencyMethod(groups, per_group, reserve), budget)

    def setup(self, agent, env):
        """Refuse an agent without a model to vote with; resolve the budget against it."""
        agent_model("group_self_consistency votes", agent)
        super().setup(agent, env)

    def on_agent_inference(self, run, state, control, *, agent, env, session, **kwargs):
        """Vote on the agent's reply before it reaches the environment."""
        if control.reply is None:
            return None
        normalize = env.unwrapped.normalize_action
        control.reply = self.method.vote(model_of(agent), normalize, session, control.reply)
        return control


@register_callback("reasoning_memory")
class ReasoningMemoryCallback(MethodCallback):
    """After each task the agent's model distills a lesson; the `k` most relevant go into
    each new prompt, adding at most `budget` tokens; at most `max_items` are kept."""

    def __init__(self, k: int = 2, budget: int = 1024, max_items: int = 100):
        try:
            method = ReasoningMemoryMethod(k, budget, max_items)
        except ValueError as error:
            raise CallbackSpecError(f"callback reasoning_memory: {error}") from None
        super().__init__(method)  # its budget is the method's own, counted as it retrieves

    def setup(self, agent, env):
        """Refuse an agent without a model to distill with; count with its tokenizer."""
        self.method.bind(agent_model("reasoning_memory distills memories", agent))


def agent_model(purpose: str, agent) -> Any:
    """The agent's own language model, or one line saying `purpose` needs one."""
    model = model_of(agent)
    if not callable(getattr(model, "generate", None)):
        raise CallbackSpecError(
            f"{purpose} with the agent's model, and the {type(agent).__name__} agent has "
            "none: use a model agent (hf:..., openai:...)"
        )
    return model


class RecipeMemoryCallback(MethodCallback):
    """A memory that learns with the agent's model when it has one, else by its rule."""

    def setup(self, agent, env):
        """Learn with the agent's model, if it has one that generates."""
        model = model_of(agent)
        if callable(getattr(model, "generate", None)):
            self.method.bind(model)


@register_callback("workflow_memory")
class WorkflowMemoryCallback(RecipeMemoryCallback):
    """Workflows induced from solved tasks (AWM), each keeping its `examples` newest tasks;
    the `k` most relevant go into each new prompt, adding at most `budget` tokens."""

    def __init__(self, k: int = 2, budget: int = 1024, max_items: int = 100, examples: int = 2):
        arguments = (k, budget, max_items, examples)
        super().__init__(checked("workflow_memory", WorkflowMemoryMethod, *arguments))


@register_callback("procedural_memory")
class ProceduralMemoryCallback(RecipeMemoryCallback):
    """Procedures built from solved tasks (Memp), the `k` most similar put into each prompt,
    revised or demoted when they are given to a failed task, dropped `patience` failures
    past their successes."""

    def __init__(self, k: int = 2, budget: int = 1024, max_items: int = 100, patience: int = 2):
        arguments = (k, budget, max_items, patience)
        super().__init__(checked("procedural_memory", ProceduralMemoryMethod, *arguments))


def checked(name: str, method_class: type[Method], *arguments: Any) -> Method:
    """`method_class(*arguments)`, or one line saying what is wrong with the callback's."""
    try:
        return method_class(*arguments)
    except ValueError as error:
        raise CallbackSpecError(f"callback {name}: {error}") from None
