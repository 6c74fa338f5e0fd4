"""The default embedder runs the packaged MiniLM through onnxruntime and gives sentence-transformers' vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from memory_graph.embeddings import OnnxEmbedder, SentenceTransformerEmbedder, get_embedder, mean_pool


def test_mean_pool_ignores_padding_and_normalises() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 0.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    pooled = mean_pool(hidden, mask)
    assert pooled.shape == (1, 2) and pooled.dtype == np.float32
    np.testing.assert_allclose(pooled, [[1.0, 0.0]], atol=1e-6)


def test_onnx_vectors_match_sentence_transformers() -> None:
    onnx = get_embedder("")
    assert isinstance(onnx, OnnxEmbedder), "the default embedder should run through onnxruntime"
    reference = SentenceTransformerEmbedder("")
    texts = [
        "I moved to York last month.",
        "",
        "x",
        "Our standup moved to Tuesday at 10am and Priya will run it from now on.",
        # longer than the 256-token truncation: both must cut at the same place
        " ".join(f"word{i} sentence about the renovation budget" for i in range(120)),
        "Café ünïcödé — 東京 ✓",
    ]
    got, want = onnx.embed(texts), reference.embed(texts)
    assert got.shape == want.shape == (len(texts), 384)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
    # order is kept although batches are sorted by length inside
    assert np.allclose(onnx.embed(texts[::-1])[::-1], got, atol=1e-5)
    assert onnx.embed([]).shape == (0, 384)


def test_a_damaged_cache_file_is_exported_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Breaker run: a truncated export made every later process fall back to torch (5 s more) and warn again."""
    from memory_graph import embeddings

    get_embedder("")  # the real export exists in the user's cache from here on
    real = embeddings.onnx_path_for(embeddings.packaged_model_path())
    monkeypatch.setenv("MEMORY_GRAPH_CACHE", str(tmp_path))
    damaged = embeddings.onnx_path_for(embeddings.packaged_model_path())
    assert damaged != real
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"not an onnx file")
    exports: list[Path] = []
    monkeypatch.setattr(embeddings, "export_onnx",
                        lambda model_dir, dest: exports.append(dest) or shutil.copyfile(real, dest))
    made = embeddings._default_embedder()
    assert isinstance(made, OnnxEmbedder) and exports == [damaged]
    assert made.embed(["x"]).shape == (1, 384)
