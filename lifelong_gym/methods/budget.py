"""The context budget: how many prompt tokens a model can take, counted with its tokenizer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lifelong_gym.errors import BudgetError, CallbackSpecError

TokenCounter = Callable[[str], int]


def model_of(agent: Any) -> Any:
    """The language model behind an agent, if it has one."""
    return getattr(agent, "model", None)


def agent_model(purpose: str, agent: Any, instead: str = "") -> Any:
    """The agent's own language model, or one line saying `purpose` needs one (and, when
    given, the spec that does `instead` without a model)."""
    model = model_of(agent)
    if not callable(getattr(model, "generate", None)):
        other = f" (or {instead}, which needs no model)" if instead else ""
        if agent is None:  # a method played without an agent (`export sft --method`)
            fix = f": use {instead}" if instead else ""
            raise CallbackSpecError(f"{purpose} with an agent's model; no agent plays here{fix}")
        raise CallbackSpecError(
            f"{purpose} with the agent's model, and the {type(agent).__name__} agent has "
            f"none: use a model agent (hf:..., openai:...){other}"
        )
    return model


def token_counter(model: Any) -> TokenCounter | None:
    """A function counting a prompt's tokens with the model's own tokenizer, if it has one."""
    if model is None:
        return None

    def count(text: str) -> int:
        counted = model.count_tokens([{"role": "user", "content": text}])
        if counted is None:
            raise BudgetError(
                f"{type(model).__name__} cannot count tokens; give budget as a number"
            )
        return counted

    return count if model.count_tokens([{"role": "user", "content": ""}]) is not None else None


def resolve_budget(budget: int | str | None, agent: Any) -> tuple[int | None, TokenCounter | None]:
    """The token budget and counter for `budget`: None, a number of tokens, or "auto".

    "auto" is the agent's model's context window; a number needs a model that counts tokens.
    """
    if budget is None:
        return None, None
    model = model_of(agent)
    counter = token_counter(model)
    if counter is None:
        raise BudgetError(
            "a replay budget needs an agent whose model counts tokens (a transformers model)"
        )
    if budget == "auto":
        window = getattr(model, "context_window", None)
        if not window:
            raise BudgetError("budget=auto needs a model with a known context window")
        return int(window), counter
    if isinstance(budget, int) and budget > 0:
        return budget, counter
    raise BudgetError(f"budget={budget!r}: give a number of tokens or 'auto'")
