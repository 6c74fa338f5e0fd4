"""Storage: the SQLite ledger (source of truth) plus the Chroma index derived from it.

``Store.open(path)`` returns the process-wide store object of a folder (one SQLite connection, one Chroma
client, one embedder per process). Several processes may use one store folder at once: nothing is held while
a process is idle. Every operation runs inside :meth:`Store.session`, which holds the folder's lock (a file
lock across processes, an ``RLock`` across threads) only for that operation, and on entry reopens the Chroma
client when another process changed the index since this process last looked (Chroma's ``PersistentClient``
keeps its vector index in memory, so a client left open would not see the other process's writes).

Opening reconciles the index with the ledger in O(rows to fix): rows written to the ledger but not yet indexed
(``indexed = 0``, e.g. after a crash) are embedded and upserted, and index records queued for deletion in
``index_drops`` (by a hard delete's transaction) are dropped. A row that cannot be indexed (an unreadable
date written by an older version) is skipped and reported, never raised: one bad row cannot stop a store from
opening.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout

from memory_graph.embeddings import Embedder, get_embedder
from memory_graph.errors import (
    InvalidInputError,
    MemoryGraphError,
    StoreBusyError,
    StoreError,
    StoreNotFoundError,
)
from memory_graph.parallel import side_by_side
from memory_graph.records import LIVE_STATUSES, searchable_text
from memory_graph.store import lexical
from memory_graph.store.index import (
    FAR_FUTURE,
    FEW_MATCHES,
    FILE_BATCH,
    FIRST_FETCH,
    LAYOUT,
    LIVE,
    MEMORY,
    OBSERVATION,
    OBSERVATIONS,
    OVERFETCH,
    REPLACED,
    IndexQuery,
    VectorIndex,
    cosine_ranked,
    filter_fields,
    matches,
    memory_parts,
    scrub_unused_capacity,
)
from memory_graph.store.ledger import Ledger
from memory_graph.store.lexical import LEXICAL_K
from memory_graph.store.sql import is_database_url, looks_like_url, redact_url
from memory_graph.store.tx import Tx, new_id, now_iso
from memory_graph.timeutil import to_epoch

__all__ = ["StoreBusyError", "Store", "Ledger", "Tx", "VectorIndex", "IndexQuery", "new_id", "now_iso"]

log = logging.getLogger(__name__)

LOCK_TIMEOUT_S = float(os.environ.get("MEMORY_GRAPH_LOCK_TIMEOUT", "120"))
"""Seconds a process waits for another one's operation on the same store before ``StoreBusyError``."""

EMBED_CACHE_SIZE = 4096
"""Texts whose vectors a store keeps between calls (the link node reuses the extract node's vectors)."""

LEDGER_FILE = "ledger.sqlite3"
COMPACTING = "chroma.compacting"

_OPEN: dict[tuple[str, ...], Store] = {}
_OPEN_LOCK = threading.Lock()


_MEMORY_FIELDS: dict[str, Callable[[Any], Any]] = {
    "namespace": lambda r: r["namespace"],
    "status": lambda r: r["status"],
    "retention": lambda r: r["retention"],
    "kind": lambda r: r["kind"],
    "scope": lambda r: r["scope"],
    "valid_from": lambda r: to_epoch(r["valid_from"], 0),
    "valid_to": lambda r: to_epoch(r["valid_to"], FAR_FUTURE),
}
_OBSERVATION_FIELDS: dict[str, Callable[[Any], Any]] = {
    "namespace": lambda r: r["namespace"],
    "time": lambda r: to_epoch(r["time"], 0),
}


def memory_metadata(row: Any, fields: set[str] | None = None) -> dict[str, Any]:
    """Chroma metadata of a ledger memory row (filters only; no text); only ``fields`` when given.

    Raises:
        ValueError, OverflowError: a stored date that cannot be read.
    """
    return {k: f(row) for k, f in _MEMORY_FIELDS.items() if fields is None or k in fields}


def observation_metadata(row: Any, fields: set[str] | None = None) -> dict[str, Any]:
    """Chroma metadata of a ledger observation row (namespace and time; no text); only ``fields`` when given."""
    return {k: f(row) for k, f in _OBSERVATION_FIELDS.items() if fields is None or k in fields}


@dataclass(frozen=True)
class _Kind:
    """How a search reads one kind of record (memories, observations): the parts a request reads, the kind's name
    in ``Ledger.filter_rows``, a row's filter fields, the ids an index range finds for a filter (None: it cannot),
    and every filter row of the namespace (an exact search)."""

    parts_of: Callable[[IndexQuery], tuple[str, ...]]
    table: str
    metadata: Callable[[Any, set[str]], dict[str, Any]]
    matching: Callable[[dict[str, Any] | None, int], list[str] | None]
    every_row: Callable[[], dict[str, Any]]


def _owner_line() -> str:
    """Who is taking the lock: pid, host and time (shown to a process that waits too long)."""
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": now_iso()})


def _memory_text(row: Any) -> str:
    """What the index embeds of a memory row (its text with its source: ``records.searchable_text``)."""
    return searchable_text(row["text"], row["source"])


OWNER_BYTES = 512
"""The owner file's size: every line is padded to it with spaces (a JSON reader ignores them)."""


def _write_owner(path: Path) -> None:
    """Write :func:`_owner_line` over the owner file in place, padded to ``OWNER_BYTES``, never truncating it: on
    ext4 a truncate-and-rewrite (``Path.write_text``) forces the file's blocks to disk at close (``auto_da_alloc``),
    which cost 0.5-12 ms per store operation, three per ``observe`` (issue 22); an in-place write costs ~5 µs."""
    line = _owner_line().encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, line.ljust(OWNER_BYTES), 0)
        if len(line) > OWNER_BYTES:  # a host name longer than the padding: the file grew, so cut it to the line
            os.ftruncate(fd, len(line))
    finally:
        os.close(fd)


class Store:
    """Ledger + index + embedder for one store folder. Use :meth:`open`; call :meth:`release` when done.

    Raises (from the constructor):
        StoreError: the ledger file is not a SQLite database of this project.
        StoreBusyError: another process held the store past ``LOCK_TIMEOUT_S`` while this one opened it.
    """

    def __init__(self, path: Path, embedding_model: str = "") -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # not creatable: a file in the way, no permission, a virtual file system
            raise InvalidInputError(f"store path {str(path)!r} cannot be used as a folder ({exc.strerror or exc})") from None
        self.path = path
        self.location = str(path)
        self._key: tuple[str, ...] = (str(path), embedding_model)
        self._setup(embedding_model)
        # the folder lock: a file lock between processes (counted, so re-entrant) plus an RLock between threads
        self._file_lock = FileLock(str(path / ".store.lock"), timeout=LOCK_TIMEOUT_S, thread_local=False)
        self._owner_file = path / ".store.lock.owner"
        try:
            self.ledger = Ledger(path / LEDGER_FILE)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store {str(path)!r}: {LEDGER_FILE} is not a memory-graph ledger ({exc})") from None
        self._open()

    def _setup(self, embedding_model: str) -> None:
        """The state every kind of store starts with (embedder, caches, locks; no index client yet)."""
        self.embedding_model = embedding_model
        self._embedder: Embedder | None = None
        self._vectors: dict[str, np.ndarray] = {}
        self.refs = 0
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._index: VectorIndex | None = None
        self._scrubbed: dict[str, tuple[int, int]] = {}  # HNSW files as last scrubbed (scrub_unused_capacity)
        self._index_generation: int | None = None  # the ledger's index generation this process's client saw
        self._index_written = False

    def _open(self) -> None:
        """Reconcile the index with the ledger and refresh the planner's statistics (the end of every open)."""
        try:
            self.last_reconcile: dict[str, Any] = self.reconcile()
        except StoreError as exc:  # an unreadable index: the ledger still opens (inspect, history, reindex work)
            log.warning("%s", exc)
            self.last_reconcile = {"indexed": 0, "removed": 0, "skipped": 0, "error": str(exc)}
        with self.session():
            repaired = self.ledger.repair_lexical()
            if repaired:
                log.warning("store %s: the lexical index of %d namespace(s) disagreed with their memories (written "
                            "by an older memory-graph during an upgrade?); re-indexed", self.location, len(repaired))
            self.ledger.analyze_if_stale()

    # ---- lifecycle ---------------------------------------------------------------------------------------

    @property
    def threads_folder(self) -> Path | None:
        """Where the CLI chat keeps its threads (``threads.sqlite3``): the store folder; None for a server store."""
        return self.path

    @classmethod
    def get(cls, path: str | Path, embedding_model: str = "", create: bool = True, chroma_url: str = "") -> Store:
        """The shared store of ``path`` in this process (opened and reconciled on first use): a folder, or a
        PostgreSQL URL (``postgresql://...``) whose vectors are on the Chroma server ``chroma_url``
        (:class:`memory_graph.store.server.ServerStore`).

        Raises:
            InvalidInputError: ``path`` exists and is not a folder, or is not a usable path.
            StoreNotFoundError: ``create`` is False and ``path`` holds no store.
            StoreError: the folder holds a file that is not a memory-graph ledger; a server cannot be reached.
        """
        if looks_like_url(path) and not is_database_url(path):  # "http://...", "postgresql+psycopg://": no folder
            raise InvalidInputError(f"store {redact_url(str(path))[:200]!r} is neither a folder nor a postgresql:// URL")
        if is_database_url(path):
            from memory_graph.store.server import ServerStore

            server_key = (str(path), embedding_model, chroma_url)
            with _OPEN_LOCK:
                found = _OPEN.get(server_key)
                if found is None:
                    found = ServerStore(str(path), chroma_url, embedding_model, create=create)
                    _OPEN[server_key] = found
                return found
        try:
            folder = Path(path).expanduser().resolve()
            exists, is_dir, has_ledger = folder.exists(), folder.is_dir(), (folder / LEDGER_FILE).is_file()
        except (OSError, RuntimeError, ValueError, TypeError) as exc:  # e.g. a name over 255 bytes
            raise InvalidInputError(f"store path {str(path)[:200]!r} is not a usable path ({exc.__class__.__name__})") from None
        if exists and not is_dir:
            raise InvalidInputError(f"store path {str(folder)!r} exists and is not a folder")
        if not create and not has_ledger:
            raise StoreNotFoundError(f"store {str(folder)!r} does not exist (a command that writes creates it)")
        key = (str(folder), embedding_model)
        with _OPEN_LOCK:
            store = _OPEN.get(key)
            if store is None:
                try:
                    store = cls(folder, embedding_model)
                except MemoryGraphError:  # StoreBusyError is a TimeoutError, hence an OSError: keep it as it is
                    raise
                except OSError as exc:  # a name too long, a read-only or full disk, no permission
                    raise StoreError(f"store {str(folder)!r} cannot be opened or created ({exc.strerror or exc})") from None
                _OPEN[key] = store
            return store

    @classmethod
    def of(cls, injected: Any, path: str | Path, embedding_model: str = "", chroma_url: str = "") -> Store:
        """The store a graph run uses: ``injected`` (a LangGraph ``runtime.store``) when it carries a memory-graph
        store (``memory_graph_store``, see :class:`memory_graph.langgraph_store.MemoryStore`), else the shared
        store of ``path`` (:meth:`get`). Any other injected store (an app's ``InMemoryStore``) is not ours and is
        left alone."""
        store = getattr(injected, "memory_graph_store", None)
        return store if isinstance(store, Store) else cls.get(path, embedding_model, chroma_url=chroma_url)

    @classmethod
    def open(cls, path: str | Path, embedding_model: str = "", create: bool = True, chroma_url: str = "") -> Store:
        """Like :meth:`get`, taking a reference that :meth:`release` gives back."""
        store = cls.get(path, embedding_model, create=create, chroma_url=chroma_url)
        with _OPEN_LOCK:
            store.refs += 1
        return store

    def retain(self) -> Store:
        """Take one more reference (for a second owner of this object, e.g. a ``Memory`` built on it)."""
        with _OPEN_LOCK:
            self.refs += 1
        return self

    def release(self) -> None:
        """Drop one reference; the last one closes the SQLite connection and the Chroma client."""
        with _OPEN_LOCK:
            self.refs -= 1
            if self.refs <= 0:
                _OPEN.pop(self._key, None)
                with self._thread_lock:
                    self._close_index()
                    self.ledger.close()

    # ---- hard delete ---------------------------------------------------------------------------------------

    def erase(self, namespace: str, memory_ids: Sequence[str] = (), observation_ids: Sequence[str] = (),
              quotes: bool = True) -> dict[str, Any]:
        """Erase ``memory_ids`` and ``observation_ids`` of ``namespace`` and everything that came from or quotes
        them, from every file of the store (:mod:`memory_graph.store.erase`): one ledger transaction that also
        queues the index deletions and the chat-thread scrub (``erase_jobs``), then the index purge and the scrub.

        ``quotes``: whether what quotes the erased content goes too (``forget``: yes; a ``BaseStore`` delete of one
        item: no, it removes that item, its message and what it formed, as LangGraph's stores delete one item).

        Returns: ``{"forgotten": [memory ids], "observations": [observation ids], "hard": True, "kept": [memory
        ids formed from an erased message that another message supports, kept], "recalls": n, "items": n,
        "threads": threads rewritten, "threads_unknown_owner": threads of no known owner, left as they are,
        "possible_quotes": {id: text} of messages kept that share a number, a code or a secret's value with an
        erased message (at most 50, those holding a secret's value first), "possible_total": how many in all,
        "relabelled": [ids of kept messages whose ref or session id quoted the erased content and was replaced by
        ``erased:`` and a digest]}``.
        """
        from memory_graph.store import erase as erase_mod

        with self.session():
            planned = erase_mod.plan(self.ledger, namespace, memory_ids, observation_ids, by_quotation=quotes)
            refs = {r["ref"] for r in self.ledger.observations(namespace, planned.observations).values() if r["ref"]}
            with self.write() as tx:
                erased = erase_mod.apply(tx, namespace, planned)
                tx.add_event(namespace, None, "hard_forget", memories=len(planned.memories),
                             observations=len(planned.observations))
                tx.add_erase_job(namespace, planned.needles, sorted(refs), planned.same)
            self.reconcile()  # drops the queued index records and purges their vectors from Chroma's files
            threads = self.finish_erasures()
        possible = self.ledger.observations(namespace, planned.possible)
        return {"forgotten": planned.memories, "observations": planned.observations, "hard": True,
                "kept": planned.kept, "recalls": erased["recalls"], "items": erased["items"], **threads,
                "relabelled": sorted(planned.labels),
                "possible_quotes": {o: str(possible[o]["text"]) for o in planned.possible if o in possible},
                "possible_total": planned.possible_total}

    def preview_erase(self, namespace: str, memory_ids: Sequence[str] = (), observation_ids: Sequence[str] = (),
                      quotes: bool = True) -> dict[str, Any]:
        """What :meth:`erase` with the same arguments would remove, written nowhere: the plan it would apply
        (:func:`memory_graph.store.erase.plan`), with the texts, so that a user can read which of their messages
        a hard delete takes as quoting the erased content before confirming it.

        Returns: ``{"forgotten": [memory ids], "observations": [observation ids], "hard": True, "dry_run": True,
        "kept": [memory ids], "memory_texts": {id: text}, "observation_texts": {id: text}, "items": [{"namespace":
        path, "key": key}], "relabelled": [ids], "possible_quotes": {id: text}, "possible_total": n}`` (the ``BaseStore`` items it would delete; the messages it
        would keep that share a number or a code with an erased one). Chat-thread copies of those messages are not
        listed (they go with them)."""
        from memory_graph.store import erase as erase_mod

        with self.session():
            planned = erase_mod.plan(self.ledger, namespace, memory_ids, observation_ids, by_quotation=quotes)
            mems = self.ledger.memories(namespace, planned.memories)
            obs = self.ledger.observations(namespace, planned.observations + planned.possible)
        return {"forgotten": planned.memories, "observations": planned.observations, "hard": True, "dry_run": True,
                "kept": planned.kept, "memory_texts": {m: str(mems[m]["text"]) for m in planned.memories if m in mems},
                "observation_texts": {o: str(obs[o]["text"]) for o in planned.observations if o in obs},
                "items": [{"namespace": path, "key": key} for path, key, _ in planned.items],
                "relabelled": sorted(planned.labels),
                "possible_quotes": {o: str(obs[o]["text"]) for o in planned.possible if o in obs},
                "possible_total": planned.possible_total}

    def finish_erasures(self) -> dict[str, int]:
        """Finish every hard delete whose ledger part committed (``erase_jobs``, any namespace: a process may have
        been killed in between): scrub the chat threads of its namespace, drop the job, VACUUM the ledger.

        Only threads known to belong to the namespace's user are scrubbed: the ledger's ``thread_owners`` (every
        thread the graphs ran on) or a :func:`memory_graph.threads.thread_key` id. A thread of no known owner (an
        app's own checkpointer on the file, never run through the graphs) may be another user's and is left as it
        is (fourth breaker run: alice's hard delete rewrote bob's thread ``support-42``); it is counted.

        Returns: ``{"threads": threads rewritten, "threads_unknown_owner": threads left, of no known owner}``.

        Raises:
            StoreError: the threads file cannot be read (it names the file); every other step is done, the job of
                each unscrubbed namespace stays queued and is retried on the next open (fifth breaker run, F5)."""
        from memory_graph.store import checkpoints, tombstones
        from memory_graph.store.erase import erase_job_needles
        from memory_graph.store.quoting import quotes

        done = {"threads": 0, "threads_unknown_owner": 0}
        if not self.ledger.erase_jobs():
            return done
        failed: StoreError | None = None
        with self.session():
            owners = self.ledger.thread_owners()
            with self.write() as tx:
                salt = tombstones.salt(tx)
            for job in self.ledger.erase_jobs():
                needles, same = erase_job_needles(job["needles"])
                renamed: dict[str, str] = {}
                if self.threads_folder is not None:
                    try:
                        rewritten, unknown, renamed = checkpoints.scrub_threads(
                            self.threads_folder, job["namespace"], needles, set(json.loads(job["refs"])), same,
                            owners, salt)
                    except StoreError as exc:  # an unreadable threads file: the job stays, the rest goes on
                        failed = failed or exc
                        continue
                    done["threads"] += rewritten
                    done["threads_unknown_owner"] = max(done["threads_unknown_owner"], unknown)
                # the owners' record names the threads too: a quoting name moves as the thread did (or would)
                for tid, owner in owners.items():
                    if owner == job["namespace"] and tid not in renamed and quotes(tid, needles):
                        renamed[tid] = checkpoints.relabelled_thread(tid, owner, salt)
                with self.write() as tx:
                    tx.rename_threads(renamed)
                    tx.drop_erase_job(job["id"])
                owners = {renamed.get(t, t): o for t, o in owners.items()}
            self.ledger.vacuum()
        if failed is not None:
            raise StoreError(f"the hard delete is done in the ledger and the index, not in the chat threads: "
                             f"{failed}") from failed
        return done

    # ---- the folder lock -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(self) -> Iterator[Store]:
        """Hold the store for one operation (re-entrant). Other processes and threads wait until it ends.

        On the outermost entry, the Chroma client is reopened when another process wrote to the index since this
        process last held the lock. Writes to the index inside the session bump the ledger's index generation
        when the session ends, which tells the other processes to reopen theirs.

        Raises:
            StoreBusyError: another process held the lock for ``LOCK_TIMEOUT_S`` seconds; the message names it.
        """
        with self._thread_lock:
            if self._depth == 0:
                self._acquire_file_lock()
                try:
                    self._refresh_index()
                except BaseException:
                    self._file_lock.release()
                    raise
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
                if self._depth == 0:
                    try:
                        if self._index is not None:  # Chroma rewrites HNSW files on load too, with stale memory
                            with contextlib.suppress(OSError):
                                scrub_unused_capacity(self.path / "chroma", self._scrubbed)
                        if self._index_written:
                            self._index_generation = self.ledger.bump_index_generation()
                            self._index_written = False
                    finally:
                        self._file_lock.release()

    @contextlib.contextmanager
    def write(self) -> Iterator[Tx]:
        """One write: the store's lock (:meth:`session`) and one ledger transaction, whose typed operations
        (:class:`~memory_graph.store.tx.Tx`) are the only way code outside this package changes the ledger. It
        commits when the block ends and rolls back when it raises."""
        with self.session(), self.ledger.tx() as tx:
            yield tx

    def _acquire_file_lock(self) -> None:
        started = time.monotonic()
        try:
            self._file_lock.acquire()
        except Timeout:
            try:
                holder = json.loads(self._owner_file.read_text(encoding="utf-8").strip())
                # pid, host and time only: the holder's command line can quote another user's question
                who = f"pid {holder.get('pid')} on {holder.get('host')} (since {holder.get('since')})"
            except (OSError, ValueError, AttributeError):
                who = "another process"
            raise StoreBusyError(
                f"store {str(self.path)!r} is in use by {who}; waited {time.monotonic() - started:.0f} s "
                f"(MEMORY_GRAPH_LOCK_TIMEOUT)"
            ) from None
        with contextlib.suppress(OSError):
            _write_owner(self._owner_file)

    def _refresh_index(self) -> None:
        generation = self.ledger.index_generation()
        if self._index is not None and generation != self._index_generation:
            self._close_index()  # another process wrote: our client's in-memory vectors are stale
        self._index_generation = generation

    def _close_index(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    @property
    def index(self) -> VectorIndex:
        """The Chroma index (opened on first use). Use it only inside :meth:`session`."""
        if self._depth == 0:
            raise RuntimeError("Store.index used outside Store.session()")
        if self._index is None:
            self._index = self._open_index()
        return self._index

    def _open_index(self) -> VectorIndex:
        """A client of this store's vector index: the ``chroma/`` folder (a server store overrides it).

        Raises:
            StoreError: Chroma cannot open the folder (corrupt or foreign files); the message names ``reindex``.
        """
        try:
            return VectorIndex(self.path / "chroma")
        except Exception as exc:  # noqa: BLE001 - Chroma raises its own classes for a corrupt or foreign file
            raise StoreError(
                f"the vector index {str(self.path / 'chroma')!r} cannot be opened ({type(exc).__name__}: {exc}); "
                f"it is derived from the ledger: rebuild it with `memory-graph reindex --store {self.path}`"
            ) from exc

    def _wrote_index(self) -> None:
        self._index_written = True

    # ---- embeddings --------------------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(self.embedding_model)
        return self._embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> float32 array (len(texts), dim), reusing vectors of texts embedded recently (one
        batch per turn: the extract node embeds observations and memory texts together, the link node reuses
        them). The cache holds at most ``EMBED_CACHE_SIZE`` texts; a call never depends on what it evicts."""
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        found = {t: self._vectors[t] for t in dict.fromkeys(texts) if t in self._vectors}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, self.embedder.embed(missing), strict=True))
        for text in missing:
            self._vectors[text] = found[text]
        while len(self._vectors) > EMBED_CACHE_SIZE:
            self._vectors.pop(next(iter(self._vectors)))
        return np.stack([found[t] for t in texts])

    def drop_caches(self) -> None:
        """Forget the texts embedded recently (:meth:`embed`) and the stored vectors the open index keeps
        (``VectorIndex.vectors``): the next reads start cold. Changes no result (benchmarks use it between passes)."""
        with self._thread_lock:
            self._vectors.clear()
            if self._index is not None:
                self._index.forget_kept()

    # ---- index operations (every Chroma call of the project goes through these) --------------------------------

    def search_memories(
        self, vector: np.ndarray, namespace: str, n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """Nearest ``n`` memories of ``namespace`` matching the metadata filter ``where`` -> ``[(id, cosine)]``."""
        return self.search_memories_many(vector, namespace, [IndexQuery(n, where)])[0]

    def search_memories_many(
        self, vector: np.ndarray, namespace: str, requests: Sequence[IndexQuery]
    ) -> list[list[tuple[str, float]]]:
        """Several searches of memories by one query vector -> one ``[(id, cosine)]`` list per request, nearest
        first (see :meth:`search`)."""
        return self.search(vector, namespace, requests)[0]

    def search_observations(
        self, vector: np.ndarray, namespace: str, n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """Nearest ``n`` observations of ``namespace`` matching ``where`` (fields ``time``, ``namespace``) ->
        ``[(id, cosine)]`` (see :meth:`search`)."""
        return self.search(vector, namespace, [], [IndexQuery(n, where)])[1][0]

    def search(
        self, vector: np.ndarray, namespace: str, memories: Sequence[IndexQuery],
        observations: Sequence[IndexQuery] = (),
    ) -> tuple[list[list[tuple[str, float]]], list[list[tuple[str, float]]]]:
        """Searches of memories and of observations by one query vector, each part of the namespace's index queried
        once for all of them (a recall reads three parts, not four) -> ``(one [(id, cosine)] list per memory
        request, one per observation request)``, nearest first.

        Each request reads the parts of the namespace's index that can hold what it asks for (``memory_parts``:
        the ``live`` part alone for current and contested memories; observations: ``obs`` and the ``live`` part's
        inbox), fetching the nearest ``FIRST_FETCH`` records of each unfiltered, and keeps those whose ledger row
        satisfies its filter (:func:`~memory_graph.store.index.matches` on the row's filter fields). A request left
        short is answered from a wider fetch (``OVERFETCH``), then exactly: by scoring the stored vectors of the
        records the ledger finds for its filter (an index range when at most ``FEW_MATCHES`` memories, else every
        record of the namespace: O(namespace), rare). Why: Chroma evaluates a metadata filter over a whole
        collection (20-47 ms at 10k memories, against about 1 ms unfiltered, issue 13), and no status lives in
        Chroma (issue 22: a status change writes nothing there)."""
        kinds = {
            "memories": _Kind(lambda r: memory_parts(r.where), "memories",
                              memory_metadata, lambda where, limit: self.ledger.memory_ids_matching(namespace, where, limit),
                              lambda: self.ledger.memory_filters(namespace)),
            "observations": _Kind(lambda r: (OBSERVATIONS, LIVE), "observations",
                                  observation_metadata, lambda where, limit: None,
                                  lambda: self.ledger.observation_filters(namespace)),
        }
        asked = [(r, kinds["memories"]) for r in memories] + [(r, kinds["observations"]) for r in observations]
        with self.session():
            found = self._search_many(namespace, vector, asked)
        return found[: len(memories)], found[len(memories) :]

    def _search_many(
        self, namespace: str, vector: np.ndarray, requests: Sequence[tuple[IndexQuery, _Kind]],
    ) -> list[list[tuple[str, float]]]:
        index = self.index
        fetch = max(FIRST_FETCH, 2 * max((r.n for r, _ in requests), default=1))
        fields = set().union(*(filter_fields(r.where) for r, _ in requests))
        found: dict[int, list[tuple[str, float]]] = {}
        while True:
            parts = list(dict.fromkeys(p for r, kind in requests for p in kind.parts_of(r)))
            near = dict(zip(parts, side_by_side([partial(index.nearest, namespace, part, vector, fetch) for part in parts]),
                            strict=True))
            fetched = list(dict.fromkeys(i for hits in near.values() for i, _ in hits))
            tables = list(dict.fromkeys(kind.table for _, kind in requests))
            read = self.ledger.filter_rows(namespace, fetched, tables)  # this namespace's rows, one read for all kinds
            metas: dict[int, dict[str, dict[str, Any]]] = {}  # per kind (by id of its object): their filter fields
            for _, kind in requests:
                if id(kind) not in metas:
                    metas[id(kind)] = {}
                    for i, row in read[kind.table].items():
                        with contextlib.suppress(ValueError, OverflowError):  # an unreadable date is never indexed
                            metas[id(kind)][i] = kind.metadata(row, fields)
            short: list[int] = []
            for k, (request, kind) in enumerate(requests):
                if k in found:
                    continue
                chosen = kind.parts_of(request)
                pool: dict[str, float] = {}
                for part in chosen:
                    for i, s in near[part]:
                        pool[i] = max(s, pool.get(i, s))  # a record in two parts (a move cut short) counts once
                rows = metas[id(kind)]
                hits = [(i, s) for i, s in sorted(pool.items(), key=lambda h: -h[1])
                        if i in rows and matches(rows[i], request.where or {})]
                # a part fetched to its limit may hold more beyond its farthest record: only hits at least that
                # near are certain to be in the request's answer, in order
                edge = max((near[p][-1][1] for p in chosen if len(near[p]) >= fetch), default=float("-inf"))
                certain = [h for h in hits if h[1] >= edge]
                if request.least == 0:
                    found[k] = hits[: max(1, request.n)]
                elif len(certain) >= min(request.n, request.least):
                    found[k] = certain[: max(1, request.n)]
                else:
                    short.append(k)
            if not short:
                break
            if fetch < OVERFETCH:
                for k in short:  # a filter the ledger resolves to a few memories: score those
                    request, kind = requests[k]
                    ids = kind.matching(request.where, FEW_MATCHES + 1)
                    if ids is not None and len(ids) <= FEW_MATCHES:
                        found[k] = self._scored(namespace, vector, ids, kind.parts_of(request), request.n)
                if len(found) == len(requests):
                    break
                fetch = OVERFETCH  # a second, wider fetch
                continue
            for k in short:  # exact: every record of the namespace the filter matches, by its stored vector
                request, kind = requests[k]
                ids = []
                for i, row in kind.every_row().items():
                    with contextlib.suppress(ValueError, OverflowError):
                        if matches(kind.metadata(row, fields), request.where or {}):
                            ids.append(i)
                found[k] = self._scored(namespace, vector, ids, kind.parts_of(request), request.n)
            break
        return [found[k] for k in range(len(requests))]

    def _scored(self, namespace: str, vector: np.ndarray, ids: Sequence[str], parts: Sequence[str], n: int) -> list[tuple[str, float]]:
        """The ``n`` of ``ids`` nearest ``vector`` by their stored vectors (an exact search of a known set)."""
        return cosine_ranked(vector, self.index.vectors(namespace, ids, parts))[: max(1, n)]

    def search_lexical(self, namespace: str, query: str, k: int = LEXICAL_K) -> list[str]:
        """Ids of the ``k`` memories of ``namespace`` sharing the most BM25 weight with ``query``, best first
        (see :mod:`memory_graph.store.lexical`)."""
        return lexical.search(self.ledger, namespace, query, k)

    def memory_vectors(self, ids: Sequence[str], namespace: str,
                       known: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Stored vectors of the memories ``ids`` of ``namespace`` (those indexed) -> ``{id: (dim,) float32}``.
        ``known``: vectors already read (in this hold of the store), keyed by record id (ids are unique across a
        namespace's memories and observations, which share its ``live`` part); only the others are read from the
        index (one read per part that holds some), and they are added to it."""
        return self._stored_vectors(ids, namespace, known, (LIVE, REPLACED))

    def record_vectors(self, ids: Sequence[str], namespace: str,
                       known: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """:meth:`memory_vectors` of records of either kind (memories and observations: every part)."""
        return self._stored_vectors(ids, namespace, known, (LIVE, OBSERVATIONS, REPLACED))

    def _stored_vectors(self, ids: Sequence[str], namespace: str, known: dict[str, np.ndarray] | None,
                        parts: Sequence[str]) -> dict[str, np.ndarray]:
        known = {} if known is None else known
        missing = [i for i in dict.fromkeys(ids) if i not in known]
        if missing:
            with self.session():
                known.update(self.index.vectors(namespace, missing, parts))
        return {i: known[i] for i in ids if i in known}

    def index_counts(self) -> dict[str, int]:
        """Records in the index: ``{"memories": n, "observations": n}`` (all namespaces; reads every collection)."""
        with self.session():
            return self.index.counts()

    # ---- index maintenance -----------------------------------------------------------------------------

    def index_turn(self, namespace: str, observation_ids: Sequence[str], memory_ids: Sequence[str]) -> None:
        """Index one turn of ``namespace``: its observations and the memories formed from them, in one Chroma write
        to the namespace's ``live`` part (issue 22: a turn cost 2.6 upserts and 1.6 deletes before). The
        observations and any memory not held (created already replaced) are in the inbox (``index_inbox``): they
        belong in the ``obs`` / ``old`` parts, where they are moved ``FILE_BATCH`` at a time
        (:meth:`_file_inbox`); searches read the ``live`` part beside those parts, so they are found meanwhile."""
        ids = [*dict.fromkeys(observation_ids), *dict.fromkeys(memory_ids)]
        if not ids:
            return
        with self.session():
            obs = {r["id"]: r for r in self.ledger.query_in(
                "SELECT id, namespace, text, time FROM observations WHERE namespace=? AND id IN ({marks})", namespace,
                list(dict.fromkeys(observation_ids)))}
            mems = {r["id"]: r for r in self.ledger.query_in(
                "SELECT * FROM memories WHERE namespace=? AND id IN ({marks})", namespace, list(dict.fromkeys(memory_ids)))}
            good_obs, _, bad_obs = self._metadata([obs[i] for i in dict.fromkeys(observation_ids) if i in obs], observation_metadata)
            good_mem, _, bad_mem = self._metadata([mems[i] for i in dict.fromkeys(memory_ids) if i in mems], memory_metadata)
            texts = [str(r["text"]) for r in good_obs] + [_memory_text(r) for r in good_mem]
            written = [r["id"] for r in good_obs] + [r["id"] for r in good_mem]
            if written:
                self.index.upsert(namespace, LIVE, written, self.embed(texts),
                                  [OBSERVATION] * len(good_obs) + [MEMORY] * len(good_mem))
                self._wrote_index()
            inbox = [r["id"] for r in good_obs] + [r["id"] for r in good_mem if r["status"] not in LIVE_STATUSES]
            with self.ledger.tx() as cur:
                cur.executemany("UPDATE observations SET indexed=1 WHERE id=?", [(r["id"],) for r in good_obs])
                cur.executemany("UPDATE memories SET indexed=1 WHERE id=?", [(r["id"],) for r in good_mem])
                cur.executemany("UPDATE observations SET indexed=-1 WHERE id=?", [(i,) for i in bad_obs])
                cur.executemany("UPDATE memories SET indexed=-1 WHERE id=?", [(i,) for i in bad_mem])
                cur.executemany("INSERT OR IGNORE INTO index_inbox(namespace, id) VALUES (?, ?)", [(namespace, i) for i in inbox])
            self._file_inbox(namespace)

    def _file_inbox(self, namespace: str, force: bool = False) -> int:
        """Move the records of ``namespace``'s inbox (``index_inbox``: in the ``live`` part, belonging elsewhere)
        to their parts once there are ``FILE_BATCH`` of them (or any, with ``force``): observations to ``obs``,
        replaced memories to ``old``; a memory held again stays. One read, at most two writes and one delete per
        ``FILE_BATCH`` turns. Idempotent: a move cut short is finished by the next one. Returns the records moved."""
        count = self.ledger.query("SELECT COUNT(*) AS n FROM index_inbox WHERE namespace=?", (namespace,))[0]["n"]
        if not count or (count < FILE_BATCH and not force):
            return 0
        ids = [r["id"] for r in self.ledger.query("SELECT id FROM index_inbox WHERE namespace=?", (namespace,))]
        targets = {i: OBSERVATIONS for i in self.ledger.observation_filters(namespace, ids)}
        targets.update({i: LIVE if r["status"] in LIVE_STATUSES else REPLACED
                        for i, r in self.ledger.memory_filters(namespace, ids).items()})
        moved = self.index.move(namespace, ids, LIVE, targets)
        if moved:
            self._wrote_index()
        with self.ledger.tx() as cur:
            cur.executemany("DELETE FROM index_inbox WHERE namespace=? AND id=?", [(namespace, i) for i in ids])
        return len(moved)

    def index_memories(self, ids: Sequence[str]) -> int:
        """Embed ledger memories ``ids`` and upsert them into their namespace's ``live`` or ``old`` part by status;
        returns the rows skipped (see ``_index_rows``)."""
        return self._index_rows("memories", ids, "SELECT * FROM memories WHERE id IN ({marks})", memory_metadata,
                                _memory_text)

    def index_observations(self, ids: Sequence[str]) -> int:
        """Embed ledger observations ``ids`` and upsert them into their namespace's ``obs`` part; returns the rows
        skipped."""
        return self._index_rows("observations", ids, "SELECT id, namespace, text, time FROM observations WHERE id IN ({marks})",
                                observation_metadata)

    def sync_metadata(self, ids: Sequence[str]) -> None:
        """Bring the index in line with a status change of memories ``ids`` (nothing to write in the common case: no
        status lives in Chroma, issue 22). A memory now replaced that sits in the ``live`` part joins the inbox
        (moved with the next batch); one held again that sits in ``old`` is moved back now (a successor erased: rare);
        one the index lost (an earlier write failed) is indexed again. Reads by id only."""
        if not ids:
            return
        with self.session():
            rows = self.ledger.query(f"SELECT id, namespace, status FROM memories WHERE id IN ({','.join('?' * len(ids))})",
                                     tuple(ids))
            by_ns: dict[str, list[Any]] = {}
            for r in rows:
                by_ns.setdefault(r["namespace"], []).append(r)
            lost: list[str] = []
            for ns, group in by_ns.items():
                in_live = self.index.present(ns, LIVE, [r["id"] for r in group])
                elsewhere = [r for r in group if r["id"] not in in_live]
                in_old = self.index.present(ns, REPLACED, [r["id"] for r in elsewhere])
                back = {r["id"]: LIVE for r in elsewhere if r["id"] in in_old and r["status"] in LIVE_STATUSES}
                if back:
                    self.index.move(ns, list(back), REPLACED, back)
                    self._wrote_index()
                lost += [r["id"] for r in elsewhere if r["id"] not in in_old]
                leaving = [r["id"] for r in group if r["id"] in in_live and r["status"] not in LIVE_STATUSES]
                with self.ledger.tx() as cur:
                    cur.executemany("INSERT OR IGNORE INTO index_inbox(namespace, id) VALUES (?, ?)", [(ns, i) for i in leaving])
                    cur.executemany("UPDATE memories SET indexed=1 WHERE id=? AND indexed=0",
                                    [(r["id"],) for r in group if r["id"] not in lost])
                self._file_inbox(ns)
            if lost:  # not in the index (an earlier write failed): index them now rather than mark them done
                log.warning("%d memories were missing from the vector index; indexing them again", len(lost))
                self.index_memories(lost)

    def _index_rows(self, table: str, ids: Sequence[str], sql: str, metadata: Callable[[Any], dict[str, Any]],
                    text_of: Callable[[Any], str] = lambda r: str(r["text"])) -> int:
        """Upsert the rows of ``table`` (``memories`` | ``observations``) with ids ``ids`` into their parts of the
        index (observations: ``obs``; memories: ``live`` when held, else ``old``), embedding their text (the embed
        cache makes a turn's second embedding free): one write per namespace and part. A row whose metadata cannot
        be built (an unreadable date) is marked ``indexed = -1`` and logged; returns how many were."""
        if not ids:
            return 0
        with self.session():
            by_id = {r["id"]: r for r in self.ledger.query(sql.format(marks=",".join("?" * len(ids))), tuple(ids))}
            rows = [by_id[i] for i in dict.fromkeys(ids) if i in by_id]
            good, _, bad = self._metadata(rows, metadata)
            groups: dict[tuple[str, str], list[Any]] = {}
            for r in good:
                part = OBSERVATIONS if table == "observations" else LIVE if r["status"] in LIVE_STATUSES else REPLACED
                groups.setdefault((r["namespace"], part), []).append(r)
            for (ns, part), group in groups.items():
                self.index.upsert(ns, part, [r["id"] for r in group], self.embed([text_of(r) for r in group]),
                                  [OBSERVATION if table == "observations" else MEMORY] * len(group))
                self._wrote_index()
            self._mark_indexed(table, [r["id"] for r in good], bad)
            return len(bad)

    @staticmethod
    def _metadata(
        rows: Sequence[Any], metadata: Callable[[Any], dict[str, Any]]
    ) -> tuple[list[Any], list[dict[str, Any]], list[str]]:
        good, metas, bad = [], [], []
        for r in rows:
            try:
                metas.append(metadata(r))
                good.append(r)
            except (ValueError, OverflowError) as exc:  # e.g. a date an older version wrote unreadably
                log.warning("%s cannot be indexed: %s", r["id"], exc)
                bad.append(r["id"])
        return good, metas, bad

    def _mark_indexed(self, table: str, ok: Sequence[str], bad: Sequence[str]) -> None:
        with self.ledger.tx() as cur:
            cur.executemany(f"UPDATE {table} SET indexed=1 WHERE id=?", [(i,) for i in ok])
            cur.executemany(f"UPDATE {table} SET indexed=-1 WHERE id=?", [(i,) for i in bad])

    def reconcile(self) -> dict[str, int]:
        """Bring the index in line with the ledger in O(rows to fix): move a layout-2 index into layout 3 (once),
        index rows with ``indexed = 0``, drop the index records queued in ``index_drops`` and file every inbox.
        Never raises for a bad row: it is skipped, logged and counted. Returns ``{"indexed", "removed",
        "skipped"}``."""
        with self.session():
            self._recover_compaction()
            self._recover_missing_index()
            self._migrate_layout()
            dirty_mem = [r["id"] for r in self.ledger.query("SELECT id FROM memories WHERE indexed=0 ORDER BY rowid")]
            # an observation not yet linked (processed = 0) is left to the link node that forms its memories, in
            # its own process or in the next observe of its namespace (nodes.extract re-reads it): re-embedding it
            # here made an open during a paste take 34-44 s (breaker run, issue 21)
            dirty_obs = [r["id"] for r in self.ledger.query(
                "SELECT id FROM observations WHERE indexed=0 AND processed=1 ORDER BY rowid")]
            removed = self._apply_index_deletes()
            for r in self.ledger.query("SELECT DISTINCT namespace FROM index_inbox"):
                self._file_inbox(r["namespace"], force=True)
        skipped = 0  # each batch embedded before the store is held, then indexed under one short hold
        for table, dirty in (("memories", dirty_mem), ("observations", dirty_obs)):
            for start in range(0, len(dirty), 256):
                batch = self._prefetch_vectors(table, dirty[start : start + 256])
                skipped += self.index_memories(batch) if table == "memories" else self.index_observations(batch)
        return {"indexed": len(dirty_mem) + len(dirty_obs) - skipped, "removed": removed, "skipped": skipped}

    def _prefetch_vectors(self, table: str, ids: list[str]) -> list[str]:
        """Embed the texts of the rows ``ids`` of ``table`` that are still unindexed, into the embed cache, without
        holding the store; returns those ids (another process may have indexed the rest meanwhile)."""
        marks = ",".join("?" * len(ids))
        rows = self.ledger.query(f"SELECT * FROM {table} WHERE indexed=0 AND id IN ({marks})", tuple(ids))
        self.embed([_memory_text(r) if table == "memories" else str(r["text"]) for r in rows])
        return [r["id"] for r in rows]

    def _migrate_layout(self) -> None:
        """Move an index made before issue 22 (layout 2: collections ``memories``, ``replaced_memories`` and
        ``observations`` shared by every namespace, the namespace in each record's metadata) into a collection per
        namespace and part, with its stored vectors (no new embedding): O(index), once. A record of a namespace or
        id the ledger no longer holds is dropped; ledger rows the old index lacked stay marked for indexing."""
        index = self.index
        legacy = index.legacy_names()
        if not legacy:
            return
        moved = 0
        for name, (ids, vectors, metas) in index.dump(legacy).items():
            is_obs = name == f"{index.prefix}observations"
            groups: dict[str, list[int]] = {}
            for k, meta in enumerate(metas):
                if isinstance(meta.get("namespace"), str):
                    groups.setdefault(meta["namespace"], []).append(k)
            for ns, picked in groups.items():
                chosen = [ids[k] for k in picked]
                if is_obs:
                    known = self.ledger.observation_filters(ns, chosen)
                    parts = {i: OBSERVATIONS for i in known}
                else:
                    parts = {i: LIVE if r["status"] in LIVE_STATUSES else REPLACED
                             for i, r in self.ledger.memory_filters(ns, chosen).items()}
                for part in (LIVE, OBSERVATIONS, REPLACED):
                    keep = [k for k in picked if parts.get(ids[k]) == part]
                    index.upsert(ns, part, [ids[k] for k in keep], vectors[keep],
                                 [OBSERVATION if is_obs else MEMORY] * len(keep))
                    moved += len(keep)
        for name in legacy:
            index.client.delete_collection(name)
        self._wrote_index()
        log.info("index of %s: %d records moved to a collection per namespace (layout %d)", self.location, moved, LAYOUT)

    def _apply_index_deletes(self) -> int:
        """Delete the index records hard deletes queued (``index_drops``: from their namespace's collections;
        ``index_deletes``, queued before collections per namespace: from every collection), then compact."""
        queued = self.ledger.query("SELECT namespace, id FROM index_drops")
        legacy = self.ledger.query("SELECT collection, id FROM index_deletes")
        if not queued and not legacy:
            return 0
        by_ns: dict[str | None, list[str]] = {None: [r["id"] for r in legacy]} if legacy else {}
        for r in queued:
            by_ns.setdefault(r["namespace"], []).append(r["id"])
        for ns, ids in by_ns.items():  # every part: a record may sit in the inbox or be mid-move
            self.index.delete(ns, ids)
        self._wrote_index()
        self._purge_index_files([i for ids in by_ns.values() for i in ids])
        with self.ledger.tx() as cur:
            cur.executemany("DELETE FROM index_drops WHERE namespace=? AND id=?", [(r["namespace"], r["id"]) for r in queued])
            cur.executemany("DELETE FROM index_deletes WHERE collection=? AND id=?", [(r["collection"], r["id"]) for r in legacy])
            cur.executemany("DELETE FROM index_inbox WHERE id=?", [(i,) for ids in by_ns.values() for i in ids])
        return len(queued) + len(legacy)

    def _purge_index_files(self, ids: Sequence[str]) -> None:
        """Leave no vector of ``ids`` in Chroma's files. Deleting from Chroma is not enough: its HNSW files keep a
        deleted element's vector (hnswlib only marks it deleted) and its write-ahead log (``embeddings_queue``)
        keeps an upserted vector until compaction. So the index is compacted: every remaining record is read
        out, the ``chroma/`` folder is replaced by a new one holding only them, and the old folder is removed.
        O(index size), on a hard delete only. A crash in between is repaired on the next open
        (``_recover_compaction``: the index is rebuilt from the ledger)."""
        if not ids:
            return
        dump = self.index.dump()
        self._close_index()
        folder, old = self.path / "chroma", self.path / COMPACTING
        if old.exists():
            shutil.rmtree(old)
        folder.rename(old)
        fresh = self.index
        for name, (rec_ids, vectors, metas) in dump.items():
            fresh.restore(name, rec_ids, vectors, metas)
        self._close_index()
        scrub_unused_capacity(folder, self._scrubbed)
        shutil.rmtree(old)
        self._wrote_index()

    def _drop_index(self, every_row: bool = True) -> None:
        """Drop the derived index (``chroma/``, a half-done compaction, or a file where either folder belongs) and
        mark the ledger's rows for indexing, so the next reconcile rebuilds it. ``every_row=False`` leaves rows
        that could not be indexed (``indexed = -1``) skipped."""
        self._discard_index()
        where = "" if every_row else " WHERE indexed=1"
        with self.ledger.tx() as cur:
            cur.execute(f"UPDATE memories SET indexed=0{where}")
            cur.execute(f"UPDATE observations SET indexed=0{where}")
            cur.execute("DELETE FROM index_deletes")
            cur.execute("DELETE FROM index_drops")
            cur.execute("DELETE FROM index_inbox")
        self._wrote_index()

    def _discard_index(self) -> None:
        """Delete the index's data: the ``chroma/`` folder and a half-done compaction (a server store overrides it)."""
        self._close_index()
        for folder in (self.path / "chroma", self.path / COMPACTING):
            if folder.exists() and not folder.is_dir():
                folder.unlink()
            shutil.rmtree(folder, ignore_errors=True)

    def _recover_missing_index(self) -> None:
        """An index folder that is gone (or a Chroma database of zero bytes) while the ledger says rows are
        indexed: every row is marked for indexing, so this reconcile rebuilds it (the index is derived; before,
        recall silently found nothing)."""
        database = self.path / "chroma" / "chroma.sqlite3"
        missing = not database.is_file() or database.stat().st_size == 0
        if not missing or not self.ledger.query(
            "SELECT 1 FROM memories WHERE indexed=1 UNION ALL SELECT 1 FROM observations WHERE indexed=1 LIMIT 1"
        ):
            return
        log.warning("store %s: the vector index is missing; rebuilding it from the ledger", self.path)
        self._drop_index(every_row=False)

    def _recover_compaction(self) -> None:
        """A compaction that a crash interrupted: drop both index folders and re-index from the ledger."""
        if not (self.path / COMPACTING).exists():
            return
        log.warning("store %s: an index compaction was interrupted; rebuilding the index from the ledger", self.path)
        self._drop_index()

    def reindex(self) -> dict[str, int]:
        """Rebuild the Chroma index from the ledger (all namespaces): the ``chroma/`` folder is dropped, whatever
        it holds (also an unreadable one), and built again. Returns ``reconcile``'s counts plus the records the
        index then holds."""
        with self.session():
            self._drop_index()
            counts = self.reconcile()
            return {**counts, **self.index_counts()}
