"""Tokens per second of the tiny model: 8 histories one by one, then as one batch.

Run: `python benchmarks/agent_batching.py` (see --help for the options).
On a busy shared CPU, `--threads 1` avoids torch's threads waiting on each other.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable

import torch

from lifelong_gym.agents import HFModelConfig
from lifelong_gym.agents.models.hf import TransformersModel
from lifelong_gym.agents.models.tiny import build_tiny_model

TASK = "Answer with one SQL statement a turn.\nTask: list the names of items costing more than {n}."


def histories(count: int) -> list[list[dict[str, str]]]:
    """Chat histories of different lengths, like sessions at different turns."""
    made = []
    for i in range(count):
        history = [{"role": "user", "content": TASK.format(n=i)}]
        for turn in range(i % 3):
            history += [
                {"role": "assistant", "content": f"Action: Operation\n```sql\nSELECT {turn};\n```"},
                {"role": "user", "content": f"[({turn},)]"},
            ]
        made.append(history)
    return made


def best_of(repeats: int, run: Callable[[], list[str]]) -> tuple[float, list[str]]:
    """The fastest of `repeats` runs (seconds) and its replies."""
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        replies = run()
        timings.append(time.perf_counter() - start)
    return min(timings), replies


def main() -> None:
    """Print tokens/s both ways and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5, help="runs per way; the best counts")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as folder:
        path = build_tiny_model(folder)
        config = HFModelConfig(
            name="tiny", path=str(path), max_new_tokens=args.new_tokens, batch_size=args.histories
        )
        model = TransformersModel(config)
    batch = histories(args.histories)
    model.generate(batch[:1])  # warm-up

    sequential, one_by_one = best_of(args.repeats, lambda: [model.generate([h])[0] for h in batch])
    together, batched = best_of(args.repeats, lambda: model.generate(batch))

    assert batched == one_by_one, "greedy batched generation must match one-by-one generation"
    tokens = sum(len(model.tokenizer(r, add_special_tokens=False)["input_ids"]) for r in batched)
    print(
        f"{args.histories} histories, {tokens} generated tokens, device {model.device}, "
        f"{torch.get_num_threads()} CPU threads"
    )
    print(f"one by one : {tokens / sequential:9.1f} tokens/s ({sequential:.2f} s)")
    print(f"one batch  : {tokens / together:9.1f} tokens/s ({together:.2f} s)")
    print(f"ratio      : {sequential / together:9.1f}x (target >= 3x)")


if __name__ == "__main__":
    main()
