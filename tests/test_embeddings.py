"""The default embedder runs the packaged MiniLM through onnxruntime and gives sentence-transformers' vectors."""

from __future__ import annotations

import numpy as np

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
