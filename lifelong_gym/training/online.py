"""`LoraLearner`: LoRA adapters on a local transformers model, trained while it acts.

The online-training method (`lifelong_gym.methods.online_training`) decides what to learn
and when; this object owns the adapters and their optimizer and makes the steps, supervised
(`sft`) or GRPO's (`grpo`). It wraps the model of an owner that holds `model` and
`tokenizer` (the `hf:` agent's `TransformersModel`, or a `TransformersPolicy`) with peft
LoRA adapters in place, so every later generation, the agent's, a vote's or a probe's,
reads the updated weights. The losses are the project's: conversations become
`TokenEpisode`s whose loss mask is the chat template's assistant mask
(`training_chat_template`), scored by `grpo.token_logprobs` (and `grpo.grpo_loss`).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from lifelong_gym.errors import ConfigError
from lifelong_gym.extras import import_extra

from .chat_templates import training_chat_template
from .episode import TokenEpisode
from .grpo import EpisodeBatch, group_advantages, grpo_loss, masked_mean, token_logprobs

ADAPTER, ADAM = "adapter/", "adam/"  # key prefixes of the saved tensors


class LoraLearner:
    """LoRA of rank `rank` (scale `alpha / rank`) on `targets` of the last `layers` layers
    (0: all), trained with AdamW at `lr` on conversations cut at `max_tokens` tokens.

    The adapters start as peft starts them (B = 0: the model is unchanged until the first
    step), their random A drawn from `seed` without touching torch's global generator.
    """

    def __init__(
        self,
        owner: Any,
        *,
        rank: int = 8,
        alpha: int = 16,
        targets: Sequence[str] = ("q_proj", "v_proj"),
        layers: int = 4,
        lr: float = 1e-4,
        max_tokens: int = 2048,
        seed: int = 0,
    ):
        peft = import_extra("peft", "train", "online training")
        self.owner, self.tokenizer = owner, owner.tokenizer
        self.template = training_chat_template(self.tokenizer)
        self.max_tokens = max_tokens
        base = owner.model
        if isinstance(base, peft.PeftModel):
            raise ConfigError("the model has adapters already: give online_training once")
        depth = base.config.num_hidden_layers
        config = peft.LoraConfig(
            r=rank,
            lora_alpha=alpha,
            lora_dropout=0.0,
            target_modules=list(targets),
            layers_to_transform=list(range(max(0, depth - layers), depth)) if layers else None,
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            try:
                owner.model = peft.get_peft_model(base, config).eval()
            except ValueError as error:  # a target the model lacks
                raise ConfigError(f"LoRA targets {list(targets)}: {error}") from None
        self.model = owner.model
        self.parameters = {n: p for n, p in self.model.named_parameters() if p.requires_grad}
        self.optimizer = torch.optim.AdamW(list(self.parameters.values()), lr=lr)
        self.pad_id = self.tokenizer.pad_token_id or 0

    # -- learning -----------------------------------------------------------------------

    def sft(self, batches: list[list[list[dict[str, Any]]]]) -> dict[str, Any]:
        """One AdamW step per batch of conversations, the loss the token mean of the
        assistant's tokens' negative logprobs; the examples, tokens, seconds and mean loss."""
        started = time.perf_counter()
        examples = tokens = 0
        losses = []
        for conversations in batches:
            episodes = [self.episode(messages) for messages in conversations]
            episodes = [e for e in episodes if e.generated_tokens]
            if not episodes:
                continue
            batch = EpisodeBatch.from_episodes(episodes, self.pad_id)
            with torch.enable_grad():
                loss = -masked_mean(token_logprobs(self.model, batch), batch.loss_mask)
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
            examples += len(episodes)
            tokens += sum(len(e.input_ids) for e in episodes)
            losses.append(float(loss.detach()))
        return {
            "steps": len(losses),
            "examples": examples,
            "tokens": tokens,
            "loss": sum(losses) / len(losses) if losses else None,
            "seconds": round(time.perf_counter() - started, 3),
        }

    def grpo(
        self,
        conversations: list[list[dict[str, Any]]],
        rewards: list[float],
        groups: list[int],
        steps: int,
        batch: int,
    ) -> dict[str, Any]:
        """`steps` AdamW steps of GRPO's clipped policy loss (`grpo.grpo_loss`, no KL term)
        on the conversations' last replies, each weighted by its advantage in its group
        (`grpo.group_advantages`), `batch` conversations per forward pass; the examples,
        tokens, seconds and mean loss.

        The replies were sampled with the weights as they are now, so the first step's
        logprobs serve as the old ones of the ratio. A reply of advantage 0 (a group whose
        rewards are all equal) is left out: it has no gradient.
        """
        started = time.perf_counter()
        advantages = group_advantages(rewards, groups)
        episodes = [self.episode(messages, last_reply=True) for messages in conversations]
        kept = [i for i, e in enumerate(episodes) if e.generated_tokens and advantages[i] != 0]
        token_count = float(sum(episodes[i].generated_tokens for i in kept))
        parts = [
            (
                EpisodeBatch.from_episodes([episodes[i] for i in chunk], self.pad_id),
                advantages[chunk],
            )
            for chunk in (kept[start : start + batch] for start in range(0, len(kept), batch))
        ]
        losses = []
        for step in range(steps if parts else 0):
            self.optimizer.zero_grad(set_to_none=True)
            loss = 0.0
            with torch.enable_grad():
                for part, advantage in parts:
                    new = token_logprobs(self.model, part)
                    if step == 0:
                        part.old_logprobs = new.detach()
                    terms = grpo_loss(new, part, advantage, token_count=token_count)
                    terms.loss.backward()
                    loss += float(terms.loss.detach())
            self.optimizer.step()
            losses.append(loss)
        return {
            "steps": len(losses),
            "examples": len(kept),
            "tokens": sum(len(episodes[i].input_ids) for i in kept),
            "loss": sum(losses) / len(losses) if losses else None,
            "seconds": round(time.perf_counter() - started, 3),
        }

    def episode(self, messages: list[dict[str, Any]], last_reply: bool = False) -> TokenEpisode:
        """A conversation as one episode: its tokens, the assistant's marked for the loss
        (with `last_reply`, only those of its last reply)."""
        encoded = self.tokenizer.apply_chat_template(
            messages,
            chat_template=self.template,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        mask = list(encoded["assistant_masks"])
        if last_reply and any(mask):
            start = len(mask) - mask[::-1].index(1)  # one past the last reply's last token
            while start and mask[start - 1]:
                start -= 1
            mask[:start] = [0] * start
        ids = list(encoded["input_ids"])[: self.max_tokens]
        mask = mask[: self.max_tokens]
        return TokenEpisode(
            prompt_ids=[], completion_ids=ids, loss_mask=mask, logprobs=[0.0] * len(ids)
        )

    def logprob(self, messages: list[dict[str, Any]], last_reply: bool = False) -> float:
        """The summed logprob of the assistant's tokens of a conversation (with `last_reply`,
        of its last reply's): what a test or a probe reads to see the weights change."""
        batch = EpisodeBatch.from_episodes([self.episode(messages, last_reply)], self.pad_id)
        with torch.no_grad():
            return float(token_logprobs(self.model, batch).sum())

    # -- the snapshot -------------------------------------------------------------------

    def tensors(self) -> dict[str, torch.Tensor]:
        """The adapters' weights and the optimizer's state, as named tensors."""
        saved = {ADAPTER + n: p.detach().clone().contiguous() for n, p in self.parameters.items()}
        names = list(self.parameters)
        for index, values in self.optimizer.state_dict()["state"].items():
            for key, value in values.items():
                saved[f"{ADAM}{names[index]}/{key}"] = torch.as_tensor(value).clone().contiguous()
        return saved

    def load_tensors(self, saved: dict[str, torch.Tensor]) -> None:
        """Take back what `tensors()` returned: the same weights and optimizer, bit for bit."""
        names = list(self.parameters)
        missing = [n for n in names if ADAPTER + n not in saved]
        if missing:
            raise ConfigError(f"the saved adapters lack {missing[0]} (another model or LoRA?)")
        with torch.no_grad():
            for name, parameter in self.parameters.items():
                parameter.copy_(saved[ADAPTER + name])
        state: dict[int, dict[str, torch.Tensor]] = {}
        for key, value in saved.items():
            if key.startswith(ADAM):
                name, _, field = key[len(ADAM) :].rpartition("/")
                state.setdefault(names.index(name), {})[field] = value.clone()
        groups = self.optimizer.state_dict()["param_groups"]
        self.optimizer.load_state_dict({"state": state, "param_groups": groups})

    def save(self, path: Path) -> str:
        """Write `tensors()` to `path` (safetensors, atomically); its SHA-256."""
        from safetensors.torch import save

        data = save(self.tensors())
        temporary = path.with_name(f".{path.name}.tmp")
        with temporary.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        return hashlib.sha256(data).hexdigest()

    def load(self, path: Path, sha256: str | None = None) -> None:
        """Load what `save` wrote, checking its SHA-256 when given."""
        from safetensors.torch import load

        try:
            data = path.read_bytes()
        except OSError as error:
            raise ConfigError(f"cannot read the saved adapters {path}: {error}") from None
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise ConfigError(f"{path} is not the file the run's state names (its hash differs)")
        self.load_tensors(load(data))
