"""The Chroma vector index: derived from the ledger, rebuildable, holding vectors and filter metadata only.

No text is stored in Chroma (the ledger holds it), so a hard delete only has to drop the record here.
Two collections: ``memories`` (metadata: namespace, status, retention, kind, scope, valid_from/valid_to in
epoch seconds) and ``observations`` (namespace, time). A search fetches the nearest records unfiltered and
applies the namespace and status filters to their ledger rows (``Store.search_memories_many``), falling back
to a filter inside Chroma when that leaves too few.
Embeddings are passed in explicitly (Chroma's default embedding function would download a model) and
Chroma's telemetry is off.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory_graph.records import LIVE_STATUSES

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
    for header in folder.rglob("header.bin"):
        try:
            raw = header.read_bytes()[: _HNSW_HEADER.size]
            version, _offset, capacity, count, size = _HNSW_HEADER.unpack(raw)
        except (OSError, struct.error):
            continue
        # data_level0.bin: one slot of ``size`` bytes per element; length.bin: one uint32 per element
        for name, slot in (("data_level0.bin", size), ("length.bin", 4)):
            zeroed += _zero_tail(header.parent / name, version, capacity, count, slot, seen)
    return zeroed


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


class VectorIndex:
    """A Chroma ``PersistentClient`` at ``path`` (or the client given: an ``HttpClient`` of a Chroma server).
    ``prefix`` starts the collections' names (one Chroma server can then serve several stores)."""

    def __init__(self, path: Path | None, client: Any | None = None, prefix: str = "") -> None:
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
        held = self._collection(f"{prefix}memories", {"layout": LAYOUT})
        self.memories = PartitionedCollection(held, self._collection(f"{prefix}replaced_memories"))
        if (held.metadata or {}).get("layout") != LAYOUT:  # made before the split (issue 13): split it once
            moved = self.memories.split_legacy()
            held.modify(metadata={"layout": LAYOUT})
            log.info("index %s: %d replaced memories moved to their own collection", path or prefix, moved)
        self.observations = self._collection(f"{prefix}observations")

    def drop(self) -> None:
        """Delete the collections (a server's index is rebuilt from the ledger this way)."""
        for name in (f"{self.prefix}memories", f"{self.prefix}replaced_memories", f"{self.prefix}observations"):
            try:
                self.client.delete_collection(name)
            except Exception:  # noqa: BLE001 - Chroma raises its own class (or ValueError) for a missing collection
                log.info("collection %s was not there to drop", name)

    def _collection(self, name: str, metadata: dict[str, Any] | None = None) -> Any:
        """The collection ``name``, created (with ``metadata``) when missing; an existing one keeps its own."""
        return self.client.get_or_create_collection(
            name, metadata=metadata, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
        )

    def close(self) -> None:
        """Release the Chroma client (its shared system stops with the last client of the path)."""
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

    @staticmethod
    def upsert(collection: Any, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(ids), 2000):
            end = start + 2000
            collection.upsert(
                ids=list(ids[start:end]), embeddings=vectors[start:end], metadatas=list(metadatas[start:end])
            )

    @staticmethod
    def update_metadata(collection: Any, ids: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> list[str]:
        """Update the metadata of ``ids``; returns those the index does not hold (a failed write lost them: the
        caller indexes them again). Only a :class:`PartitionedCollection` can tell; a plain one returns []."""
        if not ids:
            return []
        missing = collection.update(ids=list(ids), metadatas=list(metadatas))
        return list(missing) if isinstance(missing, list) else []

    @staticmethod
    def delete(collection: Any, ids: Sequence[str]) -> None:
        if ids:
            collection.delete(ids=list(ids))

    @staticmethod
    def ids(collection: Any, namespace: str | None = None) -> set[str]:
        where = {"namespace": namespace} if namespace else None
        out: set[str] = set()
        for part in parts(collection):
            offset = 0
            while True:
                got = part.get(where=where, include=[], limit=5000, offset=offset)
                out.update(got["ids"])
                if len(got["ids"]) < 5000:
                    break
                offset += 5000
        return out

    @staticmethod
    def dump(collection: Any, page: int = 5000) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
        """Every record of ``collection``: ``(ids, vectors (n, dim) float32, metadatas)`` (used to compact)."""
        ids: list[str] = []
        vectors: list[Any] = []
        metas: list[dict[str, Any]] = []
        for part in parts(collection):
            offset = 0
            while True:
                got = part.get(include=["embeddings", "metadatas"], limit=page, offset=offset)
                ids.extend(got["ids"])
                vectors.extend(got["embeddings"])
                metas.extend(dict(m or {}) for m in got["metadatas"])
                if len(got["ids"]) < page:
                    break
                offset += page
        array = np.asarray(vectors, dtype=np.float32)
        return ids, (array if ids else np.zeros((0, 0), dtype=np.float32)), metas

    @staticmethod
    def vectors(collection: Any, ids: list[str]) -> dict[str, np.ndarray]:
        """Stored embeddings of ``ids`` (those present) -> ``{id: vector}``."""
        if not ids:
            return {}
        got = collection.get(ids=ids, include=["embeddings"])
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], got["embeddings"], strict=True)}

    @staticmethod
    def search(
        collection: Any, vector: np.ndarray, namespace: str, n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """Nearest ``n`` records of ``namespace`` matching ``where``, filtered inside Chroma -> ``[(id, cosine)]``.

        Chroma resolves a metadata filter to an id set before the vector search, which costs O(collection):
        20-47 ms at 10k records here against about 1 ms unfiltered (issue 13); :meth:`nearest` + the ledger is
        the fast path (``Store.search_memories_many``), this the exact fallback."""
        hits: list[tuple[str, float]] = []
        for part in parts_for(collection, where):
            # no count() first: Chroma returns fewer results when fewer match (one round trip, not two)
            got = part.query(
                query_embeddings=np.asarray(vector, dtype=np.float32).reshape(1, -1),
                n_results=max(1, n),
                where=_namespace_filter(namespace, where),
                include=["distances"],
            )
            hits += [(i, 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]
        return sorted(hits, key=lambda h: -h[1])[: max(1, n)]

    @staticmethod
    def nearest(collection: Any, vector: np.ndarray, n: int) -> list[tuple[str, float]]:
        """The ``n`` nearest records of the whole collection, unfiltered -> ``[(id, cosine)]``, nearest first
        (fewer when the collection holds fewer)."""
        hits: list[tuple[str, float]] = []
        for part in parts(collection):
            got = part.query(
                query_embeddings=np.asarray(vector, dtype=np.float32).reshape(1, -1), n_results=max(1, n),
                include=["distances"],
            )
            hits += [(i, 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]
        return sorted(hits, key=lambda h: -h[1])[: max(1, n)]


LAYOUT = 2
"""Index layout version, kept in the held memories collection's metadata: 2 = memories split by status into
``memories`` (held) and ``replaced_memories``."""
HELD = frozenset(LIVE_STATUSES)
"""Statuses of the memories in the held collection (current, contested); every other status is replaced."""


class PartitionedCollection:
    """The memories collection split by status into two Chroma collections, ``held`` (current, contested) and
    ``replaced`` (superseded, retracted), behind the part of Chroma's collection API the index uses (``upsert``,
    ``update``, ``delete``, ``get(ids=...)``, ``count``).

    Why (issue 13): a long-lived store is mostly replaced values (72% in the benchmark's 10k store; 99 of the 100
    nearest memories to "What version of Redis runs in production?" were old versions), so the current memories
    nearest a query are found by an unfiltered query of the held collection, exactly and in O(log n), where one
    collection needed a status filter that Chroma evaluates over the whole collection. A status change moves
    the record (its stored vector, no new embedding) between the two."""

    def __init__(self, held: Any, replaced: Any) -> None:
        self.held, self.replaced = held, replaced
        self.parts = (held, replaced)
        self.name = held.name

    def part_of(self, metadata: dict[str, Any]) -> Any:
        return self.held if metadata.get("status") in HELD else self.replaced

    def parts_for(self, where: dict[str, Any] | None) -> tuple[Any, ...]:
        """The parts that can hold a record matching ``where``: one when its top level names statuses of one
        side only (``{"status": {"$in": [...]}}`` or ``{"status": s}``), else both."""
        statuses = _statuses_named(where)
        if statuses is not None and statuses <= HELD:
            return (self.held,)
        if statuses is not None and not statuses & HELD:
            return (self.replaced,)
        return self.parts

    def upsert(self, ids: list[str], embeddings: Any, metadatas: list[dict[str, Any]]) -> None:
        for part in self.parts:
            chosen = [k for k, m in enumerate(metadatas) if self.part_of(m) is part]
            if chosen:
                part.upsert(ids=[ids[k] for k in chosen], embeddings=np.asarray(embeddings)[chosen],
                            metadatas=[metadatas[k] for k in chosen])
                other = self.replaced if part is self.held else self.held
                other.delete(ids=[ids[k] for k in chosen])  # a record is in one part only

    def update(self, ids: list[str], metadatas: list[dict[str, Any]]) -> list[str]:
        """Update records' metadata, moving each whose status changed sides; returns the ids in neither part."""
        absent: list[str] = []
        for part in self.parts:
            chosen = {ids[k]: metadatas[k] for k in range(len(ids)) if self.part_of(metadatas[k]) is part}
            if not chosen:
                continue
            present = set(part.get(ids=list(chosen), include=[])["ids"])
            if present:
                part.update(ids=sorted(present), metadatas=[chosen[i] for i in sorted(present)])
            other = self.replaced if part is self.held else self.held
            missing = [i for i in chosen if i not in present]
            moving = other.get(ids=missing, include=["embeddings"]) if missing else {"ids": []}
            if moving["ids"]:
                part.upsert(ids=moving["ids"], embeddings=np.asarray(moving["embeddings"], dtype=np.float32),
                            metadatas=[chosen[i] for i in moving["ids"]])
                other.delete(ids=moving["ids"])
            moved = set(moving["ids"])
            absent += [i for i in missing if i not in moved]
        return absent

    def delete(self, ids: list[str]) -> None:
        for part in self.parts:
            part.delete(ids=ids)

    def get(self, ids: list[str], include: list[str] | None = None) -> dict[str, Any]:
        include = ["metadatas"] if include is None else include
        out: dict[str, Any] = {"ids": [], "embeddings": [], "metadatas": []}
        for part in self.parts:
            got = part.get(ids=ids, include=include)
            out["ids"].extend(got["ids"])
            for key in ("embeddings", "metadatas"):
                if key in include:
                    out[key].extend(got[key])
        return out

    def count(self) -> int:
        return int(sum(part.count() for part in self.parts))

    def split_legacy(self, page: int = 2000) -> int:
        """Move the replaced memories an index made before the split holds in ``held`` to ``replaced``
        (O(index), once); returns how many moved."""
        moved = 0
        while True:
            got = self.held.get(where={"status": {"$nin": sorted(HELD)}}, include=["embeddings", "metadatas"], limit=page)
            if not got["ids"]:
                return moved
            self.replaced.upsert(ids=got["ids"], embeddings=np.asarray(got["embeddings"], dtype=np.float32),
                                 metadatas=got["metadatas"])
            self.held.delete(ids=got["ids"])
            moved += len(got["ids"])


def parts(collection: Any) -> tuple[Any, ...]:
    """The Chroma collections behind ``collection`` (a :class:`PartitionedCollection`'s two, else itself)."""
    return collection.parts if isinstance(collection, PartitionedCollection) else (collection,)


def parts_for(collection: Any, where: dict[str, Any] | None) -> tuple[Any, ...]:
    """The Chroma collections behind ``collection`` that can hold a record matching ``where``."""
    return collection.parts_for(where) if isinstance(collection, PartitionedCollection) else (collection,)


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


FIRST_FETCH = 64
OVERFETCH = 512
"""Records fetched unfiltered per collection before the filters apply (``Store.search_memories_many``): at least
``FIRST_FETCH`` (and twice the largest request), then, when a request is short, ``OVERFETCH``, then a query
filtered inside Chroma."""
FEW_MATCHES = 256
"""A short request whose filter the ledger can resolve (``Ledger.memory_ids_matching``) to at most this many
memories scores those itself (their stored vectors, :func:`cosine_ranked`) instead of a filtered Chroma search."""


def cosine_ranked(vector: np.ndarray, vectors: dict[str, np.ndarray]) -> list[tuple[str, float]]:
    """``[(id, cosine)]`` of each of ``vectors`` to ``vector``, nearest first (ties by id): what a Chroma query of
    a cosine collection returns for them (``1 - distance``)."""
    query = np.asarray(vector, dtype=np.float32)
    scale = float(np.linalg.norm(query)) or 1.0
    scored = [(i, float(np.dot(v, query)) / ((float(np.linalg.norm(v)) or 1.0) * scale)) for i, v in vectors.items()]
    return sorted(scored, key=lambda h: (-h[1], h[0]))


@dataclass(frozen=True)
class IndexQuery:
    """One search of ``Store.search_memories_many``: the nearest ``n`` records matching the Chroma filter
    ``where`` (None = any). They are taken from the nearest records of the collection (``FIRST_FETCH``, then ``OVERFETCH``), and a
    filtered search of the whole collection runs when that gives fewer than ``enough`` (default ``n``; 0: never).
    """

    n: int
    where: dict[str, Any] | None = None
    enough: int | None = None

    @property
    def least(self) -> int:
        return self.n if self.enough is None else self.enough


def _namespace_filter(namespace: str, where: dict[str, Any] | None) -> dict[str, Any]:
    clauses: list[dict[str, Any]] = [{"namespace": namespace}]
    if where:
        clauses.extend({k: v} for k, v in where.items())
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


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
