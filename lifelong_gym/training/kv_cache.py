"""Key/value caches of the sequences a policy has read, kept to be read again by later prompts.

A multi-turn session's next prompt is its last prompt, the reply generated for it and the
environment's new turn; a new episode's prompt starts with the instructions every other
episode read too. `KVStore` keeps, for each sequence of the last batch, the key/value
states of its tokens (pads dropped), and for a new prompt finds the stored sequence that
shares the longest token prefix with it: the model then reads only the tokens after that
prefix. Rotary position embeddings are already applied to cached keys, and every stored
state was computed at the position its token has in the new prompt, so the reuse is exact
(up to the float rounding of a different batch).

Only caches whose every layer is a plain `DynamicLayer` (full attention, no sliding window,
no recurrent state) can be cut and joined this way; `TransformersPolicy` refuses others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer


@dataclass
class Cached:
    """The key/value states of one token sequence, one `[heads, tokens, head_dim]` pair a layer."""

    ids: np.ndarray
    keys: list[torch.Tensor]
    values: list[torch.Tensor]


def reusable(layers: Sequence[object]) -> bool:
    """Whether a cache's `layers` hold every token's state in order, so rows can be cut and
    joined (plain `DynamicLayer`s: full attention, no sliding window, no recurrent state)."""
    return all(type(layer) is DynamicLayer for layer in layers)


def common_prefix(a: np.ndarray, b: np.ndarray, limit: int) -> int:
    """How many leading tokens `a` and `b` share, at most `limit`."""
    n = min(len(a), len(b), limit)
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if differ.size else n


class KVStore:
    """The caches of the last batch's sequences, matched against the next batch's prompts."""

    def __init__(self) -> None:
        self.entries: list[Cached] = []

    def match(self, prompt: np.ndarray) -> tuple[Cached | None, int]:
        """The stored sequence sharing the longest prefix with `prompt`, and that length
        (leaving the prompt at least one token to read: its last token predicts the reply)."""
        best, length = None, 0
        for entry in self.entries:
            shared = common_prefix(entry.ids, prompt, len(prompt) - 1)
            if shared > length:
                best, length = entry, shared
        return best, length

    def keep(self, entries: list[Cached]) -> None:
        """Replace the stored sequences by `entries` (the batch just generated)."""
        self.entries = entries


def prefix_entry(ids: Sequence[int], cache: DynamicCache) -> Cached:
    """The entry for a single sequence read into `cache` (batch of one, no padding)."""
    return Cached(
        np.asarray(ids, dtype=np.int64),
        [layer.keys[0] for layer in cache.layers],
        [layer.values[0] for layer in cache.layers],
    )


def assemble(sources: Sequence[Cached | None], lengths: Sequence[int]) -> DynamicCache | None:
    """One batch cache: row `i` holds the first `lengths[i]` states of `sources[i]`,
    left-padded to the longest (the padding is masked out by the caller)."""
    width = max(lengths)
    if not width:
        return None
    first = next(s for s, n in zip(sources, lengths, strict=True) if n)
    layers = []
    for layer in range(len(first.keys)):
        heads, _, dim = first.keys[layer].shape
        keys = first.keys[layer].new_zeros((len(sources), heads, width, dim))
        values = torch.zeros_like(keys)
        for row, (source, length) in enumerate(zip(sources, lengths, strict=True)):
            if length:
                keys[row, :, width - length :] = source.keys[layer][:, :length]
                values[row, :, width - length :] = source.values[layer][:, :length]
        layers.append((keys, values))
    return DynamicCache(layers)


def row_entry(cache: DynamicCache, row: int, mask: torch.Tensor, ids: Sequence[int]) -> Cached:
    """Row `row`'s states without its padding: the first `len(ids)` of its unmasked
    positions (`mask`, the row's attention mask), for the tokens `ids`."""
    layers = cache.layers
    positions = mask[: layers[0].keys.shape[2]].nonzero().squeeze(1)[: len(ids)]
    return Cached(
        np.asarray(ids[: len(positions)], dtype=np.int64),
        [layer.keys[row].index_select(1, positions) for layer in layers],
        [layer.values[row].index_select(1, positions) for layer in layers],
    )
