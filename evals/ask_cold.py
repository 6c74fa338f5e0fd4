"""``memory-graph ask`` as a cold process against the floor of a cold Chroma query (issue 22, item 4).

Both are fresh Python processes against the same store, timed from start to exit (wall clock):

- ``ask``: ``python -m memory_graph.cli ask QUESTION --store STORE --user USER`` (offline: no chat model);
- the *floor*: a process that imports chromadb and the packaged embedder, opens a ``PersistentClient`` on the
  store's own ``chroma`` folder, embeds the question with the same embedder
  (``memory_graph.embeddings.get_embedder()``) and queries the held memories collection for the 10 nearest,
  unfiltered (the cheapest query that collection answers);
- ``python``: an interpreter that starts and exits (``python -c pass``), for scale;
- ``ask_baseline`` (with ``--baseline DIR``): the same ``ask`` run with ``PYTHONPATH=DIR``, another checkout of
  memory-graph (before/after figures in one interleaved run). An ``ask`` older than issue 22 stores each question
  it is asked: the store grows by one observation per run.

The runs are interleaved (each round runs the three, in an order that rotates every round), so a machine whose
load drifts slows them alike; the result is each one's median over ``--runs`` rounds and the ratio of the
medians ``ask / floor`` (target: at most 1.5x). ``python -m evals.ask_cold --store PATH`` measures an existing
store (of any size); without ``--store`` one is built first into a temporary folder from the scale benchmark's
generated turns (``evals.bench.generated_turns``, ``--turns``, default 10,000: several minutes) and removed
afterwards unless ``--keep``. ``--quick``: 1,000 turns and 3 rounds (a smoke run; its ratio says little).

Prints one JSON object (also written to ``--out`` when given): medians in seconds, every run, the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET = 1.5
QUESTION = "What version of Redis runs in production?"
USER = "bench"

FLOOR = """
import sys
import chromadb
import numpy as np
from chromadb.config import Settings
from memory_graph.embeddings import get_embedder

client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
collection = client.get_collection("memories")
vector = get_embedder().embed([sys.argv[2]])
hits = collection.query(query_embeddings=np.asarray(vector), n_results=10)
print(len(hits["ids"][0]))
"""
"""The floor process: open Chroma on the store's folder, embed one query with the packaged embedder, query it."""


def build(path: Path, turns: int, user: str = USER) -> float:
    """Grow a store at ``path`` to ``turns`` generated turns (``Memory.observe_many`` in the benchmark's batches);
    returns the seconds it took."""
    from evals.bench import BATCH, generated_turns
    from memory_graph import Memory

    items = list(generated_turns(turns, 0))
    start = time.perf_counter()
    with Memory(path, user_id=user) as mem:
        for k in range(0, len(items), BATCH):
            mem.observe_many(items[k : k + BATCH])
    return time.perf_counter() - start


def commands(store: Path, user: str, question: str, baseline: Path | None = None) -> dict[str, list[str]]:
    """The timed command lines (``ask_baseline`` only with ``baseline``)."""
    store = store.resolve()
    ask = [sys.executable, "-m", "memory_graph.cli", "ask", question, "--store", str(store), "--user", user]
    out = {
        "ask": ask,
        "floor": [sys.executable, "-c", FLOOR, str(store / "chroma"), question],
        "python": [sys.executable, "-c", "pass"],
    }
    if baseline is not None:
        out["ask_baseline"] = ask
    return out


ROOT = Path(__file__).resolve().parents[1]
"""This checkout: the code ``ask`` and the floor run (first on their ``PYTHONPATH``)."""


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from start to exit of ``argv``, run in the temporary folder (``-m``/``-c`` put the working folder
    first on ``sys.path``: a run from a checkout would import that checkout whatever ``PYTHONPATH`` says);
    raises ``RuntimeError`` with its stderr when it fails."""
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[1:4]} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return seconds


def measure(
    store: Path, runs: int, user: str = USER, question: str = QUESTION, baseline: Path | None = None
) -> dict[str, Any]:
    """Run the commands ``runs`` rounds, interleaved (one warm-up round first, not counted: it makes the files and
    the embedder's ONNX export hot in the OS cache for all alike)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MEMORY_GRAPH_MODEL", "OPENAI_BASE_URL")}
    env.setdefault("ANONYMIZED_TELEMETRY", "False")
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *rest])
    envs = (
        {"ask_baseline": {**env, "PYTHONPATH": os.pathsep.join([str(baseline.resolve()), *rest])}}
        if baseline
        else {}
    )
    argv = commands(store, user, question, baseline)
    names = list(argv)
    for name in names:
        timed(argv[name], envs.get(name, env))
    where = "import memory_graph; print(memory_graph.__file__)"
    code = {  # which memory-graph each command imports (a check that the baseline is the other checkout)
        name: subprocess.run(
            [sys.executable, "-c", where],
            capture_output=True,
            text=True,
            env=envs.get(name, env),
            cwd=tempfile.gettempdir(),
            check=True,
        ).stdout.strip()
        for name in ("ask", *envs)
    }
    times: dict[str, list[float]] = {name: [] for name in names}
    for k in range(runs):
        for name in names[k % len(names) :] + names[: k % len(names)]:
            times[name].append(timed(argv[name], envs.get(name, env)))
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {
        "store": str(store),
        "code": code,
        "runs": runs,
        "question": question,
        "median_s": {name: round(value, 3) for name, value in medians.items()},
        "ask_vs_floor": round(medians["ask"] / medians["floor"], 3),
        "pairwise_ratio_median": round(
            statistics.median(a / f for a, f in zip(times["ask"], times["floor"], strict=True)), 3
        ),
        "target": TARGET,
        "met": medians["ask"] / medians["floor"] <= TARGET,
        **(
            {
                "baseline": str(baseline),
                "baseline_vs_floor": round(medians["ask_baseline"] / medians["floor"], 3),
            }
            if baseline is not None
            else {}
        ),
        "times_s": {name: [round(v, 3) for v in values] for name, values in times.items()},
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m evals.ask_cold", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="an existing store folder (else one is built)")
    parser.add_argument("--user", default=USER)
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--turns", type=int, default=10_000, help="turns of the built store")
    parser.add_argument("--runs", type=int, default=9, help="interleaved rounds (medians over them)")
    parser.add_argument("--quick", action="store_true", help="1,000 turns, 3 rounds")
    parser.add_argument("--keep", action="store_true", help="keep the built store (its path is printed)")
    parser.add_argument("--baseline", type=Path, help="also time ask from this checkout (its PYTHONPATH)")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    turns, runs = (1_000, 3) if args.quick else (args.turns, args.runs)
    root: Path | None = None
    store = args.store
    built_s = None
    if store is None:
        root = Path(tempfile.mkdtemp(prefix="mg-ask-cold-"))
        store = root / "store"
        built_s = round(build(store, turns, args.user), 1)
    elif not (store / "chroma").is_dir():
        parser.error(f"{store} holds no chroma folder (not an embedded memory-graph store)")
    try:
        result = measure(store, runs, args.user, args.question, args.baseline)
    finally:
        if root is not None and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if built_s is not None:
        result.update(turns=turns, build_s=built_s)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
