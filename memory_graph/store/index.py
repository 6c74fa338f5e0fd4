"""The Chroma vector index: derived from the ledger, rebuildable, holding vectors and a record type only.

No text is stored in Chroma (the ledger holds it), so a hard delete only has to drop the record here. Each
namespace has three collections (``PARTS``, see ``VectorIndex``): ``live`` (held memories, and the latest turns'
records until they are filed), ``obs`` (observations) and ``old`` (replaced memories). No status, date or
scope is kept in Chroma: a search fetches the nearest records of the parts that can hold what it asks for,
unfiltered, and applies its filter to their ledger rows (``Store.search_memories_many``), so a status change
writes nothing to Chroma and a turn is indexed in one write (issue 22).
Embeddings are passed in explicitly (Chroma's default embedding function would download a model) and
Chroma's telemetry is off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import struct
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from memory_graph.parallel import side_by_side

FAR_FUTURE = 253402300800  # 10000-01-01T00:00:00Z, after every storable time: stands for "still valid"
log = logging.getLogger(__name__)
_HNSW_HEADER = struct.Struct("<iQQQQ")
"""Start of ``header.bin`` of Chroma's HNSW segment (hnswlib's saveIndex fields, with a leading format
version): version, offsetLevel0, max_elements, cur_element_count, size_data_per_element."""


def scrub_unused_capacity(folder: Path, seen: dict[str, tuple[int, int]] | None = None) -> int:
    """Zero the unused capacity of every HNSW segment file under ``folder``; returns the bytes zeroed.

    hnswlib allocates ``data_level0`` (and the per-element link-list sizes, ``length.bin``) for ``max_elements``
    with ``malloc`` and Chroma writes all of it (when a segment is created and again when a client loads it), so
    the slots past
    ``cur_element_count`` hold whatever the process's freed memory held: measured, the erased vectors after a
    hard delete (2 of 8 compactions of a 300-record store) and the text of a message the process had handled.
    Only the live slots are ever read back, so zeroing the rest changes nothing Chroma sees. ``seen`` maps a
    file to its ``(mtime_ns, size)`` after the last scrub: a file Chroma has not rewritten since is skipped
    (so the cost is paid only when Chroma wrote the file, in proportion to what it wrote). A header that does
    not parse as expected (another Chroma format) is skipped and logged, never guessed at. Call it with no
    Chroma write in progress on ``folder`` (inside the store's session).
    """
    zeroed = 0
    seen = {} if seen is None else seen
    for where, _, names in os.walk(folder):  # every store operation ends here: plain os calls, no pathlib
        if "header.bin" not in names or _unchanged(where, seen):
            continue
        header = Path(where) / "header.bin"
        try:
            raw = header.read_bytes()[: _HNSW_HEADER.size]
            version, _offset, capacity, count, size = _HNSW_HEADER.unpack(raw)
        except (OSError, struct.error):
            continue
        # data_level0.bin: one slot of ``size`` bytes per element; length.bin: one uint32 per element
        for name, slot in (("data_level0.bin", size), ("length.bin", 4)):
            zeroed += _zero_tail(header.parent / name, version, capacity, count, slot, seen)
    return zeroed


def _unchanged(segment: str, seen: dict[str, tuple[int, int]]) -> bool:
    """Whether both data files of the HNSW segment folder ``segment`` are as ``seen`` last left them (nothing to
    scrub; the header is then not read either)."""
    for name in ("data_level0.bin", "length.bin"):
        path = os.path.join(segment, name)
        try:
            stat = os.stat(path)
        except OSError:
            return False
        if seen.get(path) != (stat.st_mtime_ns, stat.st_size):
            return False
    return True


def _zero_tail(data: Path, version: int, capacity: int, count: int, slot: int, seen: dict[str, tuple[int, int]]) -> int:
    """Zero ``data`` past its ``count`` live slots of ``slot`` bytes (see ``scrub_unused_capacity``); returns the
    bytes zeroed. A file unchanged since ``seen`` is skipped; a size the header does not explain is logged once."""
    try:
        stat = data.stat()
    except OSError:
        return 0
    if seen.get(str(data)) == (stat.st_mtime_ns, stat.st_size):
        return 0
    seen[str(data)] = (stat.st_mtime_ns, stat.st_size)  # judged once per write, warned about at most once
    if version != 1 or not 0 <= count <= capacity or slot <= 0 or not count * slot <= stat.st_size <= capacity * slot:
        log.warning("HNSW file %s: unexpected size for its header; its unused capacity was not zeroed", data)
        return 0
    start = count * slot  # the live slots, then (when Chroma wrote its capacity) the rest
    if start >= stat.st_size:
        return 0
    with data.open("r+b") as f:
        f.seek(start)
        for offset in range(start, stat.st_size, 1 << 20):
            f.write(bytes(min(1 << 20, stat.st_size - offset)))
    after = data.stat()
    seen[str(data)] = (after.st_mtime_ns, after.st_size)
    return stat.st_size - start


def _drop_cached_system(path: Path) -> None:
    """Forget Chroma's process-wide client system of ``path`` after a failed open. Chroma caches the system
    before starting it, so one that failed to start (an unreadable ``chroma.sqlite3``) would be handed to every
    later client of the path, even after the folder is rebuilt. Uses Chroma's ``SharedSystemClient`` table; a
    Chroma version without it has nothing to forget."""
    from chromadb.api.shared_system_client import SharedSystemClient

    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    if isinstance(systems, dict):
        systems.pop(str(path), None)


LAYOUT = 3
"""Index layout version: 3 = three collections per namespace (``PARTS``); 2 (before issue 22) = three collections
shared by every namespace (``LEGACY``), moved into layout 3 when a store is opened."""
LIVE, OBSERVATIONS, REPLACED = "live", "obs", "old"
PARTS = (LIVE, OBSERVATIONS, REPLACED)
"""The parts of a namespace's index: ``live`` holds its current and contested memories and the records of its latest
turns not yet filed (the inbox: observations and replaced memories, see ``Store.index_turn``); ``obs`` its filed
observations; ``old`` its filed replaced (superseded, retracted) memories."""
LEGACY = ("memories", "replaced_memories", "observations")
"""Collection names (after the prefix) of layout 2."""
MEMORY, OBSERVATION = "m", "o"
"""The one metadata field of a record, ``type``: a memory or an observation (every filter is the ledger's)."""


def namespace_key(namespace: str) -> str:
    """The 24 hex characters naming ``namespace``'s collections: BLAKE2b of its UTF-8 bytes. A namespace is any
    string of up to 256 characters, a collection name 3-512 characters of ``[a-zA-Z0-9._-]`` (63 on older
    Chroma servers); the digest fits every server and never mixes two namespaces (a collision needs ~2^48 names)."""
    return hashlib.blake2b(namespace.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


class VectorIndex:
    """A Chroma ``PersistentClient`` at ``path`` (or the client given: an ``HttpClient`` of a Chroma server),
    holding three collections per namespace (``PARTS``), named ``<prefix><namespace_key>-<part>``. ``prefix``
    starts every name (one Chroma server can then serve several stores).

    Why a collection per namespace (issue 22): a user's nearest records are found by an unfiltered HNSW query of
    that user's vectors only; one collection shared by users needed a namespace filter, which Chroma evaluates
    over the whole collection (6x an unfiltered query at 10k records). Collections are created on a namespace's
    first write; a read of a namespace that has none finds nothing and creates nothing. ``remember_missing``: a
    collection found missing is not asked for again by this object (safe where the object is replaced whenever
    another process writes, as the embedded store does; a server store asks each time), and the stored vectors it
    read or wrote are kept (the ``VECTOR_CACHE`` most recent, :meth:`vectors`) on the same condition."""

    def __init__(self, path: Path | None, client: Any | None = None, prefix: str = "", remember_missing: bool = True) -> None:
        import chromadb
        from chromadb.config import Settings

        try:
            self.client = client or chromadb.PersistentClient(
                path=str(path), settings=Settings(anonymized_telemetry=False, allow_reset=True)
            )
        except Exception:
            if path is not None:
                _drop_cached_system(path)
            raise
        self.prefix = prefix
        self.remember_missing = remember_missing
        self._handles: dict[str, Any] = {}
        self._missing: set[str] = set()
        self._stored: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._pattern = re.compile(rf"{re.escape(prefix)}[0-9a-f]{{24}}-(?:{'|'.join(PARTS)})")

    # ---- collections ---------------------------------------------------------------------------------

    def name(self, namespace: str, part: str) -> str:
        return f"{self.prefix}{namespace_key(namespace)}-{part}"

    def collection(self, namespace: str, part: str, create: bool = False) -> Any | None:
        """The Chroma collection of ``namespace``'s ``part``; None when it does not exist and ``create`` is False."""
        name = self.name(namespace, part)
        found = self._handles.get(name)
        if found is not None:
            return found
        if not create and name in self._missing:
            return None
        if create:
            found = self.client.get_or_create_collection(
                name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
        else:
            try:
                found = self.client.get_collection(name, embedding_function=None)
            except Exception as exc:  # noqa: BLE001 - Chroma raises NotFoundError (ValueError in older versions)
                if type(exc).__name__ not in ("NotFoundError", "ValueError", "InvalidCollectionException"):
                    raise
                if self.remember_missing:
                    self._missing.add(name)
                return None
        self._missing.discard(name)
        self._handles[name] = found
        return found

    def names(self) -> list[str]:
        """The names of this index's collections (layout 3), sorted."""
        return sorted(n for n in self._all_names() if self._pattern.fullmatch(n))

    def legacy_names(self) -> list[str]:
        """The layout-2 collections this index still holds (a store made before issue 22)."""
        present = set(self._all_names())
        return [f"{self.prefix}{n}" for n in LEGACY if f"{self.prefix}{n}" in present]

    def _all_names(self) -> list[str]:
        return [c if isinstance(c, str) else c.name for c in self.client.list_collections()]

    def drop(self) -> None:
        """Delete every collection of this index, legacy ones too (a server's index is rebuilt from the ledger
        this way)."""
        for name in [*self.names(), *self.legacy_names()]:
            try:
                self.client.delete_collection(name)
            except Exception:  # noqa: BLE001 - Chroma raises its own class (or ValueError) for a missing collection
                log.info("collection %s was not there to drop", name)
        self._handles.clear()
        self._missing.clear()
        self._stored.clear()

    def close(self) -> None:
        """Release the Chroma client (its shared system stops with the last client of the path)."""
        self._handles.clear()
        self._missing.clear()
        self._stored.clear()
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

    # ---- writes --------------------------------------------------------------------------------------

    def upsert(self, namespace: str, part: str, ids: Sequence[str], vectors: np.ndarray, types: Sequence[str]) -> None:
        """Write records (``types``: ``MEMORY`` | ``OBSERVATION`` each) into ``namespace``'s ``part``: one Chroma
        write per 2,000 records."""
        if not ids:
            return
        collection = self.collection(namespace, part, create=True)
        self._forget(namespace, ids)  # a failed write leaves no vector cached that the index may not hold
        write(collection, ids, vectors, [{"type": t} for t in types])
        self._remember(namespace, zip(ids, np.asarray(vectors, dtype=np.float32), strict=True))

    def delete(self, namespace: str | None, ids: Sequence[str], parts: Sequence[str] = PARTS) -> None:
        """Delete ``ids`` from ``namespace``'s ``parts`` that exist (every collection of the index when
        ``namespace`` is None: a deletion queued before namespaces had collections of their own)."""
        if not ids:
            return
        if namespace is None:
            self._stored.clear()
            targets = [self.client.get_collection(n, embedding_function=None) for n in self.names()]
        else:
            self._forget(namespace, ids)
            targets = [c for p in parts if (c := self.collection(namespace, p)) is not None]
        for collection in targets:
            for start in range(0, len(ids), 2000):
                collection.delete(ids=list(ids[start : start + 2000]))

    def move(self, namespace: str, ids: Sequence[str], source: str, targets: dict[str, str]) -> set[str]:
        """Move the records ``ids`` of ``namespace`` from part ``source`` to the part ``targets[id]`` names, with
        their stored vectors (no new embedding): one read, one write per target part, one delete. Returns the ids
        that were in ``source``."""
        collection = self.collection(namespace, source)
        if collection is None or not ids:
            return set()
        got = collection.get(ids=list(ids), include=["embeddings", "metadatas"])
        if not got["ids"]:
            return set()
        vectors = np.asarray(got["embeddings"], dtype=np.float32)
        for part in sorted(set(targets.values())):
            chosen = [k for k, i in enumerate(got["ids"]) if targets.get(i) == part]
            if chosen and part != source:
                write(self.collection(namespace, part, create=True), [got["ids"][k] for k in chosen], vectors[chosen],
                      [dict(got["metadatas"][k] or {}) for k in chosen])
        moved = [i for i in got["ids"] if targets.get(i, source) != source]
        if moved:
            collection.delete(ids=moved)
        return set(got["ids"])

    # ---- reads ---------------------------------------------------------------------------------------

    def present(self, namespace: str, part: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` ``namespace``'s ``part`` holds (a read by id)."""
        collection = self.collection(namespace, part)
        if collection is None or not ids:
            return set()
        return set(collection.get(ids=list(ids), include=[])["ids"])

    def vectors(self, namespace: str, ids: Sequence[str], parts: Sequence[str] = PARTS) -> dict[str, np.ndarray]:
        """Stored embeddings of ``ids`` (those present in ``namespace``'s ``parts``) -> ``{id: vector}``. The
        parts are read side by side (``parallel.side_by_side``); a record found in two parts (a move cut short)
        takes the vector of the first of ``parts``.

        The vectors this object read or wrote last (``VECTOR_CACHE``, kept only where ``remember_missing``) are
        answered without a read: a record's stored vector changes only through this object's writes (an upsert
        replaces it, a delete forgets it), or through another process, after which the store replaces this object.
        A record's id names one kind of record of its namespace (memory ids and observation ids never meet), so a
        kept vector is the one the part holding that record stores; a record moved between parts keeps its
        vector. Issue 22: a recall's two reads by id (extra candidates, the chosen lines' vectors) were 2-5 ms of
        it at 10k records."""
        found = self._recalled(namespace, ids)
        wanted = [i for i in dict.fromkeys(ids) if i not in found]
        collections = [c for part in parts if wanted and (c := self.collection(namespace, part)) is not None]

        def read(collection: Any) -> dict[str, np.ndarray]:
            found: dict[str, np.ndarray] = {}
            for start in range(0, len(wanted), 2000):
                got = collection.get(ids=wanted[start : start + 2000], include=["embeddings"])
                found.update((i, np.asarray(v, dtype=np.float32)) for i, v in zip(got["ids"], got["embeddings"], strict=True))
            return found

        out: dict[str, np.ndarray] = {}
        for read_part in side_by_side([partial(read, c) for c in collections]):
            out.update((i, v) for i, v in read_part.items() if i not in out)
        self._remember(namespace, out.items())
        return {i: v for i in dict.fromkeys(ids) if (v := found.get(i, out.get(i))) is not None}

    def _recalled(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The kept vectors of ``ids`` (each marked most recently used)."""
        found = {}
        for i in ids:
            key = (namespace, i)
            vector = self._stored.get(key)
            if vector is not None:
                self._stored.move_to_end(key)
                found[i] = vector
        return found

    def _remember(self, namespace: str, pairs: Iterable[tuple[str, np.ndarray]]) -> None:
        if not self.remember_missing:
            return
        for i, vector in pairs:
            kept = np.array(vector, dtype=np.float32)  # a copy no caller holds, read-only
            kept.flags.writeable = False
            self._stored[(namespace, i)] = kept
            self._stored.move_to_end((namespace, i))
        while len(self._stored) > VECTOR_CACHE:
            self._stored.popitem(last=False)

    def forget_kept(self) -> None:
        """Drop every kept vector (the next :meth:`vectors` reads from Chroma)."""
        self._stored.clear()

    def _forget(self, namespace: str, ids: Iterable[str]) -> None:
        for i in ids:
            self._stored.pop((namespace, i), None)

    def nearest(self, namespace: str, part: str, vector: np.ndarray, n: int) -> list[tuple[str, float]]:
        """The ``n`` nearest records of ``namespace``'s ``part``, unfiltered -> ``[(id, cosine)]``, nearest first
        (fewer when it holds fewer; none when it does not exist). Distances only: asking for the embeddings too
        doubled the query's cost (issue 22); a caller reads the few vectors it needs by id (:meth:`vectors`)."""
        collection = self.collection(namespace, part)
        if collection is None:
            return []
        got = collection.query(query_embeddings=np.asarray(vector, dtype=np.float32).reshape(1, -1),
                               n_results=max(1, n), include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]

    def counts(self) -> dict[str, int]:
        """Records of the whole index by type: ``{"memories": n, "observations": n}`` (reads every collection's
        types: for diagnostics and tests, not a hot path)."""
        out = {"memories": 0, "observations": 0}
        for name in self.names():
            collection = self.client.get_collection(name, embedding_function=None)
            for type_, key in ((MEMORY, "memories"), (OBSERVATION, "observations")):
                out[key] += len(collection.get(where={"type": type_}, include=[])["ids"])
        return out

    def total(self) -> int:
        """Records in every collection of the index (one count per collection)."""
        return int(sum(self.client.get_collection(n, embedding_function=None).count() for n in self.names()))

    def dump(self, names: Sequence[str] | None = None, page: int = 5000) -> dict[str, tuple[list[str], np.ndarray, list[dict[str, Any]]]]:
        """Every record of the collections ``names`` (default: this index's) -> ``{name: (ids, vectors (n, dim)
        float32, metadatas)}`` (used to compact and to move a layout-2 index)."""
        out = {}
        for name in self.names() if names is None else names:
            collection: Any = self.client.get_collection(name, embedding_function=None)
            ids: list[str] = []
            vectors: list[Any] = []
            metas: list[dict[str, Any]] = []
            offset = 0
            while True:
                got = collection.get(include=["embeddings", "metadatas"], limit=page, offset=offset)
                ids.extend(got["ids"])
                vectors.extend(got["embeddings"])
                metas.extend(dict(m or {}) for m in got["metadatas"])
                if len(got["ids"]) < page:
                    break
                offset += page
            array = np.asarray(vectors, dtype=np.float32)
            out[name] = (ids, array if ids else np.zeros((0, 0), dtype=np.float32), metas)
        return out

    def restore(self, name: str, ids: list[str], vectors: np.ndarray, metas: list[dict[str, Any]]) -> None:
        """Write a dumped collection back under its name (after a compaction)."""
        self._stored.clear()
        collection = self.client.get_or_create_collection(
            name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
        if ids:
            write(collection, ids, vectors, metas)


def write(collection: Any, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]) -> None:
    """Upsert into a Chroma collection, 2,000 records per call."""
    for start in range(0, len(ids), 2000):
        end = start + 2000
        collection.upsert(ids=list(ids[start:end]), embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                          metadatas=list(metadatas[start:end]))


FIRST_FETCH = 64
OVERFETCH = 512
"""Records fetched unfiltered per part before the filters apply (``Store.search_memories_many``): at least
``FIRST_FETCH`` (and twice the largest request), then, when a request is short, ``OVERFETCH``, then an exact
search of what the ledger finds for the filter."""
FEW_MATCHES = 256
"""A short request whose filter the ledger can resolve (``Ledger.memory_ids_matching``) to at most this many
memories scores those itself (their stored vectors, :func:`cosine_ranked`) before a wider fetch."""
VECTOR_CACHE = 4096
"""Stored vectors a :class:`VectorIndex` keeps after reading or writing them (about 6 MB at 384 dimensions)."""
FILE_BATCH = 64
"""Records a namespace's inbox holds before they are moved to their parts (``Store.index_turn``): one read, two
writes and a delete per batch instead of per turn; the ``live`` part then holds at most this many records a
search of held memories skips (``FIRST_FETCH`` covers them)."""


def memory_parts(where: dict[str, Any] | None) -> tuple[str, ...]:
    """The parts of a namespace's index that can hold a memory matching ``where``: ``live`` alone when its top
    level names held statuses only (``{"status": {"$in": [...]}}``, ``{"status": s}``); ``old`` first and the
    inbox of ``live`` when it names replaced statuses only; else both."""
    statuses = _statuses_named(where)
    if statuses is not None and statuses <= HELD:
        return (LIVE,)
    if statuses is not None and not statuses & HELD:
        return (REPLACED, LIVE)
    return (LIVE, REPLACED)


HELD = frozenset(("current", "contested"))
"""The statuses of memories filed in the ``live`` part (``records.LIVE_STATUSES``)."""


def _statuses_named(where: dict[str, Any] | None) -> set[str] | None:
    """The statuses a filter allows when its top level (or a top-level ``$and``) constrains ``status`` by
    equality or ``$in``; None when it does not."""
    if not where:
        return None
    clauses = where["$and"] if set(where) == {"$and"} else [{k: v} for k, v in where.items()]
    for clause in clauses:
        cond = clause.get("status") if isinstance(clause, dict) else None
        if isinstance(cond, str):
            return {cond}
        if isinstance(cond, dict) and set(cond) == {"$in"}:
            return set(cond["$in"])
        if isinstance(cond, dict) and set(cond) == {"$eq"}:
            return {cond["$eq"]}
    return None


def cosine_ranked(vector: np.ndarray, vectors: dict[str, np.ndarray]) -> list[tuple[str, float]]:
    """``[(id, cosine)]`` of each of ``vectors`` to ``vector``, nearest first (ties by id): what a Chroma query of
    a cosine collection returns for them (``1 - distance``)."""
    query = np.asarray(vector, dtype=np.float32)
    scale = float(np.linalg.norm(query)) or 1.0
    scored = [(i, float(np.dot(v, query)) / ((float(np.linalg.norm(v)) or 1.0) * scale)) for i, v in vectors.items()]
    return sorted(scored, key=lambda h: (-h[1], h[0]))


@dataclass(frozen=True)
class IndexQuery:
    """One search of ``Store.search_memories_many``: the nearest ``n`` records matching the filter ``where``
    (Chroma's syntax, evaluated on ledger rows; None = any). They are taken from the nearest records of the parts
    (``FIRST_FETCH``, then ``OVERFETCH``), and an exact search of every record the filter matches runs when that
    gives fewer than ``enough`` certain hits (default ``n``; 0: never, the over-fetch's hits are the answer).
    """

    n: int
    where: dict[str, Any] | None = None
    enough: int | None = None

    @property
    def least(self) -> int:
        return self.n if self.enough is None else self.enough


def filter_fields(where: dict[str, Any] | None) -> set[str]:
    """The metadata fields a Chroma ``where`` filter reads (through ``$and``/``$or``)."""
    out: set[str] = set()
    for key, cond in (where or {}).items():
        if key in ("$and", "$or"):
            for clause in cond:
                out |= filter_fields(clause)
        else:
            out.add(key)
    return out


_COMPARE = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
    "$in": lambda a, b: a in b,
    "$nin": lambda a, b: a not in b,
}


def matches(metadata: dict[str, Any], where: dict[str, Any]) -> bool:
    """Whether a record's ``metadata`` satisfies the Chroma ``where`` filter (``$and``/``$or`` of ``field: value``
    or ``field: {op: value}`` with ``$eq $ne $gt $gte $lt $lte $in $nin``), as Chroma evaluates it: a missing
    field fails every comparison but ``$ne``/``$nin``.

    Raises:
        ValueError: an operator outside that set.
    """
    for key, cond in where.items():
        if key == "$and":
            if not all(matches(metadata, c) for c in cond):
                return False
        elif key == "$or":
            if not any(matches(metadata, c) for c in cond):
                return False
        elif isinstance(cond, dict):
            value = metadata.get(key)
            for op, operand in cond.items():
                if op not in _COMPARE:
                    raise ValueError(f"unsupported filter operator {op!r}")
                if key not in metadata and op not in ("$ne", "$nin"):
                    return False
                if not _COMPARE[op](value, operand):
                    return False
        elif metadata.get(key, _MISSING) != cond:
            return False
    return True


_MISSING = object()
