"""`TransformersPolicy`: token ids in, token ids out, with the sampling logprob of each token."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lifelong_gym.agents.models.gguf import find_gguf
from lifelong_gym.errors import ModelConfigError

from .chat_tokens import EpisodeTokenizer
from .sampling import sample


@dataclass
class Generation:
    """One reply as generated: its token ids (the stop token included) and their logprobs."""

    token_ids: list[int]
    logprobs: list[float]
    stop_token: int | None
    """The end-of-turn token that ended the reply (its last id), or None when cut by length."""

    @property
    def content_ids(self) -> list[int]:
        """The reply's tokens without the stop token."""
        return self.token_ids[:-1] if self.stop_token is not None else self.token_ids


class TransformersPolicy:
    """A causal LM that continues token sequences, many at once (left padding, KV cache).

    `path_or_model` is a Hugging Face model folder, a `.gguf` file (or a folder holding
    one), or a loaded `PreTrainedModel` (a `peft` model too) given with its `tokenizer`.
    Replies are sampled with `temperature` and `top_p` (0 = greedy) for at most
    `max_new_tokens` and stop at an EOS or end-of-turn token. Generated tokens are kept as
    generated; observations are added as the chat template's tokens (see `ChatTurns`).
    """

    def __init__(
        self,
        path_or_model: str | Path | Any,
        tokenizer: Any = None,
        *,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_new_tokens: int = 256,
        system_prompt: str | None = None,
        chat_template: str | None = None,
        dtype: torch.dtype = torch.float32,
        device: str | None = None,
        seed: int = 0,
    ):
        if temperature < 0 or not 0 < top_p <= 1 or max_new_tokens < 1:
            raise ModelConfigError(
                "temperature must be >= 0, top_p in (0, 1] and max_new_tokens >= 1; got "
                f"{temperature}, {top_p}, {max_new_tokens}"
            )
        self.model, self.tokenizer = _load(path_or_model, tokenizer, dtype)
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device).eval()
        if chat_template is not None:
            self.tokenizer.chat_template = chat_template
        if not self.tokenizer.chat_template:
            raise ModelConfigError("the tokenizer has no chat template; pass chat_template=")
        self.temperature, self.top_p, self.max_new_tokens = temperature, top_p, max_new_tokens
        self.system_prompt = system_prompt
        self.tokens = EpisodeTokenizer(self.tokenizer, system_prompt)
        self.turns = self.tokens.turns
        self.stop_tokens = _stop_tokens(self.model, self.tokens)
        self.pad_id = _pad_id(self.tokenizer)
        self.context_window: int = getattr(self.model.config, "max_position_embeddings", 1 << 30)
        self.generator = torch.Generator().manual_seed(seed)

    # -- chat template tokens ------------------------------------------------------------

    def prompt_ids(self, observation: str) -> list[int]:
        """The first prompt: the chat template applied to `observation`, ready for a reply."""
        return self.tokens.prompt_ids(observation)

    def observation_ids(self, reply: Generation, observation: str) -> list[int]:
        """The template's tokens after `reply`: its turn end, then a user turn and the
        generation prompt."""
        return self.tokens.observation_ids(reply.stop_token, observation)

    def end_ids(self, reply: Generation) -> list[int]:
        """The template's tokens that close the last reply of an episode."""
        return self.tokens.end_ids(reply.stop_token)

    def reply_text(self, reply: Generation) -> str:
        """The reply as the environment receives it: its tokens decoded, the stop token dropped."""
        return self.tokens.reply_text(reply.content_ids)

    # -- generation ----------------------------------------------------------------------

    @torch.inference_mode()
    def generate(self, prompts: Sequence[Sequence[int]]) -> list[Generation]:
        """One reply per token sequence, all sampled together in one batch.

        The longest token prefix that every prompt shares (a DB prompt's instructions) is
        read once and its key/value cache copied to every row; the rest of each prompt is
        left-padded behind it, so a padded row is `[shared prefix][pads][own tokens]`.
        """
        if not prompts:
            return []
        shared = _shared_prefix(prompts) if len(prompts) > 1 else 0
        cache = None
        if shared:
            prefix = torch.tensor([prompts[0][:shared]], dtype=torch.long, device=self.device)
            cache = self.model(input_ids=prefix, use_cache=True, logits_to_keep=1).cache
            cache.batch_repeat_interleave(len(prompts))
        tails = [prompt[shared:] for prompt in prompts]
        longest = max(len(t) for t in tails)
        ids = torch.full((len(prompts), longest), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), shared + longest), dtype=torch.long)
        mask[:, :shared] = 1
        for row, tail in enumerate(tails):
            ids[row, longest - len(tail) :] = torch.tensor(tail, dtype=torch.long)
            mask[row, shared + longest - len(tail) :] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, shared:]
        limits = [min(self.max_new_tokens, self.context_window - len(p)) for p in prompts]
        replies = [Generation([], [], None) for _ in prompts]
        running = [limit > 0 for limit in limits]
        while any(running):
            out = self.model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                cache=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            cache = out.cache
            tokens, logprobs = sample(
                out.logits[:, -1, :], self.temperature, self.top_p, self.generator
            )
            for row, reply in enumerate(replies):
                if not running[row]:
                    continue
                token = int(tokens[row])
                reply.token_ids.append(token)
                reply.logprobs.append(float(logprobs[row]))
                if token in self.stop_tokens:
                    reply.stop_token = token
                running[row] = reply.stop_token is None and len(reply.token_ids) < limits[row]
            ids = tokens[:, None].to(self.device)
            mask = torch.cat([mask, torch.ones_like(ids)], dim=1)
            positions = positions[:, -1:] + 1
        return replies


def _shared_prefix(prompts: Sequence[Sequence[int]]) -> int:
    """How many leading tokens all `prompts` share, leaving each at least one token of its own
    (the model must read a row's last token to predict its first reply token)."""
    shortest = min(len(p) for p in prompts)
    first = prompts[0]
    shared = 0
    while shared < shortest - 1 and all(p[shared] == first[shared] for p in prompts):
        shared += 1
    return shared


def _load(path_or_model: Any, tokenizer: Any, dtype: torch.dtype) -> tuple[Any, Any]:
    """The model and tokenizer from a folder or GGUF file, or the given model with its tokenizer."""
    if not isinstance(path_or_model, str | Path):
        if tokenizer is None:
            raise ModelConfigError("a loaded model needs its tokenizer: pass tokenizer=")
        return path_or_model, tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path_or_model)
    if not path.exists():
        raise ModelConfigError(f"no model at {path}: give a model folder or a .gguf file")
    gguf = find_gguf(path)
    folder, extra = (gguf.parent, {"gguf_file": gguf.name}) if gguf else (path, {})
    try:
        tokenizer = tokenizer or AutoTokenizer.from_pretrained(folder, **extra)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, **extra)
    except (OSError, ValueError, ImportError) as error:
        raise ModelConfigError(f"cannot load a model from {path}: {error}") from error
    return model, tokenizer


def _stop_tokens(model: Any, tokens: EpisodeTokenizer) -> set[int]:
    """EOS ids of the tokenizer and the generation config, and the template's turn-end token."""
    stops = tokens.turn_end_ids()
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if isinstance(configured, int):
        stops.add(configured)
    elif configured is not None:
        stops.update(int(v) for v in configured)
    if not stops:
        raise ModelConfigError("the tokenizer names no EOS token to stop a reply at")
    return stops


def _pad_id(tokenizer: Any) -> int:
    pad = tokenizer.pad_token_id
    return int(pad if pad is not None else tokenizer.eos_token_id)
