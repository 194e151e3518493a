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
A batch's cache is built as `RoomyLayer`s: the same layer with room for the tokens still
to come, written in place (a `DynamicLayer` copies every cached state at every token).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from transformers.cache_utils import Cache, DynamicLayer


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


class RoomyLayer(DynamicLayer):
    """A `DynamicLayer` whose states are the first `length` positions of buffers with room
    for more: new states are written in place, and the buffers grow (doubling) only when
    full. `keys` and `values` are views of the used part, as `DynamicLayer`'s tensors are."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, length: int):
        super().__init__()
        self.device, self.is_initialized = keys.device, True
        self._buffers = (keys, values)
        self._use(length)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        """Write the new states after the cached ones; return all of them."""
        start = self.keys.shape[-2]
        end = start + key_states.shape[-2]
        keys, values = self._buffers
        if end > keys.shape[-2]:
            shape = (*keys.shape[:2], max(end, 2 * keys.shape[-2]), keys.shape[-1])
            keys, values = keys.new_empty(shape), values.new_empty(shape)
            keys[:, :, :start], values[:, :, :start] = self.keys, self.values
            self._buffers = (keys, values)
        keys[:, :, start:end], values[:, :, start:end] = key_states, value_states
        self._use(end)
        return self.keys, self.values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep only the rows `indices` (their room included)."""
        length = self.keys.shape[-2]
        self._buffers = tuple(buffer[indices] for buffer in self._buffers)
        self._use(length)

    def _use(self, length: int) -> None:
        keys, values = self._buffers
        self.keys, self.values = keys[:, :, :length], values[:, :, :length]


def prefix_entry(ids: Sequence[int], cache: Cache) -> Cached:
    """The entry for a single sequence read into `cache` (batch of one, no padding)."""
    return Cached(
        np.asarray(ids, dtype=np.int64),
        [layer.keys[0] for layer in cache.layers],
        [layer.values[0] for layer in cache.layers],
    )


def assemble(
    sources: Sequence[Cached | None], lengths: Sequence[int], room: int = 0
) -> Cache | None:
    """One batch cache: row `i` holds the first `lengths[i]` states of `sources[i]`,
    left-padded to the longest (the padding, zeros, is masked out by the caller), with
    room for `room` more tokens a row."""
    width = max(lengths)
    if not width:
        return None
    first = next(s for s, n in zip(sources, lengths, strict=True) if n)
    layers = []
    for layer in range(len(first.keys)):
        heads, _, dim = first.keys[layer].shape
        keys = first.keys[layer].new_empty((len(sources), heads, width + room, dim))
        values = torch.empty_like(keys)
        for row, (source, length) in enumerate(zip(sources, lengths, strict=True)):
            pad = width - length
            keys[row, :, :pad], values[row, :, :pad] = 0, 0
            if length:
                keys[row, :, pad:width] = source.keys[layer][:, :length]
                values[row, :, pad:width] = source.values[layer][:, :length]
        layers.append(RoomyLayer(keys, values, width))
    return Cache(layers=layers)


def row_entry(cache: Cache, row: int, mask: torch.Tensor, ids: Sequence[int]) -> Cached:
    """Row `row`'s states without its padding: the first `len(ids)` of its unmasked
    positions (`mask`, the row's attention mask), for the tokens `ids`."""
    layers = cache.layers
    positions = mask[: layers[0].keys.shape[2]].nonzero().squeeze(1)[: len(ids)]
    return Cached(
        np.asarray(ids[: len(positions)], dtype=np.int64),
        [layer.keys[row].index_select(1, positions) for layer in layers],
        [layer.values[row].index_select(1, positions) for layer in layers],
    )
