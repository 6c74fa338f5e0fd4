"""Storage: the SQLite ledger (source of truth) plus the Chroma index derived from it.

``Store.open(path)`` returns the process-wide store for a folder (one SQLite connection, one Chroma client,
one embedder per process) and reconciles the index with the ledger: rows written to the ledger but not yet
indexed (``indexed = 0``, e.g. after a crash) are embedded and upserted, and index records whose ledger row
is gone (hard-deleted) are dropped.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from filelock import FileLock, Timeout

from memory_graph.embeddings import Embedder, get_embedder
from memory_graph.store.index import FAR_FUTURE, VectorIndex
from memory_graph.store.ledger import Ledger, new_id, now_iso, short_id
from memory_graph.timeutil import to_epoch

__all__ = ["StoreBusyError", "Store", "Ledger", "VectorIndex", "new_id", "now_iso", "short_id"]

PROCESS_LOCK_TIMEOUT_S = float(os.environ.get("MEMORY_GRAPH_LOCK_TIMEOUT", "300"))


class StoreBusyError(RuntimeError):
    """Another process holds the store folder."""


_OPEN: dict[tuple[str, str], Store] = {}
_OPEN_LOCK = threading.Lock()


F = TypeVar("F", bound=Callable[..., Any])


def _locked(method: F) -> F:
    """Run a Store method holding the store's inter-process write lock."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        with self.write_lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def memory_metadata(row: Any) -> dict[str, Any]:
    """Chroma metadata of a ledger memory row (filters only; no text)."""
    return {
        "namespace": row["namespace"],
        "status": row["status"],
        "retention": row["retention"],
        "kind": row["kind"],
        "scope": row["scope"],
        "valid_from": to_epoch(row["valid_from"], 0),
        "valid_to": to_epoch(row["valid_to"], FAR_FUTURE),
    }


class Store:
    """Ledger + index + embedder for one store folder. Use :meth:`open`; call :meth:`release` when done."""

    def __init__(self, path: Path, embedding_model: str = "") -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        # One process at a time owns a store folder: Chroma's PersistentClient keeps index state in memory
        # and is not safe for several processes at once. A second process waits for the first to close the
        # store, then fails with a clear error (use Chroma's HttpClient to share an index between processes).
        self.process_lock = FileLock(str(path / ".process.lock"), timeout=PROCESS_LOCK_TIMEOUT_S, thread_local=False)
        try:
            self.process_lock.acquire()
        except Timeout:
            raise StoreBusyError(
                f"store {str(path)!r} is in use by another process (waited {PROCESS_LOCK_TIMEOUT_S:.0f} s)"
            ) from None
        self.ledger = Ledger(path / "ledger.sqlite3")
        self.index = VectorIndex(path / "chroma")
        self.embedding_model = embedding_model
        self._embedder: Embedder | None = None
        self._vectors: dict[str, np.ndarray] = {}
        self.refs = 0
        # one writer at a time across threads and processes (re-entrant within a thread)
        self.write_lock = FileLock(str(path / ".write.lock"), timeout=120)
        self.reconcile()

    @classmethod
    def get(cls, path: str | Path, embedding_model: str = "") -> Store:
        """The shared store of ``path`` (opened and reconciled on first use, created when missing).

        Raises:
            ValueError: ``path`` exists and is not a folder.
        """
        folder = Path(path).expanduser().resolve()
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"store path {str(folder)!r} exists and is not a folder")
        key = (str(folder), embedding_model)
        with _OPEN_LOCK:
            store = _OPEN.get(key)
            if store is None:
                store = cls(folder, embedding_model)
                _OPEN[key] = store
            return store

    @classmethod
    def open(cls, path: str | Path, embedding_model: str = "") -> Store:
        """Like :meth:`get`, taking a reference that :meth:`release` gives back."""
        store = cls.get(path, embedding_model)
        with _OPEN_LOCK:
            store.refs += 1
        return store

    def release(self) -> None:
        """Drop one reference; the last one closes the SQLite connection."""
        with _OPEN_LOCK:
            self.refs -= 1
            if self.refs <= 0:
                _OPEN.pop((str(self.path), self.embedding_model), None)
                self.ledger.close()
                self.index.close()
                self.process_lock.release()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.embedding_model)
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (n, dim), reusing vectors of texts embedded recently (one batch per turn:
        the extract node embeds observations and memory texts together, the link node reuses them)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._vectors[text] = vector
            while len(self._vectors) > 4096:
                self._vectors.pop(next(iter(self._vectors)))
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    # ---- index maintenance -----------------------------------------------------------------------

    @_locked
    def index_memories(self, ids: Sequence[str], vectors: np.ndarray | None = None) -> None:
        """Upsert ledger memories ``ids`` into Chroma (embedding their text unless ``vectors`` given)."""
        if not ids:
            return
        rows = self.ledger.query(
            f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(ids))})", tuple(ids)
        )
        if not rows:
            return
        if vectors is None or len(vectors) != len(rows):
            vectors = self.embed([r["text"] for r in rows])
        VectorIndex.upsert(self.index.memories, [r["id"] for r in rows], vectors, [memory_metadata(r) for r in rows])
        with self.ledger.tx() as cur:
            cur.executemany("UPDATE memories SET indexed=1 WHERE id=?", [(r["id"],) for r in rows])

    @_locked
    def sync_metadata(self, ids: Sequence[str]) -> None:
        """Push ledger status/retention/validity of ``ids`` to the index metadata."""
        if not ids:
            return
        rows = self.ledger.query(f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(ids))})", tuple(ids))
        VectorIndex.update_metadata(self.index.memories, [r["id"] for r in rows], [memory_metadata(r) for r in rows])
        with self.ledger.tx() as cur:
            cur.executemany("UPDATE memories SET indexed=1 WHERE id=?", [(r["id"],) for r in rows])

    @_locked
    def index_observations(self, ids: Sequence[str], vectors: np.ndarray | None = None) -> None:
        if not ids:
            return
        rows = self.ledger.query(
            f"SELECT id, namespace, text, time FROM observations WHERE id IN ({','.join('?' * len(ids))})", tuple(ids)
        )
        if not rows:
            return
        if vectors is None or len(vectors) != len(rows):
            vectors = self.embed([r["text"] for r in rows])
        VectorIndex.upsert(
            self.index.observations,
            [r["id"] for r in rows],
            vectors,
            [{"namespace": r["namespace"], "time": to_epoch(r["time"], 0)} for r in rows],
        )
        with self.ledger.tx() as cur:
            cur.executemany("UPDATE observations SET indexed=1 WHERE id=?", [(r["id"],) for r in rows])

    @_locked
    def reconcile(self) -> dict[str, int]:
        """Bring the index in line with the ledger; returns counts of records added and removed."""
        dirty_mem = [r["id"] for r in self.ledger.query("SELECT id FROM memories WHERE indexed=0")]
        dirty_obs = [r["id"] for r in self.ledger.query("SELECT id FROM observations WHERE indexed=0")]
        for start in range(0, len(dirty_mem), 256):
            self.index_memories(dirty_mem[start : start + 256])
        for start in range(0, len(dirty_obs), 256):
            self.index_observations(dirty_obs[start : start + 256])
        removed = 0
        known_mem = {r["id"] for r in self.ledger.query("SELECT id FROM memories")}
        stale = VectorIndex.ids(self.index.memories) - known_mem
        VectorIndex.delete(self.index.memories, sorted(stale))
        removed += len(stale)
        known_obs = {r["id"] for r in self.ledger.query("SELECT id FROM observations")}
        stale = VectorIndex.ids(self.index.observations) - known_obs
        VectorIndex.delete(self.index.observations, sorted(stale))
        removed += len(stale)
        return {"indexed": len(dirty_mem) + len(dirty_obs), "removed": removed}

    @_locked
    def reindex(self) -> dict[str, int]:
        """Rebuild the Chroma index from the ledger (all namespaces)."""
        self.index.reset()
        with self.ledger.tx() as cur:
            cur.execute("UPDATE memories SET indexed=0")
            cur.execute("UPDATE observations SET indexed=0")
        return self.reconcile()
