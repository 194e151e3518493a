"""Rollout throughput on DB environments: one batch per turn over N copies vs one by one.

For 1, 4 and 16 environments (SQLite, the shipped tasks), `collect_episodes` plays N
episodes three ways, interleaved (A B C A B C ...) so that the machine's load falls on all
alike:
- `naive`: one environment, one episode after another, no key/value states kept between
  calls (every turn reads its whole conversation);
- `one by one`: the same with the policy's cache kept (`reuse_cache=True`): a turn reads
  only its new tokens, a new episode reads the instructions from the last one's cache;
- `batched`: a SAME_STEP vector env of N copies, all sessions in one batch per turn,
  cache kept.
Printed per row: generated tokens per second and episodes per minute of CPU time (the
process's, environments included; the machine is shared, so wall time swings with the
load), min / median over the repeats, the speed-ups of batched over each way (episodes
per CPU minute, median of the per-repeat ratios, min in brackets), and the load average.
Models: the tiny random model and SmolLM2-135M-Instruct (GGUF, float32).
Last column, `decode ceiling`: generated tokens per CPU second of N rows decoding together
over the first DB prompt, read beforehand (no prompt work at all), over the same for one
row: the most batching can give on this machine when an episode is nothing but decoding.

Run: `python benchmarks/rollout_throughput.py` (`--models tiny` for the fast half).
"""

from __future__ import annotations

import argparse
import os
import statistics
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

WAYS = ("naive", "one by one", "batched")
CEILING_SECONDS = 2.0  # CPU time each side of the decode ceiling is measured for, at least


def measure(way: str, policy: TransformersPolicy, count: int, max_turns: int) -> tuple[float, ...]:
    """(generated tokens, episodes, CPU seconds, wall seconds) of one collection of `count`."""
    policy.kv.keep([])  # every way starts with nothing cached
    policy.reuse_cache = way != "naive"
    if way == "batched":
        envs = gym.vector.SyncVectorEnv(
            [lambda: LifelongDBEnv(max_turns=max_turns)] * count,
            autoreset_mode=AutoresetMode.SAME_STEP,
        )
    else:
        envs = LifelongDBEnv(max_turns=max_turns)
    cpu, wall = time.process_time(), time.perf_counter()
    found = collect_episodes(envs, policy, count, seed=0)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    envs.close()
    return sum(e.generated_tokens for e in found), len(found), cpu, wall


def decode_ceiling(policy: TransformersPolicy, count: int) -> float:
    """Tokens per CPU second of `count` rows decoding together over one row's, with the
    prompt already in the cache (its states kept from a first call), so only decoding is
    timed."""
    env = LifelongDBEnv()
    observation, _ = env.reset(seed=0)
    env.close()
    prompt = policy.prompt_ids(observation)
    policy.reuse_cache = True
    rates = []
    for rows in (1, count):
        policy.kv.keep([])
        policy.generate([prompt] * rows)  # reads the prompt; its states are kept
        tokens, start = 0, time.process_time()
        while time.process_time() - start < CEILING_SECONDS:  # replies end at random lengths
            tokens += sum(len(r.token_ids) for r in policy.generate([prompt] * rows))
        rates.append(tokens / (time.process_time() - start))
    return rates[1] / rates[0]


def load(name: str, max_new_tokens: int) -> TransformersPolicy:
    """The tiny random model (built in a temporary folder), SmolLM2, or a model folder."""
    if name == "tiny":
        path = build_tiny_model(tempfile.mkdtemp(prefix="tiny-model-"))
    elif name == "smollm2":
        path = smollm2_path()
    else:
        path = name
    return TransformersPolicy(path, max_new_tokens=max_new_tokens, temperature=1.0, seed=0)


def spread(values: list[float]) -> str:
    """`min/median` of `values`."""
    return f"{min(values):.1f}/{statistics.median(values):.1f}"


def main() -> None:
    """Print the three ways for every model and environment count, with the speed-ups."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", nargs="+", default=["tiny", "smollm2"], help="tiny, smollm2 or model folders"
    )
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 4, 16])
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2, help="interleaved runs of each way")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's choice)")
    parser.add_argument(
        "--skip-naive", action="store_true", help="only one by one and batched (a slow model)"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    ways = WAYS[1:] if args.skip_naive else WAYS
    print(
        "per CPU time, min/median of the repeats; speed-up: batched episodes/min over each way\n"
        f"{'model':8} {'envs':>4} | "
        + " | ".join(f"{w + ' tok/s, ep/min':^25}" for w in ways)
        + " | "
        + " ".join(f"{'vs ' + w:>12}" for w in ways[:-1])
        + " | wall | load | decode ceiling"
    )
    for name in args.models:
        policy = load(name, args.max_new_tokens)
        for count in args.envs:
            runs: dict[str, list[tuple[float, ...]]] = {way: [] for way in ways}
            loads = [os.getloadavg()[0]]
            for _ in range(args.repeats):
                for way in ways:
                    runs[way].append(measure(way, policy, count, args.max_turns))
            loads.append(os.getloadavg()[0])
            rate = {w: [60 * e / cpu for _, e, cpu, _ in runs[w]] for w in ways}
            cells = [
                f"{spread([t / cpu for t, _, cpu, _ in runs[w]]):>12} {spread(rate[w]):>12}"
                for w in ways
            ]
            ups = []
            for base in ways[:-1]:
                ratios = [b / a for a, b in zip(rate[base], rate["batched"], strict=True)]
                ups.append(f"{statistics.median(ratios):.1f}x ({min(ratios):.1f})")
            walls = [
                (e_b / w_b) / (e_a / w_a)
                for (_, e_a, _, w_a), (_, e_b, _, w_b) in zip(
                    runs["one by one"], runs["batched"], strict=True
                )
            ]
            print(
                f"{Path(name).name[:8]:8} {count:>4} | "
                + " | ".join(cells)
                + " | "
                + " ".join(f"{u:>12}" for u in ups)
                + f" | {statistics.median(walls):>4.1f}x | "
                f"{min(loads):.1f}-{max(loads):.1f} | {decode_ceiling(policy, count):.1f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
