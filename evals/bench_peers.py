"""The systems ``evals.bench`` measures side by side, behind one small interface, and the cold processes it times.

Every system keeps one user's turns in its own folder and is handed the *same* embedder object (memory-graph's
packaged MiniLM, ``memory_graph.embeddings``), so the benchmark compares storage and retrieval, not models:

- ``memory-graph``: :class:`memory_graph.Memory` (``observe`` per turn, ``observe_many`` per batch, ``recall``).
- ``chroma``: plain Chroma, what a user stores turns in without memory-graph: one ``PersistentClient``
  collection (cosine HNSW), embed + ``add`` of the turns with their text and ``{"namespace": user}``; queried with
  ``where={"namespace": user}`` (a collection shared by users must filter: the *filtered floor*) and without it
  (``chroma unfiltered``: a collection holding one user only, the *physical floor*: embed + one HNSW query).
- ``inmemory``: LangGraph's ``InMemoryStore`` with a vector index over ``text`` (nothing on disk; nothing to
  reopen, so no cold-process figures).
- ``sqlite``: LangGraph's ``SqliteStore`` (``langgraph-checkpoint-sqlite``) with its sqlite-vec index: the
  on-disk store a LangGraph user picks instead.

Peers return their 10 nearest records; memory-graph returns its recall under its default token budget.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

USER = "bench"
"""The one namespace every system holds."""
K = 10
"""Records a peer returns per query."""
COLLECTION = "plain"
NAMESPACE = (USER, "memories")
"""LangGraph stores' namespace of the turns."""
ROOT = Path(__file__).resolve().parent.parent


def disk_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (0 when it does not exist)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


class Peer:
    """One system: ``add_one`` (the agent's path: one turn), ``add_batch`` (the batch path), ``query`` (one
    retrieval of ``K`` records or a recall), ``folder`` (what it keeps on disk; None when nothing), ``close``."""

    name = ""
    folder: Path | None = None

    def add_one(self, turn: dict[str, Any]) -> None:
        self.add_batch([turn])

    def add_batch(self, turns: Sequence[dict[str, Any]]) -> None:
        raise NotImplementedError

    def query(self, text: str) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        """Release files and clients."""


class MemoryGraphPeer(Peer):
    """memory-graph through its public API; ``options`` go to :class:`memory_graph.Memory` (``chroma_url``...)."""

    name = "memory-graph"

    def __init__(self, location: str, **options: Any) -> None:
        self.location, self.options = location, options
        self.folder = None if "://" in location else Path(location)
        self.reopen()
        self.embedder = self.mem.store.embedder

    def reopen(self) -> None:
        """Open the store (again, after :meth:`close`)."""
        from memory_graph import Memory

        self.mem = Memory(self.location, user_id=USER, **self.options)

    def add_one(self, turn: dict[str, Any]) -> None:
        self.mem.observe(turn["text"], speaker=turn["speaker"], time=turn["time"], ref=turn["ref"])

    def add_batch(self, turns: Sequence[dict[str, Any]]) -> None:
        self.mem.observe_many(turns)

    def query(self, text: str) -> Any:
        return self.mem.recall(text)

    def forget_caches(self) -> None:
        """Drop the store's recent-embedding cache (a repeated text is not embedded again) and the stored vectors
        its index keeps (``Store.drop_caches``): every pass of queries starts cold, as the floors do (they embed
        every query). The queries are distinct anyway."""
        self.mem.store.drop_caches()

    def memories(self) -> int:
        return int(sum(self.mem.inspect()["memories"].values()))

    def close(self) -> None:
        self.mem.close()


class ChromaPeer(Peer):
    """Plain Chroma: embed with ``embedder`` and ``add`` (ids, vectors, text, namespace); ``query`` filters to the
    user's namespace, ``query_unfiltered`` does not. On ``chroma_url`` (a server) instead of ``folder`` when given."""

    name = "chroma"

    def __init__(self, folder: Path, embedder: Any, chroma_url: str = "") -> None:
        import chromadb
        from chromadb.config import Settings

        self.embedder, self.chroma_url = embedder, chroma_url
        settings = Settings(anonymized_telemetry=False)
        if chroma_url:
            from urllib.parse import urlparse

            where = urlparse(chroma_url)
            self.client: Any = chromadb.HttpClient(
                host=where.hostname or "127.0.0.1", port=where.port or 8000, settings=settings
            )
            self.collection_name = f"{COLLECTION}_{os.getpid()}_{int(time.time())}"
        else:
            self.folder = folder
            self.client = chromadb.PersistentClient(path=str(folder), settings=settings)
            self.collection_name = COLLECTION
        self.collection = self.client.get_or_create_collection(
            self.collection_name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
        )

    def add_batch(self, turns: Sequence[dict[str, Any]]) -> None:
        texts = [t["text"] for t in turns]
        self.collection.add(
            ids=[t["ref"] for t in turns],
            embeddings=self.embedder.embed(texts),
            documents=texts,
            metadatas=[{"namespace": USER} for _ in turns],
        )

    def query(self, text: str) -> Any:
        return self.collection.query(
            query_embeddings=self.embedder.embed([text]),
            n_results=K,
            where={"namespace": USER},
            include=["documents", "distances"],
        )

    def query_unfiltered(self, text: str) -> Any:
        return self.collection.query(
            query_embeddings=self.embedder.embed([text]), n_results=K, include=["documents", "distances"]
        )

    def close(self) -> None:
        if self.chroma_url:
            self.client.delete_collection(self.collection_name)


def langgraph_index(embedder: Any) -> dict[str, Any]:
    """LangGraph's index configuration over ``embedder`` (its vectors as lists), indexing the ``text`` field."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return embedder.embed(list(texts)).tolist()  # type: ignore[no-any-return]

    return {"dims": int(embedder.dim), "embed": embed, "fields": ["text"]}


class LangGraphPeer(Peer):
    """A LangGraph ``BaseStore`` with a vector index: ``put`` per turn, one ``batch`` of puts per batch,
    ``search(namespace, query=..., limit=K)``."""

    def __init__(self, store: Any, name: str, folder: Path | None = None) -> None:
        self.store, self.name, self.folder = store, name, folder

    def add_one(self, turn: dict[str, Any]) -> None:
        self.store.put(NAMESPACE, turn["ref"], {"text": turn["text"], "time": turn["time"]})

    def add_batch(self, turns: Sequence[dict[str, Any]]) -> None:
        """One ``batch`` of puts per run of turns whose texts differ: ``InMemoryStore.batch`` (langgraph 1.x)
        fails on two puts of one text in a batch (it embeds each text once, then counts one vector per put)."""
        from langgraph.store.base import PutOp

        run: list[Any] = []
        texts: set[str] = set()
        for t in turns:
            if t["text"] in texts:
                self.store.batch(run)
                run, texts = [], set()
            run.append(PutOp(NAMESPACE, t["ref"], {"text": t["text"], "time": t["time"]}))
            texts.add(t["text"])
        if run:
            self.store.batch(run)

    def query(self, text: str) -> Any:
        return self.store.search(NAMESPACE, query=text, limit=K)

    def close(self) -> None:
        conn = getattr(self.store, "conn", None)
        if conn is not None:
            conn.close()


def inmemory_peer(embedder: Any) -> LangGraphPeer:
    """LangGraph's ``InMemoryStore`` indexed with ``embedder``."""
    from langgraph.store.memory import InMemoryStore

    return LangGraphPeer(InMemoryStore(index=langgraph_index(embedder)), "inmemory")  # type: ignore[arg-type]


def sqlite_module() -> Any:
    """The ``sqlite3`` module to open LangGraph's ``SqliteStore`` with: the standard one when it can load
    extensions (sqlite-vec is one), else ``pysqlite3`` (``pysqlite3-binary``, a dev dependency: the same DB-API with
    its own SQLite, for Pythons built without extension loading, as pyenv's are by default)."""
    import sqlite3

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3
    import pysqlite3.dbapi2  # type: ignore[import-not-found,unused-ignore]

    return pysqlite3.dbapi2


def open_sqlite_store(path: Path, embedder: Any) -> Any:
    """LangGraph's ``SqliteStore`` on ``path`` with its sqlite-vec index over ``embedder`` (set up), on a
    connection made as ``SqliteStore.from_conn_string`` makes it."""
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite_module().connect(str(path), check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn, index=langgraph_index(embedder))  # type: ignore[arg-type]
    store.setup()
    return store


def sqlite_peer(folder: Path, embedder: Any) -> LangGraphPeer:
    """LangGraph's ``SqliteStore`` in ``folder`` (``store.sqlite3``)."""
    folder.mkdir(parents=True, exist_ok=True)
    return LangGraphPeer(open_sqlite_store(folder / "store.sqlite3", embedder), "sqlite", folder)


# ---- cold processes ------------------------------------------------------------------------------------------

_PEAK = (
    "peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    "import resource\n"
    "print('PEAK_MB', int(peak[0].split()[1]) / 1024 if peak else "
    "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
)
"""Prints the process's peak resident set (MB): Linux's ``VmHWM`` (``ru_maxrss`` is carried over from the
parent across fork and exec), ``ru_maxrss`` elsewhere."""

RSS_SCRIPTS = {
    "memory-graph": (
        "import json, sys\nfrom memory_graph import Memory\n"
        "location, options, queries = json.loads(sys.argv[1])\n"
        f"with Memory(location, user_id={USER!r}, **options) as mem:\n"
        "    for q in queries:\n        mem.recall(q)\n"
    ),
    "chroma": (
        "import json, sys, chromadb\nfrom chromadb.config import Settings\n"
        "from memory_graph.embeddings import get_embedder\n"
        "location, options, queries = json.loads(sys.argv[1])\n"
        "embedder = get_embedder('')\n"
        "client = chromadb.PersistentClient(path=location, settings=Settings(anonymized_telemetry=False))\n"
        f"collection = client.get_collection({COLLECTION!r})\n"
        "for q in queries:\n"
        f"    collection.query(query_embeddings=embedder.embed([q]), n_results={K}, where={{'namespace': {USER!r}}},"
        " include=['documents', 'distances'])\n"
    ),
    "sqlite": (
        "import json, sys\nfrom pathlib import Path\nfrom memory_graph.embeddings import get_embedder\n"
        "from evals.bench_peers import NAMESPACE, K, open_sqlite_store\n"
        "location, options, queries = json.loads(sys.argv[1])\n"
        "store = open_sqlite_store(Path(location) / 'store.sqlite3', get_embedder(''))\n"
        "for q in queries:\n    store.search(NAMESPACE, query=q, limit=K)\n"
    ),
}
"""Per system: a fresh process that opens the store and runs the queries given (``argv[1]``: JSON ``[location,
options, queries]``). The LangGraph script imports ``evals.bench_peers`` for the connection set-up (stdlib only at
import)."""

COLD_CHROMA = (
    "import sys, chromadb\nfrom chromadb.config import Settings\nfrom memory_graph.embeddings import get_embedder\n"
    "client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))\n"
    f"found = client.get_collection({COLLECTION!r}).query(query_embeddings=get_embedder('').embed([sys.argv[2]]), "
    f"n_results={K}, where={{'namespace': {USER!r}}}, include=['documents'])\n"
    "print(*found['documents'][0], sep='\\n')\n"
)
"""The baseline of ``memory-graph ask``: a cold process that opens Chroma, embeds one query with the packaged
embedder, queries the user's records and prints them."""


def child_env() -> dict[str, str]:
    """The environment of a cold process: this checkout first on ``PYTHONPATH``, Chroma's telemetry off."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("ANONYMIZED_TELEMETRY", "False")
    return env


def peak_rss_mb(system: str, location: str, options: dict[str, Any], queries: Sequence[str]) -> float:
    """Peak RSS (MB) of a fresh process that opens ``system``'s store at ``location`` and runs ``queries``.

    Raises:
        subprocess.CalledProcessError: the process failed (its stderr is in the exception).
    """
    done = subprocess.run(
        [sys.executable, "-c", RSS_SCRIPTS[system] + _PEAK, json.dumps([location, options, list(queries)])],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
        cwd=ROOT,
        env=child_env(),
    )
    return float(next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("PEAK_MB")))


def ask_command(location: str, question: str, chroma_url: str = "") -> list[str]:
    """``memory-graph ask QUESTION --store LOCATION --user USER`` as this interpreter runs it."""
    command = [sys.executable, "-m", "memory_graph.cli", "ask", question, "--store", location, "--user", USER]
    return command + (["--chroma", chroma_url] if chroma_url else [])


def cold_chroma_command(folder: Path, question: str) -> list[str]:
    """The cold Chroma process (:data:`COLD_CHROMA`) on the plain collection in ``folder``."""
    return [sys.executable, "-c", COLD_CHROMA, str(folder), question]


def timed_run(command: list[str]) -> tuple[float, float]:
    """Wall seconds of ``command`` from start to exit, and its CPU seconds (user + system, its children too).

    Raises:
        subprocess.CalledProcessError: it failed.
    """
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        command, capture_output=True, text=True, timeout=900, check=True, cwd=ROOT, env=child_env()
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def rotation(names: Sequence[str], i: int) -> list[str]:
    """``names`` rotated by ``i``: round ``i`` of an interleaved measurement starts with ``names[i % n]``, so each
    system goes first (and last) equally often and machine load drifts over all of them alike."""
    n = len(names)
    return [names[(i + j) % n] for j in range(n)]


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall seconds ``fn()`` takes (``time.perf_counter``) and this process's CPU seconds meanwhile (all threads:
    ``time.process_time``)."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0
