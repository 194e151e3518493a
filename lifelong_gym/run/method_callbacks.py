"""The lifelong methods as runner callbacks: thin adapters over `lifelong_gym.methods`."""

from __future__ import annotations

from typing import Any

from lifelong_gym.errors import CallbackSpecError
from lifelong_gym.methods import (
    ExperienceReplayMethod,
    GroupSelfConsistencyMethod,
    ReasoningMemoryMethod,
)
from lifelong_gym.methods.budget import model_of, resolve_budget
from lifelong_gym.methods.experience import DEFAULT_REPLY_RESERVE, ExperienceMethod, Strategy

from .callbacks import Callback
from .registry import register_callback


class MethodCallback(Callback):
    """A method object run by the runner: `start` at reset, `finish` at completion.

    `budget` (None, a number of tokens, or "auto": the agent's model's context window) is
    resolved against the agent at setup; an unusable budget stops the run before any task.
    The method's memory is saved with every snapshot and restored on resume.
    """

    method: ExperienceMethod | ReasoningMemoryMethod

    def __init__(self, budget: int | str | None = None):
        self.budget = budget

    def setup(self, agent, env):
        """Resolve the budget against the agent's model."""
        memory = self.method.memory
        memory.token_budget, memory.count_tokens = resolve_budget(self.budget, agent)

    def on_environment_reset(self, run, state, control, *, session, **kwargs):
        """The task began: the method sees its opening prompt."""
        self.method.start(session)

    def on_environment_complete(self, run, state, control, *, session, **kwargs):
        """The task is scored: the method remembers it if it was solved."""
        self.method.finish(session)

    def state(self) -> dict[str, Any]:
        """The method's memory."""
        return self.method.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore the method's memory."""
        self.method.load_state(state)


@register_callback("experience_replay")
class ExperienceReplayCallback(MethodCallback):
    """Put the last `n` solved sessions into each new task's opening prompt (the paper's replay).

    With a `budget`, experiences are dropped until the prompt plus `reserve` tokens fits.
    """

    strategy: Strategy = "recent"

    def __init__(
        self, n: int = 4, budget: int | str | None = None, reserve: int = DEFAULT_REPLY_RESERVE
    ):
        super().__init__(budget)
        self.method = ExperienceReplayMethod(n, self.strategy, reply_reserve=reserve)


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
        super().__init__(budget)
        self.method = GroupSelfConsistencyMethod(groups, per_group, reserve)

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
        super().__init__(budget)
        try:
            self.method = ReasoningMemoryMethod(k, budget, max_items)
        except ValueError as error:
            raise CallbackSpecError(f"callback reasoning_memory: {error}") from None

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
