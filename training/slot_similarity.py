"""How similar (packaged MiniLM cosine) a statement and the turn that changes it are, against other turns.

    python -m training.slot_similarity

Reads the annotated conversations of the training writers (not ``train.TEST_WRITERS``): for each annotated change,
the cosine of the target turn and the changing turn (``pos``); for 60 random pairs of user turns per conversation
that are not annotated changes, their cosine (``neg``). Prints percentiles and the share of each at or above a few
cut-offs: the measurement behind ``memory_graph.retrieval.SLOT_SIMILARITY``.
"""

from __future__ import annotations

import random

import numpy as np

from memory_graph.embeddings import get_embedder
from training.corpus_io import changes, read_conversations
from training.train import TEST_WRITERS


def main() -> None:
    embedder = get_embedder()
    pos: list[float] = []
    neg: list[float] = []
    rng = random.Random(0)
    for conv in read_conversations():
        if conv.writer in TEST_WRITERS:
            continue
        vectors = embedder.embed([str(t["text"]) for t in conv.turns])
        annotated = {(a, b) for a, b, _ in changes(conv)}
        pos += [float(vectors[a] @ vectors[b]) for a, b in annotated]
        users = [i for i, t in enumerate(conv.turns) if t.get("speaker") == "user"]
        for _ in range(60):
            a, b = sorted(rng.sample(users, 2))
            if (a, b) not in annotated:
                neg.append(float(vectors[a] @ vectors[b]))
    p, n = np.asarray(pos), np.asarray(neg)
    print(f"changes: {len(p)}, other pairs: {len(n)}")
    print("changes, percentiles 10/25/50/75:", np.percentile(p, [10, 25, 50, 75]).round(2))
    print("other pairs, percentiles 50/75/90/95:", np.percentile(n, [50, 75, 90, 95]).round(2))
    for cut in (0.4, 0.45, 0.5, 0.55, 0.6):
        print(f"cosine >= {cut}: changes {(p >= cut).mean():.2f}, other pairs {(n >= cut).mean():.3f}")


if __name__ == "__main__":
    main()
