"""One write transaction of the ledger, with typed operations: the only way code outside ``memory_graph.store``
changes the ledger (``with store.write() as tx: tx.add_memory(...)``).

Every operation takes the namespace first and touches only that namespace's rows. Reads offered here run inside
the transaction (they see its own writes, and nothing another writer commits meanwhile); reads outside a write go
through :class:`memory_graph.store.ledger.Ledger`. Times are ISO-8601 UTC strings (``now_iso``).

The raw ``execute``/``executemany`` pass-throughs exist for the storage package itself (erase, reconcile); a test
(``tests/test_storage_boundary.py``) checks that no module outside ``memory_graph/store`` writes SQL.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from memory_graph.records import LIVE_STATUSES, MemoryRecord
from memory_graph.store.items import namespace_path, path_ref
from memory_graph.store.lexical import indexed_terms, postings_rows
from memory_graph.store.sql import Row

STAT_COLUMNS = ("shown", "credited", "blamed", "unrewarded")
VOTE_COLUMNS = ("replacements", "coexist")

_CONSONANTS = "bdfghjklmnprstvz"
_VOWELS = "aeiou"
_RANDOM = random.SystemRandom()

_SYLLABLES = len(_CONSONANTS) * len(_VOWELS)

ID_SYLLABLES = 4
ID_TOKENS = 7
"""o200k tokens every id costs in a context line (`` [m:ID] ``); ids are drawn until one does."""


PORTABLE: dict[str, tuple[str, tuple[str, ...], str]] = {
    "observation": ("observations", ("id", "text", "speaker", "source", "time", "session_id", "ref", "chunk",
                                     "created_at", "processed", "withheld"), "rowid"),
    "memory": ("memories", ("id", "text", "kind", "subject", "attribute", "value", "scope", "source", "valid_from",
                            "valid_to", "status", "retention", "confidence", "polarity", "multi", "frame", "tokens",
                            "created_at", "updated_at"), "rowid"),
    "provenance": ("provenance", ("memory_id", "observation_id", "ref"), "memory_id, observation_id"),
    "link": ("links", ("id", "src_id", "dst_id", "type", "reason", "created_at"), "created_at, rowid"),
    "event": ("events", ("memory_id", "type", "detail", "created_at"), "id"),
    "stats": ("stats", ("memory_id", "task_class", "shown", "credited", "blamed", "unrewarded"), "memory_id, task_class"),
    "schema_vote": ("schema_votes", ("attribute", "replacements", "coexist"), "attribute"),
    "recall": ("recalls", ("id", "query", "as_of", "task", "budget", "candidates", "chosen", "created_at", "outcome"),
               "created_at, id"),
    "feedback": ("feedback", ("id", "recall_id", "success", "used_ids", "origin", "created_at"), "created_at, id"),
    "item": ("items", ("path", "key", "value", "observation_id", "created_at", "updated_at"), "path, key"),
}
"""What one namespace holds, table by table, for export and import (``memory_graph.transfer``): record kind ->
``(table, columns, order)``. The columns are the ledger's own, without ``namespace`` and the index bookkeeping
(``indexed``); ``order`` keeps insertion order where reads depend on it (chains are read by ``created_at, rowid``).
Kinds whose rows have an ``id`` of their own keep it on import (``GLOBAL_IDS``)."""

GLOBAL_IDS = ("observation", "memory", "link", "recall", "feedback")
"""Kinds whose ``id`` is unique in the whole store (all namespaces), not only in one namespace."""


def now_iso() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_id() -> str:
    """A fresh 12-hex-digit id for internal rows (links, recalls, feedback)."""
    return uuid.uuid4().hex[:12]


def _syllables(number: int) -> str:
    """``number`` (0 <= number < 80 ** ID_SYLLABLES) as ID_SYLLABLES consonant-vowel syllables, one per base-80 digit."""
    out = []
    for _ in range(ID_SYLLABLES):
        number, digit = divmod(number, _SYLLABLES)
        out.append(_CONSONANTS[digit // len(_VOWELS)] + _VOWELS[digit % len(_VOWELS)])
    return "".join(out)


_LEGACY_CHUNK = re.compile(r"(.*)#([0-9]{1,6})", re.S)


def legacy_chunks(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, int]]:
    """How observations written before chunks were a column (schema < 9, export format 1) split: ``{id: (ref,
    chunk)}`` for each row whose ref ``X#N`` (N >= 2) was chunk N of message ``X``. Pure.

    Before, chunk N of a long message was stored with the ref ``X#N``, in the same write as its chunks 1 to N-1,
    with the same namespace, time, speaker, source and session. A row is read as a chunk only when chunk N-1 of
    ``X`` (ref ``X`` itself for N = 2) precedes it with all of those equal; any other ``#`` in a ref is the
    caller's own and stays.

    Args:
        rows: observations in insertion order, each with ``id, ref, time, speaker, source, session_id`` and
            optionally ``namespace`` (one namespace when absent).
    """
    last: dict[tuple[Any, ...], int] = {}  # (namespace, ref, time, speaker, source, session) -> last chunk seen
    out: dict[str, tuple[str, int]] = {}
    for row in rows:
        ref = row["ref"]
        if ref is None:
            continue
        namespace = row["namespace"] if "namespace" in row.keys() else None  # noqa: SIM118 (sqlite3.Row: keys)
        same = (namespace, row["time"], row["speaker"], row["source"], row["session_id"])
        match = _LEGACY_CHUNK.fullmatch(ref)
        if match and int(match[2]) >= 2 and last.get((match[1], *same)) == int(match[2]) - 1:
            out[row["id"]] = (match[1], int(match[2]))
            last[(match[1], *same)] = int(match[2])
        else:
            last[(ref, *same)] = 1
    return out


def _marks(n: int) -> str:
    return ",".join("?" * n)


class Tx:
    """A ledger transaction in progress (see :meth:`Ledger.tx`); use only inside its ``with`` block."""

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    # ---- raw access, for memory_graph.store only ----------------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._cur.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        return self._cur.executemany(sql, rows)

    # ---- ids ------------------------------------------------------------------------------------------------

    def short_id(self, table: str) -> str:
        """A fresh id for a memory or observation, unique in ``table`` (``memories`` | ``observations``): four
        consonant-vowel syllables ("kobatumi", 4.1e7 possibilities), drawn until `` [m:ID] `` costs exactly
        ID_TOKENS o200k tokens (about one draw in eight qualifies; 5.3e6 such ids). Every id then costs the same in
        a context line (7 tokens, against 7-10 for five-syllable ids and about 10 for 12 hex digits), so what fits
        a budget never depends on the luck of the draw; a collision is checked for and redrawn, in both tables: a
        memory and a message share a namespace's ``live`` index part (issue 22), where one id names one record (with
        5.3e6 ids, a LoCoMo-sized store drew an observation id a memory had, and the turn's index write failed)."""
        from memory_graph.tokens import count_tokens

        if table not in ("memories", "observations"):
            raise ValueError(f"no short ids for table {table!r}")
        while True:
            candidate = _syllables(_RANDOM.randrange(_SYLLABLES**ID_SYLLABLES))  # one draw from the OS, not eight
            if count_tokens(f" [m:{candidate}] ") != ID_TOKENS:
                continue
            if self._cur.execute("SELECT 1 FROM memories WHERE id=? UNION ALL SELECT 1 FROM observations WHERE id=?",
                                 (candidate, candidate)).fetchone() is None:
                return candidate

    # ---- observations -----------------------------------------------------------------------------------

    def add_observation(self, ns: str, *, text: str, speaker: str, source: str, time: str,
                        session_id: str | None, ref: str | None, withheld: bool, chunk: int = 1) -> str:
        """Store one message, or chunk ``chunk`` (1, 2, ...) of a long one, as an observation; returns its new id.
        Every chunk keeps the caller's ``ref`` as given: a chunk is never named by editing the ref."""
        oid = self.short_id("observations")
        self._cur.execute(
            "INSERT INTO observations(id, namespace, text, speaker, source, time, session_id, ref, chunk, created_at, "
            "withheld) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (oid, ns, text, speaker, source, time, session_id, ref, int(chunk), now_iso(), int(withheld)),
        )
        return oid

    def processed_among(self, ns: str, observation_ids: Sequence[str]) -> set[str]:
        """Which of ``observation_ids`` are already marked processed (their memories were formed)."""
        ids = sorted(set(observation_ids))
        if not ids:
            return set()
        rows = self._cur.execute(
            f"SELECT id FROM observations WHERE namespace=? AND processed=1 AND id IN ({_marks(len(ids))})", (ns, *ids)
        ).fetchall()
        return {r["id"] for r in rows}

    def mark_processed(self, ns: str, observation_ids: Sequence[str]) -> None:
        self._cur.executemany("UPDATE observations SET processed=1 WHERE namespace=? AND id=?",
                              [(ns, o) for o in observation_ids])

    # ---- memories ---------------------------------------------------------------------------------------

    def add_memory(self, ns: str, record: MemoryRecord, tokens: int, status: str = "current") -> str:
        """Write ``record`` as a new memory (``tokens``: its text's cost in the context), its provenance and a
        ``formed`` event; returns the new id."""
        memory_id = self.short_id("memories")
        now = now_iso()
        self._cur.execute(
            "INSERT INTO memories(id, namespace, text, kind, subject, attribute, value, scope, source, valid_from, "
            "valid_to, status, retention, confidence, polarity, multi, frame, tokens, created_at, updated_at, indexed) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,NULL,?, 'active',?,?,?,?,?,?,?,0)",
            (memory_id, ns, record.text, record.kind, record.subject, record.attribute, record.value, record.scope,
             record.source, record.valid_from, status, record.confidence, record.polarity, int(record.multi),
             record.frame, tokens, now, now),
        )
        self.add_provenance(ns, memory_id, record.observation_id, record.ref)
        self.add_event(ns, memory_id, "formed", extractor=record.extractor, ref=record.ref or "")
        self.index_terms(ns, [{"id": memory_id, "text": record.text, "source": record.source}])
        return memory_id

    # ---- the lexical index (memory_graph.store.lexical) ------------------------------------------------------

    def index_terms(self, ns: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Add memories (``id``, ``text``, ``source``; new to the index) to ``ns``'s lexical index."""
        self._change_terms(ns, indexed_terms(rows), +1)

    def unindex_terms(self, ns: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Remove memories (``id``, ``text``, ``source`` as indexed) from ``ns``'s lexical index (a hard delete)."""
        self._change_terms(ns, indexed_terms(rows), -1)

    def _change_terms(self, ns: str, terms: dict[str, Counter[str]], sign: int) -> None:
        if not terms:
            return
        postings = [row for memory_id, counts in terms.items() for row in postings_rows(ns, memory_id, counts)]
        if sign > 0:
            self._cur.executemany("INSERT INTO memory_terms(namespace, term, memory_id, tf, dl) VALUES (?,?,?,?,?)",
                                  postings)
        else:
            self._cur.executemany("DELETE FROM memory_terms WHERE namespace=? AND term=? AND memory_id=?",
                                  [row[:3] for row in postings])
        length = sum(sum(c.values()) for c in terms.values())
        self._cur.execute("INSERT INTO lexical_stats(namespace, docs, length) VALUES (?,?,?) ON CONFLICT(namespace) "
                          "DO UPDATE SET docs = lexical_stats.docs + excluded.docs, "
                          "length = lexical_stats.length + excluded.length",
                          (ns, sign * len(terms), sign * length))

    def index_all_terms(self, ns: str | None = None) -> int:
        """(Re)build the lexical index of namespace ``ns`` (None: of every namespace, the migration that creates
        it) from its memories; returns how many memories were indexed."""
        if ns is None:
            self._cur.execute("DELETE FROM memory_terms")
            self._cur.execute("DELETE FROM lexical_stats")
            rows = self._cur.execute("SELECT namespace, id, text, source FROM memories").fetchall()
        else:
            self._cur.execute("DELETE FROM memory_terms WHERE namespace=?", (ns,))
            self._cur.execute("DELETE FROM lexical_stats WHERE namespace=?", (ns,))
            rows = self._cur.execute("SELECT namespace, id, text, source FROM memories WHERE namespace=?", (ns,)).fetchall()
        by_ns: dict[str, list[Row]] = {}
        for row in rows:
            by_ns.setdefault(row["namespace"], []).append(row)
        for ns, rows in by_ns.items():
            self.index_terms(ns, rows)
        return sum(len(rows) for rows in by_ns.values())

    def add_provenance(self, ns: str, memory_id: str, observation_id: str, ref: str | None) -> None:
        self._cur.execute(
            "INSERT OR IGNORE INTO provenance(memory_id, observation_id, ref, namespace) VALUES (?,?,?,?)",
            (memory_id, observation_id, ref, ns),
        )

    def corroborate(self, ns: str, memory_id: str, observation_id: str, ref: str | None) -> None:
        """The same value stated again: one more provenance row, confidence +0.05 (at most 0.99), an event."""
        self.add_provenance(ns, memory_id, observation_id, ref)
        self._cur.execute("UPDATE memories SET confidence=CASE WHEN confidence + 0.05 > 0.99 THEN 0.99 ELSE "
                          "confidence + 0.05 END, updated_at=? "
                          "WHERE namespace=? AND id=?", (now_iso(), ns, memory_id))
        self.add_event(ns, memory_id, "corroborated", ref=ref or "")

    def end_memory(self, ns: str, old_id: str, by: str, valid_to: str, status: str, type_: str, reason: str) -> None:
        """End memory ``old_id`` at ``valid_to`` with ``status`` (``superseded`` | ``retracted``), and write the link
        ``by -> old_id`` of ``type_`` with ``reason`` and a status event."""
        self._cur.execute("UPDATE memories SET status=?, valid_to=?, updated_at=?, indexed=0 WHERE id=? AND namespace=?",
                          (status, valid_to, now_iso(), old_id, ns))
        self.add_link(ns, by, old_id, type_, reason)
        self.add_event(ns, old_id, f"status:{status}", by=by, reason=reason)

    def contest(self, ns: str, new_id_: str, old_id: str, reason: str) -> None:
        """Mark ``old_id`` contested by ``new_id_`` (conflicting sources) with a ``contests`` link."""
        self._cur.execute("UPDATE memories SET status='contested', updated_at=?, indexed=0 WHERE id=? AND namespace=?",
                          (now_iso(), old_id, ns))
        self.add_link(ns, new_id_, old_id, "contests", reason)

    def retract(self, ns: str, memory_id: str, reason: str) -> None:
        """Soft forget: status ``retracted``, ``valid_to = valid_from`` (held at no time, so no ``as_of`` recall
        shows it, as for a forget request; ending it "now" let every earlier ``as_of`` show it as current: breaker
        run), an event."""
        self._cur.execute("UPDATE memories SET status='retracted', valid_to=valid_from, updated_at=?, "
                          "indexed=0 WHERE id=? AND namespace=?", (now_iso(), memory_id, ns))
        self.add_event(ns, memory_id, "status:retracted", reason=reason)

    def set_retention(self, ns: str, memory_id: str, target: str, from_: str, reason: str) -> None:
        self._cur.execute("UPDATE memories SET retention=?, updated_at=?, indexed=0 WHERE id=? AND namespace=?",
                          (target, now_iso(), memory_id, ns))
        self.add_event(ns, memory_id, f"retention:{target}", **{"from": from_, "reason": reason})

    def memory(self, ns: str, memory_id: str) -> Row | None:
        return self._cur.execute("SELECT * FROM memories WHERE namespace=? AND id=?", (ns, memory_id)).fetchone()

    def live_in_slot(self, ns: str, subjects: Sequence[str], attribute: str, scope: str) -> list[Row]:
        """Live memories of one slot (any of ``subjects``, ``attribute``, ``scope``), oldest first."""
        return self._cur.execute(
            f"SELECT * FROM memories WHERE namespace=? AND subject IN ({_marks(len(subjects))}) AND attribute=? "
            "AND scope=? AND status IN (?,?) ORDER BY valid_from, rowid",
            (ns, *subjects, attribute, scope, *LIVE_STATUSES),
        ).fetchall()

    def live_by_ids(self, ns: str, ids: Sequence[str]) -> list[Row]:
        """The live memories among ``ids``, oldest first."""
        if not ids:
            return []
        return self._cur.execute(
            f"SELECT * FROM memories WHERE namespace=? AND status IN (?,?) AND id IN ({_marks(len(ids))}) "
            "ORDER BY valid_from, rowid", (ns, *LIVE_STATUSES, *ids),
        ).fetchall()

    def newest_live_after(self, ns: str, row: Any) -> Row | None:
        """The newest live memory of ``row``'s slot (subject, attribute, scope) that began after it, if any."""
        return self._cur.execute(
            "SELECT id, valid_from FROM memories WHERE namespace=? AND subject=? AND attribute=? AND scope=? "
            "AND id != ? AND valid_from > ? AND status IN (?,?) ORDER BY valid_from DESC LIMIT 1",
            (ns, row["subject"], row["attribute"], row["scope"], row["id"], row["valid_from"], *LIVE_STATUSES),
        ).fetchone()

    def formed_from(self, ns: str, observation_id: str, subject: str, attribute: str, value: str) -> str | None:
        """The memory of slot (subject, attribute) with ``value`` formed from ``observation_id``, if any."""
        row = self._cur.execute(
            "SELECT m.id FROM memories m JOIN provenance p ON p.memory_id = m.id WHERE p.observation_id=? AND "
            "m.namespace=? AND m.subject=? AND m.attribute=? AND m.value=? ORDER BY m.rowid LIMIT 1",
            (observation_id, ns, subject, attribute, value),
        ).fetchone()
        return None if row is None else str(row["id"])

    # ---- links, events, statistics, schema votes ---------------------------------------------------------

    def add_event(self, ns: str, memory_id: str | None, type_: str, **detail: Any) -> None:
        self._cur.execute(
            "INSERT INTO events(namespace, memory_id, type, detail, created_at) VALUES (?,?,?,?,?)",
            (ns, memory_id, type_, json.dumps(detail, default=str), now_iso()),
        )

    def add_link(self, ns: str, src: str, dst: str, type_: str, reason: str) -> None:
        """Record that ``src`` supersedes / retracts / contests ``dst`` (``type_``) and why."""
        self._cur.execute(
            "INSERT INTO links(id, namespace, src_id, dst_id, type, reason, created_at) VALUES (?,?,?,?,?,?,?)",
            (new_id(), ns, src, dst, type_, reason, now_iso()),
        )

    def add_stats(self, ns: str, memory_id: str, task: str | None, column: str, amount: float) -> None:
        """Add ``amount`` to ``column`` (shown, credited, blamed or unrewarded) of the memory's overall
        statistics and, when ``task`` is given, of its task-class statistics."""
        if column not in STAT_COLUMNS:
            raise ValueError(f"unknown stats column {column!r}")
        for task_class in {"", task or ""}:
            self._cur.execute(
                f"INSERT INTO stats(namespace, memory_id, task_class, {column}) VALUES (?,?,?,?) "
                f"ON CONFLICT(namespace, memory_id, task_class) DO UPDATE SET {column} = stats.{column} + excluded.{column}",
                (ns, memory_id, task_class, amount),
            )

    def overall_stats(self, ns: str, memory_id: str) -> Row | None:
        """The memory's overall statistics row (``shown, credited, blamed, unrewarded``), if it has one."""
        return self._cur.execute("SELECT * FROM stats WHERE namespace=? AND memory_id=? AND task_class=''",
                                 (ns, memory_id)).fetchone()

    def vote(self, ns: str, attribute: str, column: str) -> None:
        """Count one piece of schema evidence for ``attribute``: ``column`` is ``replacements`` (a confirmed
        replacement) or ``coexist`` (a value added beside a live one); see ``linking.cardinality``."""
        if column not in VOTE_COLUMNS:
            raise ValueError(f"unknown vote column {column!r}")
        self._cur.execute(
            f"INSERT INTO schema_votes(namespace, attribute, {column}) VALUES (?,?,1) "
            f"ON CONFLICT(namespace, attribute) DO UPDATE SET {column} = schema_votes.{column} + 1",
            (ns, attribute),
        )

    # ---- recalls and feedback -----------------------------------------------------------------------------

    def add_recall(self, ns: str, *, recall_id: str, query: str, as_of: str | None, task: str | None, budget: int,
                   candidates: list[dict[str, Any]], chosen: list[str]) -> None:
        """Record one recall (its candidates and what was shown) and count ``shown`` for each chosen memory."""
        self._cur.execute(
            "INSERT INTO recalls(id, namespace, query, as_of, task, budget, candidates, chosen, created_at) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (recall_id, ns, query, as_of, task, budget, json.dumps(candidates), json.dumps(chosen), now_iso()),
        )
        for memory_id in chosen:
            self.add_stats(ns, memory_id, task, "shown", 1)

    def claim_outcome(self, ns: str, recall_id: str, success: bool) -> bool:
        """Set the recall's outcome unless it has one; returns whether this call set it (two feedback calls
        racing: exactly one wins)."""
        return bool(self._cur.execute("UPDATE recalls SET outcome=? WHERE namespace=? AND id=? AND outcome IS NULL",
                                      ("success" if success else "failure", ns, recall_id)).rowcount)

    def add_feedback(self, ns: str, recall_id: str, success: bool, used_ids: Sequence[str], origin: str) -> None:
        self._cur.execute(
            "INSERT INTO feedback(id, namespace, recall_id, success, used_ids, origin, created_at) VALUES (?,?,?,?,?,?,?)",
            (new_id(), ns, recall_id, int(success), json.dumps(sorted(used_ids)), origin, now_iso()),
        )

    # ---- LangGraph BaseStore items ------------------------------------------------------------------------

    def put_item(self, ns: str, path: str, key: str, value: dict[str, Any], observation_id: str | None) -> None:
        """Write (or replace) the item ``key`` under namespace path ``path`` (a JSON array whose first element is
        ``ns``), keeping its first ``created_at``."""
        now = now_iso()
        self._cur.execute(
            "INSERT INTO items(path, key, namespace, value, observation_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?) "
            "ON CONFLICT(path, key) DO UPDATE SET value=excluded.value, observation_id=excluded.observation_id, "
            "updated_at=excluded.updated_at",
            (path, key, ns, json.dumps(value, ensure_ascii=False), observation_id, now, now),
        )

    def delete_item(self, path: str, key: str) -> None:
        """Delete the item ``key`` at namespace path ``path`` (a hard delete: remembered in ``tombstones``, so an
        import of an older export does not bring it back)."""
        from memory_graph.store import tombstones

        row = self._cur.execute("SELECT namespace, created_at FROM items WHERE path=? AND key=?", (path, key)).fetchone()
        if row is None:
            return
        tombstones.remember(self._cur, [tombstones.item_key(row["namespace"], path_ref(path, key), row["created_at"])])
        self._cur.execute("DELETE FROM items WHERE path=? AND key=?", (path, key))

    # ---- import (memory_graph.transfer) ----------------------------------------------------------------------

    def ids_in_other_namespaces(self, kind: str, ns: str, ids: Sequence[str]) -> list[str]:
        """The ``ids`` of ``kind`` (one of ``GLOBAL_IDS``) that rows of another namespace than ``ns`` already use."""
        if kind not in GLOBAL_IDS:
            raise ValueError(f"no store-wide ids for {kind!r}")
        return self._ids_used(PORTABLE[kind][0], ids, "namespace != ? AND ", (ns,))

    def relabelled_among(self, ns: str, labels: Sequence[str | None]) -> dict[str, str]:
        """``tombstones.relabelled_among`` read inside this transaction."""
        from memory_graph.store import tombstones

        return tombstones.relabelled_among(lambda sql, params: self._cur.execute(sql, params).fetchall(), ns, labels)

    def observation_refs(self, ns: str, ids: Sequence[str]) -> list[Any]:
        """``id`` and ``ref`` of the observations of namespace ``ns`` among ``ids``."""
        rows: list[Any] = []
        for start in range(0, len(ids), 400):
            chunk = list(ids[start : start + 400])
            rows += self._cur.execute(
                f"SELECT id, ref FROM observations WHERE namespace=? AND id IN ({','.join('?' * len(chunk))})",
                (ns, *chunk)).fetchall()
        return rows

    def ids_of_records(self, ids: Sequence[str], table: str) -> list[str]:
        """The ``ids`` that rows of ``table`` (``memories`` | ``observations``) use, in any namespace: a memory and a
        message never share an id (they share a namespace's ``live`` index part, see ``short_id``)."""
        if table not in ("memories", "observations"):
            raise ValueError(f"no record ids in table {table!r}")
        return self._ids_used(table, ids)

    def _ids_used(self, table: str, ids: Sequence[str], condition: str = "", params: tuple[Any, ...] = ()) -> list[str]:
        """The ``ids`` that rows of ``table`` meeting ``condition`` (SQL ending in ``AND``, with ``params``) use,
        sorted; 500 ids per query."""
        unique = sorted(set(ids))
        found: list[str] = []
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            found += [r["id"] for r in self._cur.execute(
                f"SELECT id FROM {table} WHERE {condition}id IN ({_marks(len(chunk))})", (*params, *chunk)).fetchall()]
        return sorted(found)

    def import_rows(self, kind: str, ns: str, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Insert ``rows`` of ``kind`` (see ``PORTABLE``; every column given, JSON columns as text) into namespace
        ``ns``, keeping their ids. A row whose key is already there is left as it is (an import never overwrites:
        importing twice changes nothing). Returns the rows inserted. Imported memories and observations are
        unindexed (``indexed = 0``) until ``Store.index_memories`` / ``index_observations`` embed them.

        Raises:
            ValueError: ``kind`` is not one of ``PORTABLE`` or a row lacks a column.
        """
        if kind not in PORTABLE:
            raise ValueError(f"unknown record kind {kind!r}")
        table, columns, _ = PORTABLE[kind]
        if kind == "event":  # no id of its own: the n-th of several alike events (same memory, type, detail and
            # second: two hard deletes in one second) is there when n of them are; counting, not "any", keeps both
            added = []
            seen: Counter[tuple[Any, ...]] = Counter()
            for row in rows:
                values = tuple(row[c] for c in columns)
                seen[values] += 1
                held = self._cur.execute("SELECT COUNT(*) AS n FROM events WHERE namespace=? AND COALESCE(memory_id, '')=? "
                                         "AND type=? AND detail=? AND created_at=?",
                                         (ns, values[0] or "", *values[1:])).fetchone()["n"]
                if int(held) < seen[values]:
                    self._cur.execute("INSERT INTO events(namespace, memory_id, type, detail, created_at) VALUES (?,?,?,?,?)",
                                      (ns, *values))
                    added.append(row)
            return added
        sql = (f"INSERT OR IGNORE INTO {table}(namespace, {', '.join(columns)}) "
               f"VALUES ({_marks(len(columns) + 1)})")
        added = [row for row in rows if self._cur.execute(sql, (ns, *(row[c] for c in columns))).rowcount]
        if kind == "memory":
            self.index_terms(ns, added)
        return added

    def split_legacy_chunk_refs(self) -> int:
        """Rewrite the ``ref#N`` refs of chunks stored before schema 9 as ``(ref, chunk N)`` (``legacy_chunks``),
        in observations and in the provenance of what was formed from them; returns how many were rewritten."""
        rows = self._cur.execute("SELECT id, namespace, ref, time, speaker, source, session_id FROM observations "
                                 "WHERE ref IS NOT NULL ORDER BY namespace, rowid").fetchall()
        found = legacy_chunks(rows)
        for oid, (ref, chunk) in found.items():
            self._cur.execute("UPDATE observations SET ref=?, chunk=? WHERE id=?", (ref, chunk, oid))
            self._cur.execute("UPDATE provenance SET ref=? WHERE observation_id=?", (ref, oid))
        return len(found)

    def normalise_item_paths(self) -> int:
        """Rewrite item paths not in ``namespace_path``'s form (an import before schema 10 wrote JSON's default
        spacing, which no read found). Where both forms hold the same key, the newer item (``updated_at``) stays.
        Returns how many paths were rewritten."""
        rows = self._cur.execute("SELECT path, key, updated_at FROM items ORDER BY updated_at, rowid").fetchall()
        changed = 0
        for row in rows:
            try:
                parts = json.loads(row["path"])
            except ValueError:
                continue
            if not isinstance(parts, list) or (path := namespace_path(parts)) == row["path"]:
                continue
            held = self._cur.execute("SELECT updated_at FROM items WHERE path=? AND key=?", (path, row["key"])).fetchone()
            if held is not None and held["updated_at"] > row["updated_at"]:
                self._cur.execute("DELETE FROM items WHERE path=? AND key=?", (row["path"], row["key"]))
                continue
            self._cur.execute("DELETE FROM items WHERE path=? AND key=?", (path, row["key"]))
            self._cur.execute("UPDATE items SET path=? WHERE path=? AND key=?", (path, row["path"], row["key"]))
            changed += 1
        return changed

    def erased_among(self, keys: Sequence[tuple[str, ...]]) -> set[tuple[str, ...]]:
        """The ``keys`` (``memory_graph.store.tombstones``) that a hard delete of this store erased."""
        from memory_graph.store import tombstones

        return tombstones.erased_among(self._cur, keys)

    # ---- hard delete jobs -----------------------------------------------------------------------------------

    def add_erase_job(self, ns: str, needles: Sequence[str], refs: Sequence[str], same: Sequence[str] = ()) -> None:
        """Queue a hard delete's remaining steps (chat threads to scrub); see ``Store.finish_erasures``. The
        ``needles`` column holds :func:`memory_graph.store.erase.job_payload`: no whole erased text, only digests of
        them, the word needles and ``m:ID`` (a plain list or plain ``same`` texts: a job of an older version)."""
        from memory_graph.store import tombstones
        from memory_graph.store.erase import job_payload

        payload = job_payload(needles, same, tombstones.salt(self))
        self._cur.execute("INSERT INTO erase_jobs(namespace, needles, refs, created_at) VALUES (?,?,?,?)",
                          (ns, json.dumps(payload), json.dumps(sorted(refs)), now_iso()))

    def rename_threads(self, renamed: dict[str, str]) -> None:
        """Record the threads a hard delete moved (``{old thread id: new}``) under their new ids in
        ``thread_owners``, keeping their owner."""
        for old, new in renamed.items():
            self._cur.execute("UPDATE OR REPLACE thread_owners SET thread_id=? WHERE thread_id=?", (new, old))

    def drop_erase_job(self, job_id: int) -> None:
        self._cur.execute("DELETE FROM erase_jobs WHERE id=?", (job_id,))
