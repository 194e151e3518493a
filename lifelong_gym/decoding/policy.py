"""`TransformersPolicy`: token ids in, token ids out, with the sampling logprob of each token."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lifelong_gym.errors import ModelConfigError

from . import kv_cache
from .chat_tokens import EpisodeTokenizer
from .gguf_file import find_gguf
from .precision import native_bf16
from .sampling import sample

logger = logging.getLogger(__name__)


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
    With `reuse_cache` (default) the key/value states of each batch's sequences are kept
    until the next call, so a session's next turn reads only its new tokens (`KVStore`),
    unless the weights changed in between (`kv_cache.weights_version`).
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
        reuse_cache: bool = True,
    ):
        if temperature < 0 or not 0 < top_p <= 1 or max_new_tokens < 1:
            raise ModelConfigError(
                "temperature must be >= 0, top_p in (0, 1] and max_new_tokens >= 1; got "
                f"{temperature}, {top_p}, {max_new_tokens}"
            )
        self.model, self.tokenizer = load_model(path_or_model, tokenizer, dtype)
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device).eval()
        if self.device.type == "cpu" and dtype == torch.bfloat16 and not native_bf16():
            logger.warning(
                "bfloat16 on a CPU without AVX512-BF16 or AMX is converted to float32 and "
                "back at every operation: dtype=float32 is faster here"
            )
        if chat_template is not None:
            self.tokenizer.chat_template = chat_template
        if not self.tokenizer.chat_template:
            raise ModelConfigError("the tokenizer has no chat template; pass chat_template=")
        self.temperature, self.top_p, self.max_new_tokens = temperature, top_p, max_new_tokens
        self.system_prompt = system_prompt
        self.tokens = EpisodeTokenizer(self.tokenizer, system_prompt)
        self.turns = self.tokens.turns
        self.stop_tokens = stop_tokens_of(self.model, self.tokens)
        self.pad_id = _pad_id(self.tokenizer)
        self.context_window: int = getattr(self.model.config, "max_position_embeddings", 1 << 30)
        self.generator = torch.Generator().manual_seed(seed)
        self.reuse_cache = reuse_cache
        self.kv = kv_cache.KVStore()
        with torch.inference_mode():
            probe = torch.tensor([[self.pad_id]], dtype=torch.long, device=self.device)
            layers = self.model(input_ids=probe, use_cache=True).cache.layers
        if not kv_cache.reusable(layers):
            raise ModelConfigError(
                "TransformersPolicy needs a model with full attention in every layer (its "
                f"key/value states are cut and joined per row); this one caches {layers}"
            )

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

        First every prompt but its last token is read into key/value states, row by row
        and without padding (`_read`), starting from states read before where it can; then all
        rows decode together, from their last prompt token on, and a row whose reply ended
        leaves the batch. A row of the batch cache is `[pads][the row's states]`,
        positions counted from the row's first token.
        """
        if not prompts:
            return []
        lengths = [len(p) - 1 for p in prompts]
        limits = [min(self.max_new_tokens, self.context_window - len(p)) for p in prompts]
        weights = kv_cache.weights_version(self.model)
        cache = kv_cache.assemble(self._read(prompts, weights), lengths, room=max(0, *limits))
        width = max(lengths)
        mask = torch.zeros((len(prompts), width + 1), dtype=torch.long)
        for row, length in enumerate(lengths):
            mask[row, width - length :] = 1
        mask = mask.to(self.device)
        ids = torch.tensor([[p[-1]] for p in prompts], dtype=torch.long, device=self.device)
        positions = torch.tensor([[n] for n in lengths], dtype=torch.long, device=self.device)
        replies = [Generation([], [], None) for _ in prompts]
        rows = list(range(len(prompts)))  # the reply that each row of the tensors is for
        kept: list[kv_cache.Cached] = []
        while rows:
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
            going = []
            for at, (row, token, logprob) in enumerate(
                zip(rows, tokens.tolist(), logprobs.tolist(), strict=True)
            ):
                reply = replies[row]
                if len(reply.token_ids) < limits[row]:
                    reply.token_ids.append(token)
                    reply.logprobs.append(logprob)
                    if token in self.stop_tokens:
                        reply.stop_token = token
                if reply.stop_token is None and len(reply.token_ids) < limits[row]:
                    going.append(at)
            if len(going) < len(rows):  # ended rows leave the batch, their states kept
                if self.reuse_cache:
                    kept += [
                        kv_cache.row_entry(
                            cache, at, mask[at], list(prompts[row]) + replies[row].token_ids
                        )
                        for at, row in enumerate(rows)
                        if at not in going
                    ]
                index = torch.tensor(going, dtype=torch.long, device=self.device)
                if going:
                    cache.batch_select_indices(index)
                mask, tokens, positions = mask[index], tokens[index], positions[index]
                rows = [rows[at] for at in going]
            ids = tokens[:, None].to(self.device)
            mask = torch.cat([mask, torch.ones_like(ids)], dim=1)
            positions = positions + 1
        if self.reuse_cache:
            self.kv.keep(kept, weights)
        return replies

    def _read(
        self, prompts: Sequence[Sequence[int]], weights: tuple[int, int, int]
    ) -> list[kv_cache.Cached | None]:
        """Each prompt's states but for its last token, from the longest prefix already read:
        one kept from the last call (`KVStore.match`) or one read earlier in this call (the
        instructions that every DB prompt starts with; a GRPO group's whole prompt), so a
        token that several prompts share is read once. The rest is read row by row (a long
        tail is a matrix product already; padding would only add). States kept from the last
        call count only if the same `weights` computed them."""
        read = kv_cache.KVStore()
        read.keep(list(self.kv.valid_for(weights)))
        found: list[kv_cache.Cached | None] = []
        for prompt in prompts:
            source, length = read.match(np.asarray(prompt, dtype=np.int64))
            if length < len(prompt) - 1:
                source = self._extend(source, length, prompt[:-1])
                read.entries.append(source)
            found.append(source)
        return found

    def _extend(self, source: kv_cache.Cached | None, length: int, ids: Sequence[int]):
        """The states of `ids`, of which the first `length` are `source`'s."""
        cache = kv_cache.assemble([source], [length], room=len(ids) - length)
        rest = torch.tensor([ids[length:]], dtype=torch.long, device=self.device)
        out = self.model(input_ids=rest, cache=cache, use_cache=True, logits_to_keep=1)
        return kv_cache.prefix_entry(ids, out.cache)


def load_model(
    path_or_model: Any, tokenizer: Any = None, dtype: torch.dtype = torch.float32
) -> tuple[Any, Any]:
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


def stop_tokens_of(model: Any, tokens: EpisodeTokenizer) -> set[int]:
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
