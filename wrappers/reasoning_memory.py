"""`ReasoningMemory`: lessons distilled by the model after each task, put into later prompts."""

from __future__ import annotations

from typing import Any, Literal

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from lifelong_gym.methods import ReasoningMemoryMethod
from lifelong_gym.methods.item_memory import ItemMemoryWrapper
from lifelong_gym.methods.memory_items import RENDERED_CHARS
from lifelong_gym.methods.reasoning_memory import CLOSING, HEADING
from lifelong_gym.spaces import UnicodeText


class ReasoningMemory(ItemMemoryWrapper, RecordConstructorArgs):
    """Reasoning memory (ReasoningBank's manner) for a plain Gymnasium loop.

    `model` is a `lifelong_gym.agents.LanguageModel`, normally the one that acts. At every
    reset the `k` stored items most relevant to the task, adding at most `budget` tokens
    (its tokenizer's), are put between the instructions and the task; when a task ends,
    `model` distills one item from it (a strategy from a success, a pitfall from a
    failure); with `distiller="rule"` (and no model) it is made by rule from the session
    (`lifelong_gym.methods.rule_items`). `info["reasoning_memory"]` holds the items
    retrieved, the tokens they added and, at the end of a task, the distillation's model
    call, tokens and item.

    Example (a stand-in model that distills the same lesson from every task):
        >>> import gymnasium as gym
        >>> import lifelong_gym
        >>> from lifelong_gym.agents import LanguageModel
        >>> from lifelong_gym.wrappers import ReasoningMemory
        >>> class OneLesson(LanguageModel):
        ...     def generate(self, batch, tools=None):
        ...         lesson = "Title: Read first\\nDescription: Look first.\\nContent: Describe it."
        ...         return [lesson for _ in batch]
        >>> env = ReasoningMemory(gym.make("LifelongDB-v0"), OneLesson())
        >>> obs, info = env.reset(options={"task_index": 0})
        >>> obs, reward, terminated, truncated, info = env.step("Action: Answer\\nFinal Answer: []")
        >>> terminated, reward, info["reasoning_memory"]["distillation"]["source"]
        (True, 0.0, 'failure')
        >>> obs, info = env.reset(options={"task_index": 1})
        >>> info["reasoning_memory"]["retrieved"], "### Read first" in obs
        ([1], True)
        >>> env.close()
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        model: Any = None,
        k: int = 2,
        budget: int = 1024,
        max_items: int = 100,
        distiller: Literal["model", "rule"] = "model",
    ):
        if model is None and distiller == "model":
            raise ValueError("ReasoningMemory needs a model to distill with, or distiller='rule'")
        RecordConstructorArgs.__init__(
            self, k=k, budget=budget, max_items=max_items, distiller=distiller
        )
        gym.Wrapper.__init__(self, env)
        self.method = ReasoningMemoryMethod(k, budget, max_items, model, distiller)
        limit = getattr(env.observation_space, "max_length", 16_000)
        notes = len(HEADING) + len(CLOSING) + k * (RENDERED_CHARS + 2)
        self.observation_space = UnicodeText(limit + notes)
