"""What each lifelong method costs per task: extra model calls and extra prompt tokens.

Runs the oracle (whose replies go through a tiny local model first, so every call is
counted) over the first tasks of an environment, once plainly and once with each method,
and prints per task: the model calls, the prompt tokens the agent's calls read, and the
extra calls and tokens against the plain run. Tokens are the tiny model's (a byte-level BPE).

    python benchmarks/method_costs.py [--env LifelongDB-v0] [--tasks 40]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import Agent, LanguageModel, ModelPool, OracleAgent, to_messages
from lifelong_gym.agents.models.tiny import build_tiny_model
from lifelong_gym.run import Runner, make_callback

METHODS = [
    None,
    "experience_replay:n=4",
    "relevant_replay:n=4",
    "experience_replay:n=16",
    "group_self_consistency:groups=2,per_group=2",
    "reasoning_memory:k=2",
]


class CountingModel(LanguageModel):
    """Counts the calls and prompt tokens that pass through to the model."""

    def __init__(self, model: LanguageModel):
        self.model = model
        self.calls = 0
        self.tokens = 0

    def generate(self, batch: Sequence[Sequence[dict[str, str]]]) -> list[str]:
        self.calls += len(batch)
        self.tokens += sum(self.model.count_tokens(messages) for messages in batch)
        return self.model.generate(batch)

    def count_tokens(self, messages):
        return self.model.count_tokens(messages)


class OracleThroughModel(Agent):
    def __init__(self, tasks, model: CountingModel):
        self.oracle = OracleAgent(tasks)
        self.model = model

    def act(self, session):
        self.model.generate([to_messages(session.chat_history)])
        return self.oracle.act(session)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="LifelongDB-v0")
    parser.add_argument("--tasks", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = build_tiny_model(Path(folder) / "tiny", context_window=65536)
        config = {"name": "tiny", "backend": "hf", "path": str(path), "max_new_tokens": 1}
        tiny = ModelPool([config]).get("tiny")
        env = gym.make(args.env)
        rows = []
        for method in METHODS:
            model = CountingModel(tiny)
            agent = OracleThroughModel(env.unwrapped.tasks, model)
            callbacks = [make_callback(method)] if method else []
            output = Path(folder) / f"run-{len(rows)}"
            Runner(env, agent, callbacks, output=output, max_tasks=args.tasks, progress=False).run()
            rows.append((method or "plain", model.calls / args.tasks, model.tokens / args.tasks))
        env.close()
    base_calls, base_tokens = rows[0][1], rows[0][2]
    print(f"{args.env}, {args.tasks} tasks, oracle replies, tiny model's tokenizer")
    print(f"{'method':45} {'calls/task':>10} {'tokens/task':>12} {'+calls':>7} {'+tokens':>9}")
    for name, calls, tokens in rows:
        print(
            f"{name:45} {calls:10.2f} {tokens:12.0f} {calls - base_calls:+7.2f}"
            f" {tokens - base_tokens:+9.0f}"
        )


if __name__ == "__main__":
    main()
