"""A supervised warm start: SmolLM2 learns a task set from the oracle's demonstrations, on CPU.

One file, read top to bottom: the config, the demonstrations, the model, TRL's
`SFTTrainer` with the loss on the assistant's tokens only, the held-out evaluation, and
the saved folder (which `lifelong-gym run --agent hf:FOLDER`, `TransformersPolicy(FOLDER)`
and `examples/grpo_train.py --model FOLDER` load).

    lifelong-gym model smollm2 models/smollm2          # once: the GGUF file as a folder
    lifelong-gym generate db --split train --count 2000 --output tasks/db --name train
    lifelong-gym generate db --split validation --count 200 --exclude tasks/db/train.jsonl \\
        --output tasks/db --name validation
    lifelong-gym export sft --env LifelongDB-v0 --tasks tasks/db/train.jsonl --out sft/db-train
    python examples/sft_warmstart.py --model models/smollm2 --data sft/db-train \\
        --eval-tasks tasks/db/validation.jsonl --output models/smollm2-sft

The evaluation plays each held-out task once in the standard environment (the benchmark's
prompt, its turn limit, its binary reward), greedily, and prints success with its 95%
interval, before training (`--eval-before`) and after, and per skill. `--eval-tasks` takes
several task files: the first is the held-out split, the others are measured after training
beside it (tasks nobody here wrote, to see what transfers:
`--eval-tasks tasks/db/validation.jsonl ../shared/external/agentbench/data/dbbench/standard.jsonl`).
`--data` takes several exports too, shuffled together (by `--seed`): plain demonstrations
and a method's (`lifelong-gym export sft --method experience_replay:n=4`), so that the model
learns to read replayed experiences as well as to work without them. The environment is the
one the demonstrations were exported from; `--eval-env-arg KEY=VALUE` gives it arguments
(a generated KG's graph: `--eval-env-arg graph=tasks/kg/graph.nt.gz`). `--eval-episodes 0`
plays every task of each set; `--eval-only` measures `--model` on `--eval-tasks` without
training (name the env with `--env-id` when there is no `--data`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from datasets import concatenate_datasets, load_dataset
from transformers import HfArgumentParser, TrainerCallback
from trl import SFTConfig, SFTTrainer

from lifelong_gym.agents.models.gguf import smollm2_path
from lifelong_gym.arguments import parse_flag_assignments
from lifelong_gym.decoding.policy import load_model
from lifelong_gym.decoding.precision import native_bf16
from lifelong_gym.training import TransformersPolicy
from lifelong_gym.training.chat_templates import training_chat_template
from lifelong_gym.training.evaluation import HeldOutResult, evaluate_policy
from lifelong_gym.training.sft_export import METADATA_FILE


@dataclass
class Config:
    model: str = ""  # a model folder (`lifelong-gym model smollm2 DIR`); empty: SmolLM2's GGUF
    # folders written by `lifelong-gym export sft` (several: mixed, e.g. plain and a method's)
    data: list[str] = field(default_factory=list)
    output: str = "runs/sft-warmstart"  # the trained model's folder
    env_id: str = ""  # empty: the env the demonstrations were exported from
    seed: int = 0
    threads: int = 2  # torch threads
    demonstrations: int = 0  # use the first this many rows (0: all)
    # optimisation
    epochs: float = 1.0
    learning_rate: float = 2e-4
    # one episode a forward: no padding, so attention takes its causal fast path (on this
    # CPU 270 tokens/s, against 200 for 4 padded episodes a forward)
    batch_size: int = 1
    grad_accumulation: int = 8
    warmup_ratio: float = 0.05
    max_length: int = 2048  # tokens; a DB episode of SmolLM2 is about 550 to 800
    # `--bf16 true/false`; unset: bf16 autocast where the CPU computes in bf16 (AVX512-BF16, AMX:
    # 2.5x faster than float32 there), float32 elsewhere (3x faster than emulated bf16)
    bf16: bool | None = None
    lora_rank: int = 0  # 0: every weight is trained; > 0: LoRA adapters, merged when saved
    time_budget_minutes: float = 0.0  # stop training after this long (0: no limit)
    # held-out evaluation
    # task files of the env: the first is the held-out set (no text shared with the training
    # tasks), measured before and after; the others (tasks nobody here wrote) after training
    eval_tasks: list[str] = field(default_factory=list)
    eval_env_args: list[str] = field(default_factory=list)  # KEY=VALUE arguments of the env
    eval_episodes: int = 100
    eval_before: bool = False
    eval_only: bool = False  # measure --model on --eval-tasks, no training
    eval_envs: int = 8
    max_new_tokens: int = 256


def evaluate(model, tokenizer, config: Config, tasks: str, label: str) -> HeldOutResult:
    """Greedy held-out success in the standard environment, printed with its interval.

    The weights stay in float32, as `--agent hf:FOLDER` runs them on a CPU.
    """
    policy = TransformersPolicy(
        model.eval(),
        tokenizer,
        temperature=0.0,
        max_new_tokens=config.max_new_tokens,
    )
    started = time.monotonic()
    result = evaluate_policy(
        policy,
        config.env_id,
        tasks=tasks,
        episodes=config.eval_episodes,
        num_envs=config.eval_envs,
        **parse_flag_assignments("--env-arg", config.eval_env_args),
    )
    minutes = (time.monotonic() - started) / 60
    print(f"{label}: {result.summary()}  ({len(result.episodes) / minutes:.1f} episodes/min)")
    return result


class TimeBudget(TrainerCallback):
    """Stops training once `minutes` have passed since it began."""

    def __init__(self, minutes: float):
        self.seconds = minutes * 60

    def on_train_begin(self, args, state, control, **kwargs):
        self.started = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        if self.seconds and time.monotonic() - self.started > self.seconds:
            print(f"time budget reached after {state.global_step} steps")
            control.should_training_stop = True


def demonstrated_env(config: Config) -> str:
    """The env the demonstrations were exported from (`--env-id` and every folder of
    `--data` must agree with it)."""
    if not config.data and config.eval_only and config.env_id:
        return config.env_id
    if not config.data:
        raise SystemExit("--data: name the folder(s) `lifelong-gym export sft` wrote")
    exported = set()
    for folder in config.data:
        metadata = Path(folder) / METADATA_FILE
        if metadata.is_file():
            exported.add(json.loads(metadata.read_text())["env_id"])
        elif not config.env_id:
            raise SystemExit(f"{folder} has no {METADATA_FILE}: name the env with --env-id")
    if len(exported) > 1:
        raise SystemExit(
            f"--data: the folders hold demonstrations of {', '.join(sorted(exported))}"
        )
    (env_id,) = exported or {config.env_id}
    if config.env_id and config.env_id != env_id:
        raise SystemExit(f"--env-id {config.env_id}: the demonstrations are of {env_id}")
    return env_id


def mixed_demonstrations(config: Config):
    """The demonstrations of every `--data` folder, shuffled together (by `--seed`) when
    there are several, then the first `--demonstrations` of them."""
    parts = [
        load_dataset(folder, split="train").select_columns(["messages"]) for folder in config.data
    ]
    dataset = parts[0] if len(parts) == 1 else concatenate_datasets(parts).shuffle(seed=config.seed)
    if config.demonstrations:
        dataset = dataset.select(range(min(config.demonstrations, len(dataset))))
    return dataset


def train(config: Config) -> None:
    started = time.monotonic()
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    config.env_id = demonstrated_env(config)
    if config.eval_only and not config.eval_tasks:
        raise SystemExit("--eval-only: name the task files to measure with --eval-tasks")
    model, tokenizer = load_model(config.model or smollm2_path())
    own_template = tokenizer.chat_template
    if config.eval_only:
        write_summary(config, evaluate_all(model, tokenizer, config), {"trained": False})
        print(f"wall time {(time.monotonic() - started) / 60:.1f} min")
        return
    dataset = mixed_demonstrations(config)
    print(f"{len(dataset)} demonstrations; model loaded at {time.monotonic() - started:.0f} s")

    results = {}
    if config.eval_tasks and config.eval_before:
        results["before"] = evaluate(
            model, tokenizer, config, config.eval_tasks[0], "before training"
        )

    peft_config = None
    if config.lora_rank > 0:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=config.lora_rank,
            lora_alpha=2 * config.lora_rank,
            lora_dropout=0.0,
            target_modules="all-linear",
        )
    # the loss on the assistant's tokens only: the template with the replies marked
    tokenizer.chat_template = training_chat_template(tokenizer)
    args = SFTConfig(
        output_dir=str(Path(config.output) / "trainer"),
        num_train_epochs=config.epochs,
        learning_rate=config.learning_rate,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accumulation,
        warmup_steps=config.warmup_ratio,  # a float below 1 is a share of the steps
        lr_scheduler_type="cosine",
        max_length=config.max_length,
        assistant_only_loss=True,
        bf16=native_bf16() if config.bf16 is None else config.bf16,
        gradient_checkpointing=False,  # memory is not short here; recomputing costs a third
        use_cpu=True,
        seed=config.seed,
        logging_steps=5,
        include_num_input_tokens_seen="non_padding",
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=0,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=[TimeBudget(config.time_budget_minutes)],
    )
    train_started = time.monotonic()
    output = trainer.train()
    train_seconds = time.monotonic() - train_started
    tokens = int(trainer.state.num_input_tokens_seen or 0)
    print(
        f"trained {trainer.state.global_step} steps in {train_seconds / 60:.1f} min, "
        f"loss {output.training_loss:.4f}"
        + (f", {tokens / train_seconds:.0f} tokens/s" if tokens else "")
    )

    trained = {
        "steps": trainer.state.global_step,
        "train_minutes": train_seconds / 60,
        "training_loss": output.training_loss,
        "input_tokens": tokens,
    }
    model = trainer.model
    if config.lora_rank > 0:
        model = model.merge_and_unload()
    tokenizer.chat_template = own_template
    model.config.use_cache = True  # the trainer turns the KV cache off; generation wants it
    model.save_pretrained(config.output)
    tokenizer.save_pretrained(config.output)
    print(f"saved {config.output}")

    # measured as users load it: the trainer leaves its bf16 autocast wrapped around the
    # model's forward, which would measure a bf16 computation, not the saved float32 folder
    del trainer, model
    model, tokenizer = load_model(config.output)
    results |= evaluate_all(model, tokenizer, config)
    write_summary(config, results, trained)
    print(f"wall time {(time.monotonic() - started) / 60:.1f} min")


def evaluate_all(model, tokenizer, config: Config) -> dict[str, HeldOutResult]:
    """Each `--eval-tasks` set measured, the first under "after", the others under
    "after on PATH", each with its success per skill printed."""
    results = {}
    for position, tasks in enumerate(config.eval_tasks):
        name = "after" if position == 0 else f"after on {tasks}"
        label = "after training" if position == 0 else f"after training, on {tasks}"
        results[name] = evaluate(model, tokenizer, config, tasks, label)
        print("per skill (solved/episodes):")
        for skill, (solved, count) in results[name].per_skill().items():
            print(f"  {skill:<50} {solved:3d}/{count:<3d} {solved / count:.2f}")
    return results


def write_summary(config: Config, results: dict[str, HeldOutResult], trained: dict) -> None:
    """`warmstart.json` in the output folder: the config, the training figures, each result;
    and each result's episodes, to read one by one, in `episodes/NAME.jsonl`."""
    folder = Path(config.output)
    (folder / "episodes").mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    for name, result in results.items():
        stem, taken = episodes_file_stem(name), set(files.values())
        files[name] = next(
            f"episodes/{stem}{suffix}.jsonl"
            for suffix in ("", *(f"-{n}" for n in range(2, len(results) + 2)))
            if f"episodes/{stem}{suffix}.jsonl" not in taken
        )  # two sets of one file name (a/dev.jsonl, b/dev.jsonl) keep their own files
        with (folder / files[name]).open("w", encoding="utf-8") as out:
            for episode in result.episodes:
                fields = ("task_index", "skills", "status", "outcome", "reward", "messages")
                out.write(json.dumps({key: getattr(episode, key) for key in fields}) + "\n")
    summary = {
        "config": asdict(config),
        **trained,
        **{
            name: {
                "success_rate": r.success_rate,
                "solved": r.solved,
                "episodes": len(r.episodes),
                "interval": r.interval,
                "valid_action_rate": r.valid_action_rate,
                "per_skill": r.per_skill(),
                "statuses": r.statuses(),
                "episodes_file": files[name],
            }
            for name, r in results.items()
        },
    }
    (folder / "warmstart.json").write_text(json.dumps(summary, indent=2) + "\n")


def episodes_file_stem(result: str) -> str:
    """The file name of a result's episodes: `after on ../dbbench/dev.jsonl` gives
    `after-on-dev`, `after` gives `after`."""
    when, on, tasks = result.partition(" on ")
    return f"{when}-on-{Path(tasks).name.split('.')[0]}" if on else when


def parse_config() -> Config:
    """The config, with every field settable from the command line (--learning-rate 1e-4)."""
    parser = HfArgumentParser(Config, description=__doc__.splitlines()[0])
    return parser.parse_args_into_dataclasses()[0]


if __name__ == "__main__":
    train(parse_config())
