"""A Gymnasium Text space whose charset is all of Unicode."""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory

UNICODE_SIZE = 0x110000
# What `sample` draws from: printable ASCII plus a few letters outside it, so that random
# actions exercise parsing of prose and of non-ASCII text alike.
_SAMPLE_ALPHABET = tuple(string.printable) + tuple("éßøλжあ中…—€")


class _CodePoints(Sequence[str]):
    """Every Unicode code point, as a set and a sequence, without materialising 1.1M strings."""

    def __len__(self) -> int:
        return UNICODE_SIZE

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return chr(index)

    def __contains__(self, char: object) -> bool:
        return isinstance(char, str) and len(char) == 1

    def __iter__(self) -> Iterator[str]:
        return (chr(i) for i in range(UNICODE_SIZE))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _CodePoints)

    def __hash__(self) -> int:
        return hash(_CodePoints)


_CODE_POINTS = _CodePoints()


class UnicodeText(spaces.Text):
    """Text of up to `max_length` characters, any Unicode character allowed.

    Gymnasium's `Text` defaults to 62 alphanumerics and stores its charset as a set; prose
    and code need every character. Vector environments' shared memory stores this space
    as int32 code points, padded with `0x110000`.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None):
        super().__init__(max_length=max_length, min_length=min_length, charset="a", seed=seed)
        self._char_set = _CODE_POINTS  # type: ignore[assignment]
        self._char_list = _CODE_POINTS  # type: ignore[assignment]

    def character_index(self, char: str) -> np.int32:
        """The code point of `char`."""
        return np.int32(ord(char))

    @property
    def characters(self) -> str:
        """A description of the charset (it is too large to spell out)."""
        return "<all of Unicode>"

    def contains(self, x: Any) -> bool:
        """Whether `x` is a string of an allowed length."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random string of printable characters (masks are not supported)."""
        if mask is not None or probability is not None:
            raise NotImplementedError("UnicodeText.sample does not take masks")
        high = min(self.max_length, 200)
        length = int(self.np_random.integers(self.min_length, max(high, self.min_length) + 1))
        picks = self.np_random.integers(0, len(_SAMPLE_ALPHABET), size=length)
        return "".join(_SAMPLE_ALPHABET[i] for i in picks)

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )


class SharedTextBatch(Sequence[str]):
    """The texts of a vector env's shared memory, decoded when read.

    Gymnasium reads Text from shared memory once, into a tuple, when the vector env is
    built, so later steps would return stale text; this view reads the current contents.
    A deep copy (what `AsyncVectorEnv(copy=True)` returns) is a plain tuple.
    """

    def __init__(self, space: UnicodeText, shared_memory: Any, n: int):
        self._rows = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape(
            n, space.max_length
        )

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        row = self._rows[index]
        return "".join(map(chr, row[row < UNICODE_SIZE].tolist()))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(tuple(self))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_text(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedTextBatch:
    return SharedTextBatch(space, shared_memory, n)
