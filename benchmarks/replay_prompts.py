"""What the `hf:` agent's cached decoding saves on replayed prompts, against transformers' generate.

The oracle solves the first `--experiences` DB tasks under experience replay, so the
memory holds that many solved sessions; then `--sessions` new tasks open with those
experiences in their prompts (as every task of a replay cell does while the memory does
not change) and play `--turns` turns, all sessions in one batch, greedy. Two ways, the
same model and histories:

- naive: `reuse_cache=False`, transformers' `generate`: every prompt read whole at every
  turn, padded to the batch's longest;
- ours: the default, `TransformersPolicy`'s decoding: the prefix the prompts share (the
  instructions and the replayed experiences) read once, a session's next turn read from
  its previous one.

Printed per way: seconds a turn, the tokens the model read before decoding, and whether
both ways gave the same replies.

    python benchmarks/replay_prompts.py [--model smollm2] [--experiences 8] [--sessions 8]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import torch

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import ModelPool, OracleAgent
from lifelong_gym.wrappers import ExperienceReplay


def replayed_prompts(experiences: int, sessions: int) -> list[str]:
    """The opening prompts of `sessions` DB tasks after the oracle solved `experiences`."""
    env = ExperienceReplay(gym.make("LifelongDB-v0"), n=experiences)
    order = env.unwrapped.tasks.order
    agent = OracleAgent(env.unwrapped.tasks)
    for index in order[:experiences]:
        env.reset(options={"task_index": index})
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(agent.act(env.unwrapped.session))
            done = terminated or truncated
    prompts = []
    for index in order[experiences : experiences + sessions]:
        observation, info = env.reset(options={"task_index": index})
        assert len(info["replayed"]) == experiences, info["replayed"]
        prompts.append(observation)
    env.close()
    return prompts


def play(model, prompts: list[str], turns: int) -> tuple[list[float], list[int], list[str]]:
    """Seconds and tokens read before decoding per turn, and the replies of all turns."""
    read: list[tuple[int, int]] = []  # the shape of each forward pass's input ids
    model.model.register_forward_pre_hook(
        lambda _module, _args, kwargs: read.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True,
    )
    histories = [[{"role": "user", "content": prompt}] for prompt in prompts]
    seconds, tokens, replies = [], [], []
    for turn in range(turns):
        read.clear()
        started = time.perf_counter()
        answers = model.generate(histories)
        seconds.append(time.perf_counter() - started)
        tokens.append(sum(rows * n for rows, n in read if n > 1))  # decoding reads 1 a row
        replies += answers
        for history, answer in zip(histories, answers, strict=True):
            history += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": f"[({turn + 1},)]"},
            ]
    return seconds, tokens, replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2", help="a model folder, a .gguf, or smollm2")
    parser.add_argument("--experiences", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    prompts = replayed_prompts(args.experiences, args.sessions)
    config = {"backend": "hf", "path": args.model, "max_new_tokens": args.max_new_tokens}
    pool = ModelPool(
        [{**config, "name": "naive", "reuse_cache": False}, {**config, "name": "ours"}]
    )
    lengths = [pool.get("ours").count_tokens([{"role": "user", "content": p}]) for p in prompts]
    print(
        f"{args.sessions} sessions, {args.experiences} replayed experiences, prompts of "
        f"{min(lengths)}-{max(lengths)} tokens, {args.turns} turns, "
        f"{args.max_new_tokens} new tokens at most, {args.threads} threads"
    )
    results = {way: play(pool.get(way), prompts, args.turns) for way in ("naive", "ours")}
    print(f"{'way':<6} {'s/turn':>24} {'tokens read/turn':>28} {'total s':>8}")
    for way, (seconds, tokens, _) in results.items():
        print(
            f"{way:<6} {' '.join(f'{s:7.1f}' for s in seconds):>24} "
            f"{' '.join(f'{t:8d}' for t in tokens):>28} {sum(seconds):8.1f}"
        )
    naive, ours = results["naive"], results["ours"]
    same = sum(a == b for a, b in zip(naive[2], ours[2], strict=True))
    print(
        f"ours/naive: time {sum(ours[0]) / sum(naive[0]):.2f}x, tokens read "
        f"{sum(ours[1]) / sum(naive[1]):.2f}x; the same replies: {same} of {len(naive[2])}"
    )


if __name__ == "__main__":
    main()
