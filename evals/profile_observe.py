"""Per-turn cost of memory-graph against plain Chroma, interleaved in one process (issue 22).

Grows a store and a plain Chroma collection (same embedder object) to ``--size`` turns with ``observe_many`` in
batches of 100 (timed against embed + one ``add`` per batch: the batch ratio), then alternates, turn by turn,
one ``Memory.observe`` and one plain embed + ``add`` (the per-turn ratio), then alternates ``Memory.recall`` with
the unfiltered floor (embed the query + one unfiltered query of a collection holding that user's turns only).
Ratios are the result: the machines are shared and noisy, and both sides see the same noise.

    python -m evals.profile_observe --size 1000 [--profile /tmp/observe.prof] [--recall-profile /tmp/recall.prof]
        [--database-url ... --chroma ...]

``--profile`` profiles the single ``observe`` calls, ``--recall-profile`` the ``recall`` calls only (cProfile; the
floor's queries between them are left out).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from evals.bench import NAMES, SERVICES, generated_turns, locomo_texts

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
BATCH = 100


def run(
    size: int,
    single: int = 60,
    queries: int = 40,
    profile: Path | None = None,
    database_url: str = "",
    recall_profile: Path | None = None,
    chroma_url: str = "",
    data: Path = DATA,
) -> dict[str, Any]:
    """Measure (see the module docstring); returns the figures (seconds, turns/s, ratios)."""
    import chromadb
    import numpy as np
    from chromadb.config import Settings

    from memory_graph import Memory

    root = Path(tempfile.mkdtemp(prefix="mg-prof-"))
    turns = list(generated_turns(size + single, 0, locomo_texts(data)))
    try:
        options: dict[str, Any] = {"chroma_url": chroma_url} if chroma_url else {}
        mem = Memory(database_url or str(root / "mg"), user_id="bench", **options)
        if chroma_url:
            from urllib.parse import urlparse

            where = urlparse(chroma_url)
            client: Any = chromadb.HttpClient(
                host=where.hostname or "127.0.0.1",
                port=where.port or 8000,
                settings=Settings(anonymized_telemetry=False),
            )
        else:
            client = chromadb.PersistentClient(
                path=str(root / "plain"), settings=Settings(anonymized_telemetry=False)
            )
        plain = client.get_or_create_collection(
            f"plain_{int(time.time())}", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
        )
        embedder = mem.store.embedder
        mg_batch = chroma_batch = 0.0
        for start in range(0, size, BATCH):  # interleaved batch by batch
            chunk = turns[start : min(size, start + BATCH)]
            t0 = time.perf_counter()
            mem.observe_many(chunk)
            mg_batch += time.perf_counter() - t0
            t0 = time.perf_counter()
            plain.add(
                ids=[t["ref"] for t in chunk],
                embeddings=np.asarray(embedder.embed([t["text"] for t in chunk])),
                metadatas=[{"namespace": "bench"} for _ in chunk],
            )
            chroma_batch += time.perf_counter() - t0
        mg_one, chroma_one = [], []
        profiler = cProfile.Profile() if profile else None
        for t in turns[size:]:
            t0 = time.perf_counter()
            if profiler:
                profiler.enable()
            mem.observe(t["text"], speaker=t["speaker"], time=t["time"], ref=t["ref"])
            if profiler:
                profiler.disable()
            mg_one.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            plain.add(
                ids=[t["ref"]],
                embeddings=np.asarray(embedder.embed([t["text"]])),
                metadatas=[{"namespace": "bench"}],
            )
            chroma_one.append(time.perf_counter() - t0)
        if profiler and profile:
            profiler.dump_stats(str(profile))
        asked = [
            f"Where does {n} work?" if i % 2 else f"What version of {s} runs in production?"
            for i, (n, s) in enumerate(zip(NAMES * 2, SERVICES * 4, strict=False))
        ][:queries]
        recall_s, floor_s = [], []
        recall_profiler = cProfile.Profile() if recall_profile else None
        for q in asked:
            t0 = time.perf_counter()
            if recall_profiler:
                recall_profiler.enable()
            mem.recall(q)
            if recall_profiler:
                recall_profiler.disable()
            recall_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            plain.query(query_embeddings=np.asarray(embedder.embed([q])), n_results=10)
            floor_s.append(time.perf_counter() - t0)
        if recall_profiler and recall_profile:
            recall_profiler.dump_stats(str(recall_profile))
        mem.close()
        if chroma_url:
            client.delete_collection(plain.name)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = {
        "size": size,
        "batch_vs_chroma": mg_batch / chroma_batch,
        "batch_turns_per_s": size / mg_batch,
        "chroma_batch_turns_per_s": size / chroma_batch,
        "observe_turns_per_s": len(mg_one) / sum(mg_one),
        "chroma_add_turns_per_s": len(chroma_one) / sum(chroma_one),
        "observe_vs_chroma": sum(mg_one) / sum(chroma_one),
        "observe_p50_ms": 1000 * statistics.median(mg_one),
        "chroma_add_p50_ms": 1000 * statistics.median(chroma_one),
        "recall_p50_ms": 1000 * statistics.median(recall_s),
        "floor_p50_ms": 1000 * statistics.median(floor_s),
    }
    out["recall_vs_floor"] = out["recall_p50_ms"] / out["floor_p50_ms"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--single", type=int, default=60)
    parser.add_argument("--profile", type=Path, help="cProfile of the single observe calls")
    parser.add_argument("--recall-profile", type=Path, help="cProfile of the recall calls")
    parser.add_argument("--database-url", default="")
    parser.add_argument("--chroma", default="")
    args = parser.parse_args(argv)
    result = run(
        args.size, args.single, profile=args.profile, database_url=args.database_url, chroma_url=args.chroma,
        recall_profile=args.recall_profile,
    )
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
