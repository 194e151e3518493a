"""What a warm start costs on this machine: SFT tokens per second, evaluation episodes per minute.

Training: TRL's `SFTTrainer` on the same DB demonstrations (assistant-only loss), two ways,
the same number of optimizer steps each: **naive**, TRL's defaults on a CPU (float32,
4 padded episodes a forward, gradient checkpointing on), and **ours**, the recipe of
examples/sft_warmstart.py (bfloat16 autocast where the CPU computes in bf16 itself, else
float32; one episode a forward with 8 accumulated,
no checkpointing). Both see 8 episodes an optimizer step. The figure is the episodes'
tokens (padding not counted) per second of training.

Evaluation: held-out episodes in the standard DB environment (the benchmark's prompt,
3 turns), greedy, float32, as `evaluate_policy` plays them: one environment at a time
against 8 copies decoded in one batch. The figure is episodes per minute of wall time.

    python benchmarks/sft_cost.py [--model FOLDER] [--steps 3] [--eval-episodes 16]

`--model` is a model folder (`lifelong-gym model smollm2 DIR`); without it SmolLM2's GGUF
file is loaded. The rounds alternate (naive, ours, naive, ...) so drift on a shared
machine touches both.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from datasets import load_dataset
from trl import SFTConfig, SFTTrainer

from lifelong_gym.agents.models.gguf import smollm2_path
from lifelong_gym.decoding.policy import load_model
from lifelong_gym.decoding.precision import native_bf16
from lifelong_gym.training import TransformersPolicy
from lifelong_gym.training.chat_templates import training_chat_template
from lifelong_gym.training.evaluation import evaluate_policy
from lifelong_gym.training.sft_export import export_sft

RECIPES = {
    "naive": {
        "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": 2,
        "bf16": False,
        "gradient_checkpointing": True,
    },
    "ours": {
        "per_device_train_batch_size": 1,
        "gradient_accumulation_steps": 8,
        "bf16": native_bf16(),  # as examples/sft_warmstart.py chooses
        "gradient_checkpointing": False,
    },
}


def train_rate(model_path: str, data: Path, recipe: str, steps: int, work: Path) -> float:
    """Tokens per second of `steps` optimizer steps of one recipe, from fresh weights."""
    model, tokenizer = load_model(model_path or smollm2_path())
    tokenizer.chat_template = training_chat_template(tokenizer)
    dataset = load_dataset(str(data), split="train").select_columns(["messages"])
    dataset = dataset.select(range(8 * steps))
    args = SFTConfig(
        output_dir=str(work / recipe),
        max_steps=steps,
        learning_rate=1e-4,
        assistant_only_loss=True,
        max_length=2048,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        logging_steps=steps,
        include_num_input_tokens_seen="non_padding",
        disable_tqdm=True,
        **RECIPES[recipe],
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
    started = time.monotonic()
    trainer.train()
    return trainer.state.num_input_tokens_seen / (time.monotonic() - started)


def eval_rate(model_path: str, episodes: int, num_envs: int, tasks: str) -> float:
    """Held-out episodes per minute, greedy, with `num_envs` copies decoded together."""
    model, tokenizer = load_model(model_path or smollm2_path())
    policy = TransformersPolicy(model, tokenizer, temperature=0.0, max_new_tokens=256)
    started = time.monotonic()
    evaluate_policy(policy, tasks=tasks, episodes=episodes, num_envs=num_envs)
    return episodes / ((time.monotonic() - started) / 60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="", help="model folder (default: SmolLM2's GGUF)")
    parser.add_argument("--steps", type=int, default=3, help="optimizer steps per round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--eval-episodes", type=int, default=16)
    parser.add_argument("--eval-tasks", default="default", help="DB task file or shipped set")
    parser.add_argument("--threads", type=int, default=2)
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    precision = "bf16 autocast" if RECIPES["ours"]["bf16"] else "float32 (no native bf16 here)"
    print(f"ours trains in {precision}")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        export_sft("LifelongDB-v0", work / "data", progress=False)
        rates: dict[str, list[float]] = {name: [] for name in RECIPES}
        for round_ in range(options.rounds):
            for name in RECIPES:
                rates[name].append(
                    train_rate(options.model, work / "data", name, options.steps, work)
                )
                print(f"round {round_ + 1} {name:<6} {rates[name][-1]:7.1f} tokens/s", flush=True)
        naive, ours = max(rates["naive"]), max(rates["ours"])
        print(
            f"SFT tokens/s (best of {options.rounds}): naive {naive:.1f}  ours {ours:.1f}  "
            f"ratio {ours / naive:.2f}x"
        )
        one = eval_rate(options.model, options.eval_episodes, 1, options.eval_tasks)
        batched = eval_rate(options.model, options.eval_episodes, 8, options.eval_tasks)
        print(
            f"evaluation episodes/min: one env {one:.1f}  8 envs batched {batched:.1f}  "
            f"ratio {batched / one:.2f}x"
        )


if __name__ == "__main__":
    main()
