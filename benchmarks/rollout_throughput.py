"""Rollout throughput on DB environments: one batch per turn over N copies vs one by one.

For 1, 4 and 16 environments (SQLite, the shipped tasks), `collect_episodes` plays N
episodes on a SAME_STEP vector env of N copies (all sessions in one batch per turn), and
then the same number of episodes on one environment, one after another. Printed side by
side: generated tokens per second and episodes per minute, for the tiny random model and
for SmolLM2-135M-Instruct (GGUF, float32).

Run: `python benchmarks/rollout_throughput.py` (`--models tiny` for the fast half).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import torch
from gymnasium.vector import AutoresetMode

from lifelong_gym.agents.models.gguf import smollm2_path
from lifelong_gym.agents.models.tiny import build_tiny_model
from lifelong_gym.envs.db.env import LifelongDBEnv
from lifelong_gym.training import TransformersPolicy, collect_episodes


def measure(envs, policy: TransformersPolicy, episodes: int) -> tuple[float, float]:
    """(generated tokens per second, episodes per minute) of one collection."""
    start = time.perf_counter()
    found = collect_episodes(envs, policy, episodes, seed=0)
    seconds = time.perf_counter() - start
    tokens = sum(e.generated_tokens for e in found)
    return tokens / seconds, 60 * len(found) / seconds


def load(name: str, max_new_tokens: int) -> TransformersPolicy:
    """The tiny random model (built in a temporary folder), SmolLM2, or a model folder."""
    if name == "tiny":
        path = build_tiny_model(tempfile.mkdtemp(prefix="tiny-model-"))
    elif name == "smollm2":
        path = smollm2_path()
    else:
        path = name
    return TransformersPolicy(path, max_new_tokens=max_new_tokens, temperature=1.0, seed=0)


def main() -> None:
    """Print both ways for every model and environment count, with the batched speed-up."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", nargs="+", default=["tiny", "smollm2"], help="tiny, smollm2 or model folders"
    )
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 4, 16])
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        f"{'model':8} {'envs':>4} | {'one by one':^22} | {'batched':^22} | speed-up\n"
        f"{'':8} {'':>4} | {'tokens/s':>10} {'ep/min':>10}  | {'tokens/s':>10} {'ep/min':>10}  |"
    )
    for name in args.models:
        policy = load(name, args.max_new_tokens)
        for count in args.envs:
            single = LifelongDBEnv(max_turns=args.max_turns)
            one_tokens, one_episodes = measure(single, policy, count)
            single.close()
            vector = gym.vector.SyncVectorEnv(
                [lambda: LifelongDBEnv(max_turns=args.max_turns)] * count,
                autoreset_mode=AutoresetMode.SAME_STEP,
            )
            batch_tokens, batch_episodes = measure(vector, policy, count)
            vector.close()
            label = Path(name).name[:8]
            print(
                f"{label:8} {count:>4} | {one_tokens:>10.1f} {one_episodes:>10.1f}  | "
                f"{batch_tokens:>10.1f} {batch_episodes:>10.1f}  | "
                f"{batch_episodes / one_episodes:.1f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
