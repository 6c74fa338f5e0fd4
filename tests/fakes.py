"""Test doubles shared by the rule tests: a deterministic, model-free embedder."""

from __future__ import annotations

import re
import zlib

import numpy as np
import snowballstemmer

STEMMER = snowballstemmer.stemmer("english")


class StemBagEmbedder:
    """A stand-in for MiniLM: a normalised bag of Snowball stems hashed into 256 dimensions. Restatements get
    equal vectors (so every tie the linker must break shows up), and "Ana lives in Vienna" and "We live in
    Berlin" share "live" (a tempting cross-subject frame match)."""

    dim = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for stem in STEMMER.stemWords(re.findall(r"[a-z0-9]+", text.lower())):
                out[i, zlib.crc32(stem.encode()) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[i]))
            if norm:
                out[i] /= norm
            else:
                out[i, 0] = 1.0
        return out
