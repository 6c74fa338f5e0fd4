"""Scale benchmark (issue 13): memory-graph against plain Chroma with the same embedder, in one process and one
run, at growing store sizes; ratios, not absolute times, are the result (the machines are shared and noisy).

One store is grown to each size in turn (``--sizes``, default 1,000 / 10,000 / 100,000 turns; ``--quick``: 1,000 and
10,000) from varied generated turns (templates of personal and team facts with random names, places, versions and
dates; LoCoMo turns mixed in when ``../shared/data/locomo`` exists), fed to both systems in batches of
``BATCH`` turns. At each size it reports, side by side:

- ingest: turns/s of ``Memory.observe_many`` and of plain Chroma (embed the turns with the same embedder and add
  them to one collection), over the turns added since the previous size; the ratio (memory-graph time / Chroma
  time per turn);
- recall: p50/p95 of ``Memory.recall`` over ``QUERIES`` questions, and the *floor* (embed the query + one query of
  the plain collection filtered to the user's namespace, as a store shared by users must); the ratio of the p50s;
  also the *unfiltered floor* (the same query without the namespace filter: a collection holding one user only)
  and the ratio to it, reported, not a target;
- recall after a write: p50 of ``Memory.recall`` right after ``Memory.observe`` of one new turn, over
  ``AFTER_WRITE`` pairs (nothing may be rebuilt per write: issue 13 measured a BM25 rebuild of 0.6-1.9 s here);
- open: seconds to open the store again (a new ``Store``: reconcile, statistics and the vector index); peak RSS of
  the benchmark process (MB: both systems, all sizes so far) and of a fresh process that only opens the store and
  recalls (``store_rss_mb``: memory-graph alone at that size); disk bytes per memory; ``build_s``: seconds of
  ``observe_many`` from an empty store to this size.

Targets (issue 13): recall <= 1.5x the floor at 10k and 100k and recall(100k) <= 2x recall(1k); ingest <= 1.5x
Chroma and flat across sizes. ``--quick`` fails (exit 1) when a ratio is worse than 1.5x its target, or 1.5x
the committed result's (``evals/results/bench/bench.json``) where the target is not met yet (``REGRESSION``).
Plot: latency against size, log-log (``bench.png``).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evals.common import iso, rng

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
BATCH = 100
QUERIES = 40
AFTER_WRITE = 10
TARGETS = {"recall_vs_floor": 1.5, "ingest_vs_chroma": 1.5}
REGRESSION = 1.5
BASELINE = Path(__file__).parent / "results" / "bench" / "bench.json"
"""``--quick`` fails when a measured ratio exceeds ``target * REGRESSION``."""

CITIES = ["Lisbon", "Porto", "Berlin", "Osaka", "Lyon", "Austin", "Denver", "Quito", "Tallinn", "Cork", "Perth",
          "Nairobi", "Krakow", "Bilbao", "Halifax", "Malmo", "Leeds", "Turin", "Busan", "Hobart"]
NAMES = ["Ana", "Bram", "Chen", "Dita", "Emeka", "Farah", "Goran", "Hana", "Ilse", "Jonas", "Kemal", "Lior", "Mira",
         "Nikhil", "Oona", "Pavel", "Quinn", "Rosa", "Sven", "Tomas", "Uma", "Vera", "Wes", "Yara", "Zeno"]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Tyrell", "Cyberdyne"]
SERVICES = ["Postgres", "Redis", "Kafka", "Nginx", "Kubernetes", "Elasticsearch", "RabbitMQ", "Node", "Python", "Java"]
THINGS = ["coffee", "tea", "book", "film", "band", "dish", "hike", "podcast", "game", "beer"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TEMPLATES = [
    "I live in {city} now.", "I moved to {city} last month.", "My sister {name} works at {company}.",
    "Our standup moved to {day} at {hour}am.", "We upgraded {service} to version {major}.{minor} in production.",
    "My favourite {thing} this year is the one {name} recommended.", "{name} said the {company} deadline is {day}.",
    "I started a new job at {company} as a {role}.", "The team offsite is in {city} on {day}.",
    "Had a long day, the weather in {city} was awful and {name} was late again.",
    "We pay {amount} dollars a month for the {service} cluster.", "My {rel} {name} is visiting from {city}.",
    "I no longer drink {thing} after lunch.", "Ticket {ticket} is blocked on the {service} migration.",
    "Remind me that {name}'s birthday is on {day}.", "Staging runs {service} {major}.{minor} while production lags.",
]
ROLES = ["designer", "data engineer", "nurse", "teacher", "product manager", "chef", "accountant"]
RELS = ["brother", "cousin", "friend", "colleague", "neighbour", "aunt", "mentor"]


def generated_turns(n: int, seed: int = 0, locomo: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """``n`` varied turns, one every ten minutes from 2023-01-01 (deterministic for a seed); one in four is a
    LoCoMo turn when ``locomo`` texts are given."""
    r = rng("bench", seed)
    start = time.mktime((2023, 1, 1, 0, 0, 0, 0, 0, 0))
    for i in range(n):
        when = iso(__import__("datetime").datetime.utcfromtimestamp(start + 600 * i))
        if locomo and i % 4 == 3:
            text = locomo[r.randrange(len(locomo))]
        else:
            text = r.choice(TEMPLATES).format(
                city=r.choice(CITIES), name=r.choice(NAMES), company=r.choice(COMPANIES), day=r.choice(DAYS),
                hour=r.randint(7, 11), service=r.choice(SERVICES), major=r.randint(1, 30), minor=r.randint(0, 20),
                thing=r.choice(THINGS), role=r.choice(ROLES), amount=r.randint(50, 5000), rel=r.choice(RELS),
                ticket=f"T-{r.randint(1000, 99999)}")
        yield {"text": text, "speaker": "user", "time": when, "ref": f"b{i}"}


def locomo_texts(data: Path) -> list[str]:
    """Every turn text of the LoCoMo files under ``data`` (empty when the folder is missing)."""
    out: list[str] = []
    for path in sorted(data.glob("*.json")) if data.is_dir() else []:
        conv = json.loads(path.read_text(encoding="utf-8")).get("conversation", {})
        for key, value in conv.items():
            if key.startswith("session_") and isinstance(value, list):
                out.extend(str(t.get("text", "")) for t in value if t.get("text"))
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _store_rss_mb(location: str, chroma_url: str, queries: list[str]) -> float:
    """Peak RSS (MB) of a fresh Python process that opens the store and runs ``queries`` as recalls: what
    memory-graph alone holds at this size (the benchmark's own process also holds the plain collection). Linux's
    ``VmHWM`` (``ru_maxrss`` is carried over from the parent across fork and exec)."""
    import subprocess
    import sys

    script = ("import json, resource, sys\nfrom memory_graph import Memory\n"
              "location, chroma, queries = json.loads(sys.argv[1])\n"
              "with Memory(location, user_id='bench', **({'chroma_url': chroma} if chroma else {})) as mem:\n"
              "    for q in queries:\n        mem.recall(q)\n"
              "peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
              "print(int(peak[0].split()[1]) / 1024 if peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n")
    done = subprocess.run([sys.executable, "-c", script, json.dumps([location, chroma_url, queries])],
                          capture_output=True, text=True, timeout=600, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def run(sizes: tuple[int, ...], data: Path | None = None, out: Path | None = None, seed: int = 0,
        database_url: str = "", chroma_url: str = "") -> dict[str, Any]:
    """Grow a memory-graph store and a plain Chroma collection to each size; returns the measurements (and writes
    ``bench.json`` / ``bench.png`` under ``out`` when given). With ``database_url`` (an empty PostgreSQL database)
    and ``chroma_url`` (a Chroma server) the server backend is measured, and the plain collection lives on the same
    Chroma server."""
    import chromadb
    import numpy as np
    from chromadb.config import Settings

    from memory_graph import Memory
    from memory_graph.store import Store

    root = Path(tempfile.mkdtemp(prefix="mg-bench-"))
    locomo = locomo_texts(data) if data else []
    turns = list(generated_turns(max(sizes) + AFTER_WRITE * len(sizes), seed, locomo))
    extra = turns[max(sizes):]  # observed one at a time between recalls ("recall after a write")
    turns = turns[: max(sizes)]
    queries = [f"Where does {n} work?" if i % 2 else f"What version of {s} runs in production?"
               for i, (n, s) in enumerate(zip(NAMES * 2, SERVICES * 4, strict=False))][:QUERIES]
    rows: list[dict[str, Any]] = []
    try:
        location = database_url or str(root / "mg")
        options: dict[str, Any] = {"chroma_url": chroma_url} if chroma_url else {}
        mem = Memory(location, user_id="bench", **options)
        if chroma_url:
            from urllib.parse import urlparse

            where = urlparse(chroma_url)
            client: Any = chromadb.HttpClient(host=where.hostname or "127.0.0.1", port=where.port or 8000,
                                              settings=Settings(anonymized_telemetry=False))
        else:
            client = chromadb.PersistentClient(path=str(root / "plain"), settings=Settings(anonymized_telemetry=False))
        plain = client.get_or_create_collection(f"plain_{os.getpid()}", configuration={"hnsw": {"space": "cosine"}},
                                                embedding_function=None)
        embedder = mem.store.embedder
        done, build_s = 0, 0.0
        for size in sizes:
            batch_turns = turns[done:size]
            t0 = time.perf_counter()
            for start in range(0, len(batch_turns), BATCH):
                mem.observe_many(batch_turns[start : start + BATCH])
            mg_s = time.perf_counter() - t0
            build_s += mg_s
            t0 = time.perf_counter()
            for start in range(0, len(batch_turns), BATCH):
                chunk = batch_turns[start : start + BATCH]
                vectors = embedder.embed([t["text"] for t in chunk])
                plain.add(ids=[t["ref"] for t in chunk], embeddings=np.asarray(vectors),
                          metadatas=[{"namespace": "bench"} for _ in chunk])
            chroma_s = time.perf_counter() - t0
            done = size
            recall_s, floor_s, bare_s = [], [], []
            for q in queries:
                t0 = time.perf_counter()
                mem.recall(q)
                recall_s.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                plain.query(query_embeddings=np.asarray(embedder.embed([q])), n_results=10, where={"namespace": "bench"})
                floor_s.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                plain.query(query_embeddings=np.asarray(embedder.embed([q])), n_results=10)
                bare_s.append(time.perf_counter() - t0)
            after_write_s = []
            for q, turn in zip(queries, extra[: AFTER_WRITE], strict=False):
                mem.observe(turn["text"], speaker=turn["speaker"], time=turn["time"], ref=turn["ref"])
                t0 = time.perf_counter()
                mem.recall(q)
                after_write_s.append(time.perf_counter() - t0)
            extra = extra[AFTER_WRITE:]
            memories = sum(mem.inspect()["memories"].values())
            mem.close()
            gc.collect()
            t0 = time.perf_counter()
            store = Store.open(location, chroma_url=chroma_url)
            store.index_counts()  # the vector index is opened lazily: count it in
            open_s = time.perf_counter() - t0
            store.release()
            mem = Memory(location, user_id="bench", **options)
            row = {
                "size": size, "memories": memories, "turns_added": len(batch_turns),
                "ingest_turns_per_s": len(batch_turns) / mg_s, "chroma_turns_per_s": len(batch_turns) / chroma_s,
                "ingest_vs_chroma": mg_s / chroma_s,
                "recall_p50_ms": 1000 * statistics.median(recall_s), "recall_p95_ms": 1000 * _percentile(recall_s, 0.95),
                "floor_p50_ms": 1000 * statistics.median(floor_s), "floor_p95_ms": 1000 * _percentile(floor_s, 0.95),
                "unfiltered_floor_p50_ms": 1000 * statistics.median(bare_s),
                "recall_after_write_p50_ms": 1000 * statistics.median(after_write_s),
                "open_s": open_s, "rss_mb": _rss_mb(), "store_rss_mb": _store_rss_mb(location, chroma_url, queries[:5]),
                "build_s": build_s,
                "disk_bytes_per_memory": _disk(root / "mg") / max(memories, 1) if not database_url else float("nan"),
            }
            row["recall_vs_floor"] = row["recall_p50_ms"] / row["floor_p50_ms"]
            row["recall_vs_unfiltered_floor"] = row["recall_p50_ms"] / row["unfiltered_floor_p50_ms"]
            rows.append(row)
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
        mem.close()
        if chroma_url:
            client.delete_collection(plain.name)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result = {"suite": "bench", "sizes": list(sizes), "rows": rows, "targets": TARGETS,
              "recall_growth": rows[-1]["recall_p50_ms"] / rows[0]["recall_p50_ms"] if len(rows) > 1 else 1.0}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        _plot(rows, out / "bench.png")
    return result


def regressions(result: dict[str, Any], baseline: dict[str, Any] | None = None) -> list[str]:
    """The ratios more than ``REGRESSION`` times their limit (what makes ``--quick`` fail). A ratio's limit is its
    target, or the ratio recorded at the same size in ``baseline`` (the committed ``bench.json``) when that is
    worse: a target not met yet must not get worse, one met must stay within 1.5x of itself."""
    recorded = {row["size"]: row for row in (baseline or {}).get("rows", [])}
    bad = []
    for row in result["rows"]:
        for key, target in TARGETS.items():
            limit = max(target, float(recorded.get(row["size"], {}).get(key, target)))
            if row[key] > limit * REGRESSION:
                bad.append(f"{key} at {row['size']}: {row[key]:.2f} > {limit * REGRESSION:.2f} ({limit:.2f} x {REGRESSION})")
    return bad


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["size"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in (("recall_p50_ms", "memory-graph recall p50"), ("recall_p95_ms", "memory-graph recall p95"),
                       ("recall_after_write_p50_ms", "memory-graph recall after a write p50"),
                       ("floor_p50_ms", "floor (embed + one filtered Chroma query) p50"),
                       ("unfiltered_floor_p50_ms", "unfiltered floor p50")):
        ax.plot(sizes, [r[key] for r in rows], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("turns in the store")
    ax.set_ylabel("ms")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m evals.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes 1,000 and 10,000; exit 1 on a regression")
    parser.add_argument("--sizes", default="", help="comma-separated store sizes in turns")
    parser.add_argument("--data", default=os.environ.get("MEMORY_GRAPH_LOCOMO", "../shared/data/locomo"))
    parser.add_argument("--out", default="", help="where bench.json and bench.png go (default: "
                        "evals/results/_scratch/bench, git-ignored; the committed results are evals/results/bench for "
                        "--quick, the CI baseline, and evals/results/bench-100k for the full run: name them to replace them)")
    parser.add_argument("--database-url", default="", help="measure the server backend: an empty PostgreSQL "
                        "database (postgresql://...), with --chroma")
    parser.add_argument("--chroma", default="", help="the Chroma server (http://host:port) for --database-url")
    parser.add_argument("--baseline", default=str(BASELINE), help="bench.json whose ratios --quick must not exceed "
                        "by more than 50%% where a target is not met yet")
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) or (QUICK_SIZES if args.quick else SIZES)
    baseline_path = Path(args.baseline)
    baseline = json.loads(baseline_path.read_text(encoding="utf-8")) if baseline_path.is_file() else None
    if bool(args.database_url) != bool(args.chroma):
        parser.error("--database-url and --chroma go together")
    out = Path(args.out or "evals/results/_scratch/bench")
    result = run(sizes, Path(args.data), out, database_url=args.database_url, chroma_url=args.chroma)
    bad = regressions(result, baseline)
    for line in bad:
        print(f"REGRESSION {line}")
    return 1 if bad and args.quick else 0


if __name__ == "__main__":
    raise SystemExit(main())
