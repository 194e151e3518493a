"""GRPO with TRL on the DB environment: the model acts through the environment's tools.

TRL's `GRPOTrainer` plays each rollout itself: it renders the tools with the chat
template, parses the model's tool calls, calls the environment's `execute_sql` /
`commit_final_answer` and feeds the results back, then scores the rollout with the
environment's own reward (logged as `rewards/LifelongDB/mean`). The dataset is the
environment's task indices in a seeded order; TRL repeats each row for every rollout of a
group, so a group's `group_size` rollouts play one task, and `--seed` fixes which.

    python examples/trl_grpo.py --model /path/to/Qwen2.5-0.5B-Instruct --steps 50
    python examples/trl_grpo.py --tiny --steps 2     # a random tiny model: the mechanics only

The model's chat template must be one TRL parses tool calls of (Qwen2.5/3, Llama 3.1+,
...); `--tiny` builds a random model and gives it TRL's Qwen2.5 template.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass, fields

from lifelong_gym.integrations.trl import environment_factory, task_dataset


@dataclass
class Config:
    model: str = ""  # a model folder with a tool-calling chat template
    tiny: bool = False  # build a random tiny model instead (for a smoke run)
    steps: int = 2
    max_turns: int = 5  # the environment's turn limit
    batch_size: int = 4  # rollouts per step
    group_size: int = 2  # rollouts per task (GRPO's group)
    max_completion_length: int = 256  # tokens over all of a rollout's turns
    learning_rate: float = 1e-6
    seed: int = 0  # the tasks' order and TRL's sampling
    output: str = ""  # checkpoints and logs; default a temporary folder


def load(config: Config):
    """The model and its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = config.model
    if config.tiny:
        from trl.chat_template_utils import qwen2_5_chat_template

        from lifelong_gym.agents.models.tiny import build_tiny_model

        folder = str(build_tiny_model(tempfile.mkdtemp(prefix="tiny-model-")))
    tokenizer = AutoTokenizer.from_pretrained(folder)
    if config.tiny:
        tokenizer.chat_template = qwen2_5_chat_template
    return AutoModelForCausalLM.from_pretrained(folder), tokenizer


def main(config: Config) -> None:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer = load(config)
    args = GRPOConfig(
        output_dir=config.output or tempfile.mkdtemp(prefix="trl-grpo-"),
        max_steps=config.steps,
        per_device_train_batch_size=config.batch_size,
        num_generations=config.group_size,
        max_completion_length=config.max_completion_length,
        max_tool_calling_iterations=config.max_turns,
        learning_rate=config.learning_rate,
        logging_steps=1,
        report_to=[],
        use_cpu=not torch.cuda.is_available(),
        seed=config.seed,
    )
    factory = environment_factory("LifelongDB-v0", max_turns=config.max_turns)
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=task_dataset(factory, seed=config.seed),  # rows: prompt, task_index
        environment_factory=factory,
    )
    trainer.train()
    for entry in trainer.state.log_history:
        if "rewards/LifelongDB/mean" in entry:
            print(
                f"step {entry['step']}: environment reward {entry['rewards/LifelongDB/mean']:.3f}"
            )


def parse_args() -> Config:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field in fields(Config):
        flag = "--" + field.name.replace("_", "-")
        if field.type == "bool":
            parser.add_argument(flag, action="store_true")
        else:
            kind = {"int": int, "float": float}.get(str(field.type), str)
            parser.add_argument(flag, type=kind, default=field.default)
    config = Config(**vars(parser.parse_args()))
    if not config.model and not config.tiny:
        parser.error("give --model PATH (a tool-calling model) or --tiny")
    return config


if __name__ == "__main__":
    main(parse_args())
