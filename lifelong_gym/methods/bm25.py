"""BM25 (Robertson and Zaragoza's Okapi weighting) over words: lexical relevance, no model.

Task texts name tables, columns, commands and entities; a word that few stored texts
share (a table name) says more about relevance than one that all share ("the", "table"),
which is what BM25's inverse document frequency weighs. Pure Python, deterministic.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

K1 = 1.2
B = 0.75
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The lower-case words and numbers of `text` (snake_case names split at `_`)."""
    return _WORD.findall(text.lower())


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """The BM25 score of each document for `query` (0 when they share no word)."""
    bags = [Counter(words(d)) for d in documents]
    if not bags:
        return []
    average = sum(sum(bag.values()) for bag in bags) / len(bags) or 1.0
    holding = Counter(word for bag in bags for word in bag)
    scores = []
    for bag in bags:
        length = sum(bag.values())
        score = 0.0
        for word in set(words(query)):
            frequency = bag.get(word, 0)
            if not frequency:
                continue
            idf = math.log(1 + (len(bags) - holding[word] + 0.5) / (holding[word] + 0.5))
            norm = K1 * (1 - B + B * length / average)
            score += idf * frequency * (K1 + 1) / (frequency + norm)
        scores.append(score)
    return scores
