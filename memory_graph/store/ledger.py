"""The SQLite ledger: the source of truth for observations, memories, links, events, recalls and feedback.

WAL mode, one transaction per write (``with ledger.tx() as cur``), every row carries a ``namespace`` and
every read in this module filters by it. Times are ISO-8601 UTC strings (see ``memory_graph.timeutil``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_graph.records import FORGET_REQUEST, LIVE_STATUSES
from memory_graph.store.sql import (
    Database,
    PostgresDatabase,
    Row,
    SqliteDatabase,
    is_database_url,
    postgres_schema,
    redact_url,
)
from memory_graph.store.tx import PORTABLE, Tx, new_id, now_iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS observations (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, text TEXT NOT NULL, speaker TEXT NOT NULL,
    source TEXT NOT NULL, time TEXT NOT NULL, session_id TEXT, ref TEXT, created_at TEXT NOT NULL,
    indexed INTEGER NOT NULL DEFAULT 0, processed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS obs_ns_time ON observations(namespace, time);
CREATE INDEX IF NOT EXISTS obs_ns_ref ON observations(namespace, ref);
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, text TEXT NOT NULL, kind TEXT NOT NULL,
    subject TEXT NOT NULL, attribute TEXT NOT NULL, value TEXT NOT NULL, scope TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL, valid_from TEXT NOT NULL, valid_to TEXT, status TEXT NOT NULL,
    retention TEXT NOT NULL DEFAULT 'active', confidence REAL NOT NULL, polarity INTEGER NOT NULL DEFAULT 1,
    multi INTEGER NOT NULL DEFAULT 0, frame TEXT NOT NULL DEFAULT '', tokens INTEGER NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, indexed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS mem_ns_key ON memories(namespace, subject, attribute, scope, status);
CREATE INDEX IF NOT EXISTS mem_ns_status ON memories(namespace, status);
CREATE INDEX IF NOT EXISTS mem_dirty ON memories(indexed);
CREATE TABLE IF NOT EXISTS provenance (
    memory_id TEXT NOT NULL, observation_id TEXT NOT NULL, ref TEXT, namespace TEXT NOT NULL,
    PRIMARY KEY (memory_id, observation_id)
);
CREATE INDEX IF NOT EXISTS prov_obs ON provenance(observation_id);
CREATE TABLE IF NOT EXISTS links (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, src_id TEXT NOT NULL, dst_id TEXT NOT NULL,
    type TEXT NOT NULL, reason TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS links_src ON links(namespace, src_id);
CREATE INDEX IF NOT EXISTS links_dst ON links(namespace, dst_id);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, memory_id TEXT, type TEXT NOT NULL,
    detail TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_mem ON events(namespace, memory_id);
CREATE TABLE IF NOT EXISTS recalls (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, query TEXT NOT NULL, as_of TEXT, task TEXT,
    budget INTEGER NOT NULL, candidates TEXT NOT NULL, chosen TEXT NOT NULL, created_at TEXT NOT NULL,
    outcome TEXT
);
CREATE INDEX IF NOT EXISTS recalls_ns ON recalls(namespace, created_at);
CREATE TABLE IF NOT EXISTS feedback (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, recall_id TEXT NOT NULL, success INTEGER NOT NULL,
    used_ids TEXT NOT NULL, origin TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS stats (
    namespace TEXT NOT NULL, memory_id TEXT NOT NULL, task_class TEXT NOT NULL,
    shown INTEGER NOT NULL DEFAULT 0, credited REAL NOT NULL DEFAULT 0, blamed REAL NOT NULL DEFAULT 0,
    unrewarded INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, memory_id, task_class)
);
CREATE TABLE IF NOT EXISTS schema_votes (
    namespace TEXT NOT NULL, attribute TEXT NOT NULL, replacements INTEGER NOT NULL DEFAULT 0,
    coexist INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (namespace, attribute)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS index_deletes (collection TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (collection, id));
CREATE INDEX IF NOT EXISTS obs_dirty ON observations(indexed);
CREATE INDEX IF NOT EXISTS obs_ns_unprocessed_time ON observations(namespace, processed, time);
"""

MIGRATIONS: tuple[str, ...] = (
    # 1 (2026-12-01): a message that is an instruction or make-believe is never recalled raw (rules.withheld)
    "ALTER TABLE observations ADD COLUMN withheld INTEGER NOT NULL DEFAULT 0",
    # 2 (2026-12-01): who owns each checkpointed graph thread (threads.owner_guard), outside the checkpoints, so
    # neither an input key nor a fork from an early checkpoint can change it
    "CREATE TABLE IF NOT EXISTS thread_owners (thread_id TEXT PRIMARY KEY, owner TEXT NOT NULL, created_at TEXT NOT NULL)",
    # 3 (2026-12-01): a hard delete's remaining steps (chat threads to scrub), committed with the ledger's erase so
    # a process killed in between is finished on the next open; the row goes (and the file is VACUUMed) when done
    "CREATE TABLE IF NOT EXISTS erase_jobs (id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, needles TEXT NOT NULL, "
    "refs TEXT NOT NULL, created_at TEXT NOT NULL)",
    # 4 (2026-12-01): items put through the LangGraph BaseStore (memory_graph.langgraph_store): the value as given,
    # under its full namespace path and key; the text was observed as an observation (ref 'item:...') of namespace
    "CREATE TABLE IF NOT EXISTS items (path TEXT NOT NULL, key TEXT NOT NULL, namespace TEXT NOT NULL, "
    "value TEXT NOT NULL, observation_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
    "PRIMARY KEY (path, key))",
    # 5 (2026-12-01): the lexical index (memory_graph.store.lexical), kept with the memories instead of rebuilt in
    # memory from all of them whenever one changed (issue 13); filled from the memories already there (LEXICAL_FROM)
    "CREATE TABLE IF NOT EXISTS memory_terms (namespace TEXT NOT NULL, term TEXT NOT NULL, memory_id TEXT NOT NULL, "
    "tf INTEGER NOT NULL, dl INTEGER NOT NULL, PRIMARY KEY (namespace, term, memory_id)) WITHOUT ROWID",
    # 6 (2026-12-01): the lexical index's per-namespace totals (BM25's N and mean length without a count)
    "CREATE TABLE IF NOT EXISTS lexical_stats (namespace TEXT PRIMARY KEY, docs INTEGER NOT NULL, "
    "length INTEGER NOT NULL)",
    # 7 (2026-12-01): a key's newest versions by one index range (Ledger.newest_of_key, every recall), not a sort
    # of every version of the key (5 ms per key at 100k memories, issue 13)
    "CREATE INDEX IF NOT EXISTS mem_key_time ON memories(namespace, subject, attribute, valid_from)",
    # 8 (2026-12-01): the live memories of one scope by one index range (Ledger.memory_ids_matching): a linking
    # search in a scope with few memories scores them itself instead of a filtered Chroma search (119 ms at 100k)
    "CREATE INDEX IF NOT EXISTS mem_ns_scope ON memories(namespace, scope, status)",
    # 9 (2026-12-02): which part of its message an observation is (1, 2, ...; issue 21). A chunk's identity was
    # read out of its ref (``ref#N``), so a caller's ref or an item key holding ``#`` was taken for a chunk of
    # another message; every chunk now keeps the caller's ref unchanged, and the old refs are read once
    # (``Tx.split_legacy_chunk_refs``)
    "ALTER TABLE observations ADD COLUMN chunk INTEGER NOT NULL DEFAULT 1",
    # 10 (2026-12-02): a namespace's items by one index range (a hard delete reads them); and item paths written by
    # an import in JSON's default spacing are rewritten in the one form the store reads (``Tx.normalise_item_paths``)
    "CREATE INDEX IF NOT EXISTS items_ns ON items(namespace)",
    # 11 (2026-12-02): what hard deletes erased, as salted hashes of ids and refs (never the text), so an import of
    # an older export does not bring it back (``memory_graph.store.tombstones``)
    "CREATE TABLE IF NOT EXISTS erased (digest TEXT PRIMARY KEY) WITHOUT ROWID",
    # 12 (2026-12-02): a collection per namespace (issue 22). The records of a namespace's latest turns that sit in
    # its ``live`` part but belong in another (observations, replaced memories), moved there a batch at a time
    # (``Store.index_turn``)
    "CREATE TABLE IF NOT EXISTS index_inbox (namespace TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (namespace, id)) "
    "WITHOUT ROWID",
    # 13 (2026-12-02): index records a hard delete queued, with their namespace (whose collections hold them);
    # ``index_deletes`` rows queued before name none and are deleted from every collection
    "CREATE TABLE IF NOT EXISTS index_drops (namespace TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (namespace, id)) "
    "WITHOUT ROWID",
    # 14 (2026-12-06): a namespace's unlinked observations, oldest first, by one index range (every turn reads them,
    # ``Ledger.unprocessed_observations``): with ``(namespace, processed)`` the planner took ``obs_ns_time`` for
    # the order and read every observation of the namespace (1.7 ms a turn at 10k, issue 22)
    "CREATE INDEX IF NOT EXISTS obs_ns_unprocessed_time ON observations(namespace, processed, time)",
    # 15 (2026-12-06): the index it replaces (a prefix of it)
    "DROP INDEX IF EXISTS obs_ns_unprocessed",
)
"""Schema changes after the base ``SCHEMA``, in order; ``PRAGMA user_version`` counts those applied. Opening a
store applies the missing ones in one transaction; a store whose version is newer than this code is refused."""
SCHEMA_VERSION = len(MIGRATIONS)
LEXICAL_FROM = 5
ITEM_PATHS_FROM = 10
"""The schema version from which every item path is in ``store.items.namespace_path``'s form (``Tx.normalise_item_paths``
runs in the migration's transaction)."""
CHUNKS_FROM = 9
"""The schema version from which chunks are a column: a store migrated past it has its ``ref#N`` chunk refs
rewritten in the migration's transaction (``Tx.split_legacy_chunk_refs``)."""
"""The schema version from which the lexical index exists: a store migrated past it has its memories indexed in
the migration's transaction (``Tx.index_all_terms``)."""

MEMORY_COLUMNS = (
    "id, namespace, text, kind, subject, attribute, value, scope, source, valid_from, valid_to, status, "
    "retention, confidence, polarity, multi, frame, tokens, created_at, updated_at"
)


MAX_CHAIN_STEPS = 50
"""Steps a supersession chain is followed at most (``Ledger.recall_candidates``): a cycle written by hand or an
import ends there."""
MAX_PARAMS = 900
"""Bound parameters one statement of a recall binds at most (SQLite's old default limit is 999); a longer id list
is read in several statements."""
REPLACING_LINKS = "('supersedes','retracts')"
"""The link types whose source replaces their destination (``Ledger.superseded_by``)."""
_SUCCESSOR = ("(SELECT l.src_id FROM links l WHERE l.namespace = m.namespace AND l.dst_id = m.id AND l.type IN "
              f"{REPLACING_LINKS} ORDER BY l.created_at DESC, l.rowid DESC LIMIT 1)")
"""The memory that replaced ``m`` (its latest superseding or retracting link's source), as a scalar subquery."""
_CANDIDATE_COLUMNS = (", ".join(f"m.{c.strip()}" for c in MEMORY_COLUMNS.split(",")) + f", {_SUCCESSOR} AS superseded_by, "
                      "s.task_class AS stats_task, s.shown AS stats_shown, s.credited AS stats_credited, "
                      "s.blamed AS stats_blamed, s.unrewarded AS stats_unrewarded")
"""What recall reads of each candidate memory: its row, its successor and one row of statistics per task class
(``LEFT JOIN stats s``: a memory without statistics gives one row of NULLs)."""
_STATS = ("shown", "credited", "blamed", "unrewarded")


@dataclass
class Candidates:
    """What recall reads of its candidate memories (``Ledger.recall_candidates``, ``Ledger.newest_of_keys``).

    Attributes:
        rows: ``{id: row}`` of the memories found in the namespace: ``MEMORY_COLUMNS`` (and the read's own columns).
        stats: ``{id: {task_class: {shown, credited, blamed, unrewarded}}}``, as ``Ledger.stats`` (task class ''
            = overall); a memory without statistics is absent.
        superseded_by: ``{id: id of the memory that superseded or retracted it}`` (or ``records.FORGET_REQUEST``),
            as ``Ledger.superseded_by``; a memory nothing replaced is absent.
        heads: ``{start: head}``: for each chain start asked for whose chain moved, the memory at the head of its
            supersession chain (see ``Ledger.recall_candidates``); its row is in ``rows`` when it is in the namespace.
    """

    rows: dict[str, Row] = field(default_factory=dict)
    stats: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    superseded_by: dict[str, str] = field(default_factory=dict)
    heads: dict[str, str] = field(default_factory=dict)

    def merge(self, other: Candidates) -> Candidates:
        """This object with ``other``'s entries added (``other`` wins for an id in both: the same rows, read later)."""
        self.rows.update(other.rows)
        self.stats.update(other.stats)
        self.superseded_by.update(other.superseded_by)
        self.heads.update(other.heads)
        return self

    def add(self, rows: Iterable[Row]) -> list[str]:
        """Take the rows of a ``_CANDIDATE_COLUMNS`` read (a memory's row once per task class of its statistics);
        returns their ids in the order read, each once."""
        order: dict[str, None] = {}
        for r in rows:
            mid = r["id"]
            order[mid] = None
            self.rows.setdefault(mid, r)  # read as it came (the memory's columns, then the extra ones)
            if r["superseded_by"] is not None:
                self.superseded_by[mid] = r["superseded_by"]
            if r["stats_task"] is not None:
                self.stats.setdefault(mid, {})[r["stats_task"]] = {k: r[f"stats_{k}"] for k in _STATS}
        return list(order)


class Ledger:
    """The ledger's database: a SQLite file (embedded) or a PostgreSQL database (``postgresql://...``); safe to
    share between threads of one process (serialised by a lock).

    Args:
        location: the SQLite file (its folder is created if missing) or a PostgreSQL URL.

    Raises:
        sqlite3.DatabaseError: the file exists but is not a SQLite database.
        StoreError: the PostgreSQL server cannot be reached; the store's schema is newer than this code.
    """

    def __init__(self, location: Path | str) -> None:
        self.path = location
        self.db: Database = PostgresDatabase(str(location)) if is_database_url(location) else SqliteDatabase(Path(location))
        self._lock = threading.RLock()
        with self._lock:
            self.db.script(postgres_schema(SCHEMA) if self.db.kind == "postgresql" else SCHEMA)
        self.migrate()

    @property
    def location(self) -> str:
        """Where the ledger is, for messages (a PostgreSQL URL without its password)."""
        return redact_url(str(self.path))

    def migrate(self) -> int:
        """Apply the ``MIGRATIONS`` this store lacks (one transaction); returns the schema version.

        Raises:
            StoreError: the store was written by a newer version of memory-graph (its schema is unknown here).
        """
        from memory_graph.errors import StoreError

        with self._lock:
            version = self.db.schema_version()
            if version > SCHEMA_VERSION:
                raise StoreError(f"store {self.location!r} has schema version {version}, newer than this "
                                 f"memory-graph ({SCHEMA_VERSION}); upgrade memory-graph to open it")
            if version == SCHEMA_VERSION:
                return version
            with self.tx() as tx:  # read again under the write lock: another process may have migrated
                version = self.db.schema_version(tx)
                for sql in MIGRATIONS[version:]:
                    tx.execute(sql)
                if version < LEXICAL_FROM <= SCHEMA_VERSION:
                    tx.index_all_terms()
                if version < CHUNKS_FROM <= SCHEMA_VERSION:
                    tx.split_legacy_chunk_refs()
                if version < ITEM_PATHS_FROM <= SCHEMA_VERSION:
                    tx.normalise_item_paths()
                # new tables and indexes have no planner statistics while the old ones keep theirs: SQLite then
                # misjudged id lookups (a new index on the namespace chosen over the primary key, 100 ms per read
                # at 100k memories); forgetting when it last ran makes the open's analyze_if_stale run ANALYZE
                tx.execute("DELETE FROM meta WHERE key='analyzed_rows'")
                self.db.set_schema_version(tx, max(version, SCHEMA_VERSION))
            return SCHEMA_VERSION

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def repair_lexical(self) -> list[str]:
        """Re-index the namespaces whose lexical index disagrees with their memories (``lexical_stats.docs`` is not
        their count), in one transaction; returns them. Run at every open: a process of a version before the
        index (schema < 5) that kept a store open across its upgrade wrote memories without postings, or erased
        memories and left theirs (breaker run). One grouped count over the namespace index: about 10 ms per
        100k memories."""
        counts = {r["namespace"]: int(r["n"]) for r in
                  self.query("SELECT namespace, COUNT(*) AS n FROM memories GROUP BY namespace")}
        indexed = {r["namespace"]: int(r["docs"]) for r in self.query("SELECT namespace, docs FROM lexical_stats")}
        wrong = sorted(ns for ns in set(counts) | set(indexed) if counts.get(ns, 0) != indexed.get(ns, 0))
        if wrong:
            with self.tx() as tx:
                for ns in wrong:
                    tx.index_all_terms(ns)
        return wrong

    def analyze_if_stale(self) -> bool:
        """Refresh the query planner's statistics (``ANALYZE`` with ``analysis_limit``, so it reads a bounded sample)
        when none exist or the memories table has doubled since the last time; returns whether it ran. Without
        statistics SQLite picked the namespace index over the primary key for id lookups (30-38 ms instead of 1-2 ms
        at 10k memories, issue 13). Cheap enough to ask after every ingest batch: the size is the largest rowid
        (O(1)), not a count. PostgreSQL is left to its autovacuum, which analyzes tables as they grow."""
        if self.db.kind != "sqlite":
            return False
        rows = self.query("SELECT value FROM meta WHERE key='analyzed_rows'")
        count = int(self.query("SELECT COALESCE(MAX(rowid), 0) AS n FROM memories")[0]["n"])
        last = int(rows[0]["value"]) if rows else -1
        if last >= 0 and count < 2 * max(last, 500):
            return False
        with self._lock:
            self.db.analyze()
        with self.tx() as cur:
            cur.execute("INSERT INTO meta(key, value) VALUES ('analyzed_rows', ?) "
                        "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (str(count),))
        return True

    def claim_thread(self, thread_id: str, user_id: str) -> str:
        """The owner of graph thread ``thread_id``: ``user_id`` when the thread had none (it is claimed now, in
        one transaction, so two first runs cannot both claim it), else the recorded owner. Every graph run asks:
        a thread already claimed is answered by a read, without a write transaction."""
        rows = self.query("SELECT owner FROM thread_owners WHERE thread_id=?", (thread_id,))
        if rows:
            return str(rows[0]["owner"])
        with self.tx() as cur:
            cur.execute("INSERT OR IGNORE INTO thread_owners(thread_id, owner, created_at) VALUES (?,?,?)",
                        (thread_id, user_id, now_iso()))
            return str(cur.execute("SELECT owner FROM thread_owners WHERE thread_id=?", (thread_id,)).fetchone()[0])

    def thread_owners(self) -> dict[str, str]:
        """``{thread_id: owner}`` of every graph thread claimed (``claim_thread``): who a hard delete may scrub."""
        return {str(r["thread_id"]): str(r["owner"]) for r in self.query("SELECT thread_id, owner FROM thread_owners")}

    def index_generation(self) -> int:
        """How many sessions have written to the vector index (any process); see ``Store.session``."""
        rows = self.query("SELECT value FROM meta WHERE key='index_generation'")
        return int(rows[0]["value"]) if rows else 0

    def bump_index_generation(self) -> int:
        """Count one more session that wrote to the vector index; returns the new generation."""
        with self.tx() as cur:
            cur.execute(
                "INSERT INTO meta(key, value) VALUES ('index_generation', '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)"
            )
            return int(cur.execute("SELECT value FROM meta WHERE key='index_generation'").fetchone()[0])

    @contextmanager
    def tx(self) -> Iterator[Tx]:
        """One write transaction (begun with the database's write lock, see ``memory_graph.store.sql``; COMMIT, or
        ROLLBACK on any error) and its typed operations.

        Raises:
            StoreError: another process migrated the store past this code's schema since it was opened (its
                writes would miss what the newer schema keeps, e.g. the lexical index: breaker run).
        """
        from memory_graph.errors import StoreError

        with self._lock:
            cur = self.db.cursor()
            self.db.begin(cur)
            if self.db.schema_version(cur) > SCHEMA_VERSION:
                cur.execute("ROLLBACK")
                raise StoreError(f"store {self.location!r} was upgraded by a newer memory-graph while open here; "
                                 f"upgrade this one and open it again")
            try:
                yield Tx(cur)
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            else:
                cur.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a read query and return all rows."""
        with self._lock:
            return list(self.db.execute(sql, params).fetchall())

    def explain(self, sql: str, params: Sequence[Any] = ()) -> list[str]:
        """The query plan of a read (see ``Database.explain``); for the tests of the hot queries."""
        with self._lock:
            return self.db.explain(sql, params)

    def query_in(self, sql: str, namespace: str, ids: Sequence[str]) -> list[Row]:
        """Run ``sql`` (parameters: namespace, then the ids; ``{marks}`` stands for the id placeholders) over
        the distinct ``ids`` in chunks of 500 (SQLite's parameter limit) and return all rows."""
        unique = list(dict.fromkeys(ids))
        rows: list[Row] = []
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            rows.extend(self.query(sql.format(marks=",".join("?" * len(chunk))), (namespace, *chunk)))
        return rows

    def vacuum(self) -> None:
        """Rewrite the database file (so erased text leaves no trace on disk) and truncate the WAL."""
        with self._lock:
            self.db.vacuum()

    # ---- typed reads -------------------------------------------------------------------------------

    def memory(self, namespace: str, memory_id: str) -> Row | None:
        rows = self.query(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace=? AND id=?", (namespace, memory_id))
        return rows[0] if rows else None

    def memories(self, namespace: str, ids: Sequence[str]) -> dict[str, Row]:
        rows = self.query_in(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace=? AND id IN ({{marks}})", namespace, ids)
        return {row["id"]: row for row in rows}

    def memory_filters(self, namespace: str, ids: Sequence[str] | None = None) -> dict[str, Row]:
        """The index-filter columns (namespace, status, retention, kind, scope, validity) of memories ``ids`` of
        ``namespace`` (every memory of it when None: an exact search's O(namespace) fallback) -> ``{id: row}``;
        what a search needs of each of its few hundred nearest records."""
        columns = "SELECT id, namespace, status, retention, kind, scope, valid_from, valid_to FROM memories WHERE namespace=?"
        if ids is None:
            return {row["id"]: row for row in self.query(columns, (namespace,))}
        rows = self.query_in(columns + " AND id IN ({marks})", namespace, ids)
        return {row["id"]: row for row in rows}

    def filter_rows(self, namespace: str, ids: Sequence[str],
                    tables: Sequence[str] = ("memories", "observations")) -> dict[str, dict[str, Row]]:
        """The index-filter columns of the records ``ids`` of ``namespace`` in each of ``tables`` (``memories``:
        as ``memory_filters``; ``observations``: as ``observation_filters``) -> ``{table: {id: row}}``, in one
        statement (a search reads the rows of every record it fetched, whatever its kind; the ids as one JSON
        array: ``id_list``)."""
        # ``wanted CROSS JOIN table``: one primary-key lookup per id. With ``namespace=? AND id IN (...)`` SQLite chose
        # the namespace's index for a few hundred ids, reading every row of the namespace (15 ms at 10k, issue 22)
        selects = {
            "memories": "SELECT 'memories' AS tbl, t.id, t.namespace, t.status, t.retention, t.kind, t.scope, "
                        "t.valid_from, t.valid_to, NULL AS time FROM wanted w CROSS JOIN memories t "
                        "WHERE t.id = w.id AND t.namespace = ?",
            "observations": "SELECT 'observations' AS tbl, t.id, t.namespace, NULL AS status, NULL AS retention, "
                            "NULL AS kind, NULL AS scope, NULL AS valid_from, NULL AS valid_to, t.time "
                            "FROM wanted w CROSS JOIN observations t WHERE t.id = w.id AND t.namespace = ?",
        }
        out: dict[str, dict[str, Row]] = {t: {} for t in tables}
        unique = list(dict.fromkeys(ids))
        if not unique:
            return out
        sql = f"WITH wanted(id) AS ({self.id_list()}) " + " UNION ALL ".join(selects[t] for t in tables)
        for r in self.query(sql, [json.dumps(unique), *([namespace] * len(tables))]):
            out[r["tbl"]][r["id"]] = r
        return out

    def id_list(self) -> str:
        """A ``SELECT`` of one column ``id``: the strings of a JSON array given as its one parameter (SQLite
        ``json_each``, PostgreSQL ``json_array_elements_text``). How a hot read passes a few hundred ids: a list
        of ``VALUES`` rows, one parameter each, cost SQLite 3.0 ms to parse and materialise for 288 ids where the
        JSON array costs 0.5 ms, and it has no parameter limit (issue 22)."""
        if self.db.kind == "postgresql":
            return "SELECT value AS id FROM json_array_elements_text(CAST(? AS json)) AS value"
        return "SELECT value AS id FROM json_each(?)"

    def memory_ids_matching(self, namespace: str, where: dict[str, Any] | None, limit: int) -> list[str] | None:
        """Ids of at most ``limit`` memories of ``namespace`` matching the index filter ``where``, read from the
        ledger, or None when ``where`` uses more than ``status`` and ``scope`` equalities and ``$in`` lists (the
        filters whose matches one index range finds: ``mem_ns_scope``). How a search learns that a filter matches
        only a few memories, so it can score them itself instead of asking Chroma for a filtered search."""
        if not where or set(where) - {"status", "scope"}:
            return None
        values: dict[str, list[Any]] = {}
        for key, condition in where.items():
            if isinstance(condition, dict):
                if len(condition) != 1 or next(iter(condition)) not in ("$eq", "$in"):
                    return None
                op, operand = next(iter(condition.items()))
                values[key] = list(operand) if op == "$in" else [operand]
            else:
                values[key] = [condition]
            if not values[key] or not all(isinstance(v, str) for v in values[key]):
                return None
        sql, params = "SELECT id FROM memories WHERE namespace=?", [namespace]
        for key in ("scope", "status"):
            if key in values:
                sql += f" AND {key} IN ({','.join('?' * len(values[key]))})"
                params += values[key]
        return [str(r["id"]) for r in self.query(sql + " LIMIT ?", (*params, int(limit)))]

    def provenance(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, list[dict[str, str]]]:
        out: dict[str, list[dict[str, str]]] = {m: [] for m in memory_ids}
        for row in self.query_in(
            "SELECT p.memory_id, p.observation_id, p.ref, o.time FROM provenance p "
            "JOIN observations o ON o.id = p.observation_id "
            "WHERE p.namespace=? AND p.memory_id IN ({marks}) ORDER BY o.time, o.rowid",
            namespace,
            memory_ids,
        ):
            out[row["memory_id"]].append(
                {"observation_id": row["observation_id"], "ref": row["ref"] or "", "time": row["time"]}
            )
        return out

    def links_of(self, namespace: str, memory_id: str) -> list[Row]:
        return self.query(
            "SELECT * FROM links WHERE namespace=? AND (src_id=? OR dst_id=?) ORDER BY created_at, rowid",
            (namespace, memory_id, memory_id),
        )

    def superseded_by(self, namespace: str, ids: Sequence[str]) -> dict[str, str]:
        """Map each id in ``ids`` to the memory that superseded or retracted it (if any)."""
        rows = self.query_in(
            "SELECT src_id, dst_id FROM links WHERE namespace=? AND type IN ('supersedes','retracts') "
            "AND dst_id IN ({marks}) ORDER BY created_at, rowid",
            namespace,
            ids,
        )
        return {row["dst_id"]: row["src_id"] for row in rows}

    def events_of(self, namespace: str, memory_id: str) -> list[dict[str, Any]]:
        return [
            {"type": r["type"], "detail": json.loads(r["detail"]), "at": r["created_at"]}
            for r in self.query(
                "SELECT type, detail, created_at FROM events WHERE namespace=? AND memory_id=? ORDER BY id",
                (namespace, memory_id),
            )
        ]

    def stats(self, namespace: str, ids: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
        """``{memory_id: {task_class: {shown, credited, blamed, unrewarded}}}``; task class '' = overall."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for row in self.query_in("SELECT * FROM stats WHERE namespace=? AND memory_id IN ({marks})", namespace, ids):
            out.setdefault(row["memory_id"], {})[row["task_class"]] = {
                "shown": row["shown"],
                "credited": row["credited"],
                "blamed": row["blamed"],
                "unrewarded": row["unrewarded"],
            }
        return out

    def observations(self, namespace: str, ids: Sequence[str]) -> dict[str, Row]:
        """Observations ``ids`` of ``namespace`` -> ``{id: row}`` (unknown ids are absent)."""
        return {r["id"]: r for r in self.query_in("SELECT * FROM observations WHERE namespace=? AND id IN ({marks})",
                                                    namespace, ids)}

    def observation_filters(self, namespace: str, ids: Sequence[str] | None = None) -> dict[str, Row]:
        """The index-filter columns (namespace, time) of observations ``ids`` of ``namespace`` (every one of it
        when None) -> ``{id: row}``."""
        columns = "SELECT id, namespace, time FROM observations WHERE namespace=?"
        if ids is None:
            return {row["id"]: row for row in self.query(columns, (namespace,))}
        rows = self.query_in(columns + " AND id IN ({marks})", namespace, ids)
        return {row["id"]: row for row in rows}

    def observations_by_ref(self, namespace: str, refs: Sequence[str]) -> list[Row]:
        """Observations of ``namespace`` stored from the messages ``refs`` (message ids)."""
        return self.query_in("SELECT * FROM observations WHERE namespace=? AND ref IN ({marks})", namespace, refs)

    def unprocessed_observations(self, namespace: str, limit: int = 256, people_only: bool = False) -> list[Row]:
        """Observations stored but never linked (a process killed between a turn's two steps), oldest first;
        ``people_only`` leaves out the assistant's and tools' messages."""
        people = " AND speaker NOT IN ('assistant','tool')" if people_only else ""
        return self.query(f"SELECT * FROM observations WHERE namespace=? AND processed=0{people} "
                          "ORDER BY time, rowid LIMIT ?", (namespace, limit))

    def held_observations(self, namespace: str, ids: Sequence[str], as_of: str | None = None) -> dict[str, Row]:
        """The observations among ``ids`` that recall may show as raw messages -> ``{id: row}``: not withheld, and
        every memory formed from them still held (at ``as_of`` when given: not ended by then), none retracted or
        contested. A message whose fact was replaced, retracted, forgotten or is in doubt is never shown raw (its
        memories carry the marks). One statement per 500 ids.
        ``formed``: how many memories were formed from it (0: a message the extractor could not read);
        ``formed_ids``: their ids (what ``formed_from`` gives for it)."""
        ended = "m.status IN ('retracted','contested') OR " + ("(m.valid_to IS NOT NULL AND m.valid_to <= ?)" if as_of
                                                               else "m.status != 'current'")
        sql = ("SELECT o.id, o.text, o.speaker, o.source, o.time, o.ref, f.memory_id AS formed_id "
               "FROM observations o LEFT JOIN provenance f ON f.observation_id = o.id "
               "WHERE o.namespace=? AND o.id IN ({marks}) AND o.withheld = 0 AND NOT EXISTS "
               f"(SELECT 1 FROM provenance p JOIN memories m ON m.id = p.memory_id WHERE p.observation_id = o.id AND ({ended}))")
        unique = list(dict.fromkeys(ids))
        out: dict[str, Row] = {}
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            params = (namespace, *chunk, *([as_of] if as_of else []))
            for r in self.query(sql.format(marks=",".join("?" * len(chunk))), params):
                row = out.get(r["id"])
                if row is None:
                    row = out[r["id"]] = Row((k, r[k]) for k in ("id", "text", "speaker", "source", "time", "ref"))
                    row["formed_ids"] = []
                if r["formed_id"] is not None:
                    row["formed_ids"].append(r["formed_id"])
                row["formed"] = len(row["formed_ids"])
        return out

    def formed_from(self, namespace: str, observation_ids: Sequence[str]) -> dict[str, list[str]]:
        """``{observation id: [ids of the memories formed from it]}`` for ``observation_ids``."""
        out: dict[str, list[str]] = {}
        for r in self.query_in("SELECT observation_id, memory_id FROM provenance WHERE namespace=? "
                               "AND observation_id IN ({marks})", namespace, observation_ids):
            out.setdefault(r["observation_id"], []).append(r["memory_id"])
        return out

    def memories_of_attribute(self, namespace: str, subjects: Sequence[str], attribute: str,
                              statuses: Sequence[str]) -> list[Row]:
        """Memories of ``subjects`` and ``attribute`` whose status is one of ``statuses``, oldest first."""
        return self.query(
            f"SELECT * FROM memories WHERE namespace=? AND attribute=? AND status IN ({','.join('?' * len(statuses))}) "
            f"AND subject IN ({','.join('?' * len(subjects))}) ORDER BY valid_from, rowid",
            (namespace, attribute, *statuses, *subjects),
        )

    def live_memories_quoting(self, namespace: str, subjects: Sequence[str], phrase: str) -> list[Row]:
        """Live memories of ``subjects`` whose text contains ``phrase`` (case-insensitive for ASCII), oldest first."""
        return self.query(
            f"SELECT * FROM memories WHERE namespace=? AND status IN (?,?) AND subject IN ({','.join('?' * len(subjects))}) "
            "AND text LIKE ? ESCAPE '\\' ORDER BY valid_from, rowid",
            (namespace, *LIVE_STATUSES, *subjects, "%" + _like_escape(phrase) + "%"),
        )

    def recall_candidates(self, namespace: str, ids: Sequence[str], chain_starts: Sequence[str] = (),
                          max_steps: int = MAX_CHAIN_STEPS) -> Candidates:
        """Everything recall reads of its candidate memories, in one statement (the ids as JSON arrays:
        ``id_list``): the rows of ``ids``, what replaced each, their statistics, and the heads of the supersession
        chains that start at ``chain_starts``, with the heads' rows, successors and statistics too.

        A chain is followed from its start through each memory's latest superseding or retracting link (the
        successor ``superseded_by`` names) until a memory nothing replaced, a forget request (the walk stays
        before it) or ``max_steps`` steps; ``heads`` maps each start whose walk moved to where it ended.
        Unknown ids and other namespaces' rows are absent. See :class:`Candidates`."""
        ids, starts = list(dict.fromkeys(ids)), list(dict.fromkeys(chain_starts))
        if not ids and not starts:
            return Candidates()
        values = self.id_list()
        if starts:
            step = (f"(SELECT l.src_id FROM links l WHERE l.namespace = ? AND l.dst_id = w.cur AND l.type IN "
                    f"{REPLACING_LINKS} ORDER BY l.created_at DESC, l.rowid DESC LIMIT 1)")
            sql = (
                f"WITH RECURSIVE starts(id) AS ({values}), "
                f"walk(start, cur, step) AS (SELECT id, id, 0 FROM starts UNION ALL SELECT w.start, {step}, w.step + 1 "
                "FROM walk w WHERE w.step < ? AND w.cur IS NOT NULL AND w.cur != ?), "
                "held(start, cur, step) AS (SELECT start, cur, step FROM walk WHERE cur IS NOT NULL AND cur != ?), "
                "heads(start, cur) AS (SELECT h.start, h.cur FROM held h WHERE h.cur != h.start AND "
                "h.step = (SELECT MAX(x.step) FROM held x WHERE x.start = h.start)), "
                + (f"wanted(id) AS ({values} UNION SELECT cur FROM heads) " if ids
                   else "wanted(id) AS (SELECT cur FROM heads) ")
            )
            params: list[Any] = [json.dumps(starts), namespace, int(max_steps), FORGET_REQUEST, FORGET_REQUEST,
                                 *([json.dumps(ids)] if ids else [])]
        else:
            sql = f"WITH wanted(id) AS ({values}), heads(start, cur) AS (SELECT id, id FROM wanted WHERE 1 = 0) "
            params = [json.dumps(ids)]
        sql += (f"SELECT {_CANDIDATE_COLUMNS}, h.start AS chain_start FROM wanted w CROSS JOIN memories m "  # by id
                "LEFT JOIN heads h ON h.cur = m.id "
                "LEFT JOIN stats s ON s.namespace = m.namespace AND s.memory_id = m.id WHERE m.id = w.id AND m.namespace = ?")
        rows = self.query(sql, (*params, namespace))
        found = Candidates()
        found.add(rows)
        found.heads = {r["chain_start"]: r["id"] for r in rows if r["chain_start"] is not None}
        return found

    def newest_of_keys(self, namespace: str, keys: Sequence[tuple[str, str]],
                       limit: int = 20) -> tuple[list[list[str]], Candidates]:
        """``newest_of_key`` of several keys in one statement: per key (in the order given) the ids of its
        ``limit`` newest memories, newest first, and what recall reads of them (:class:`Candidates`: rows,
        successors, statistics). Each key is one range of the ``mem_key_time`` index."""
        if not keys:
            return [], Candidates()
        if 3 * len(keys) + 1 > MAX_PARAMS:
            half = len(keys) // 2
            a, b = self.newest_of_keys(namespace, keys[:half], limit), self.newest_of_keys(namespace, keys[half:], limit)
            return a[0] + b[0], a[1].merge(b[1])
        branch = ("SELECT * FROM (SELECT {k} AS k, id, valid_from, rowid AS ord FROM memories WHERE namespace=? AND "
                  "subject=? AND attribute=? ORDER BY valid_from DESC, rowid DESC LIMIT ?) AS k{k}")
        sql = ("WITH picked(k, id, valid_from, ord) AS (" + " UNION ALL ".join(branch.format(k=k) for k in range(len(keys)))
               + f") SELECT p.k AS key_number, {_CANDIDATE_COLUMNS} FROM picked p JOIN memories m ON m.id = p.id "
               "LEFT JOIN stats s ON s.namespace = m.namespace AND s.memory_id = m.id "
               "ORDER BY p.k, p.valid_from DESC, p.ord DESC")
        params = [v for subject, attribute in keys for v in (namespace, subject, attribute, int(limit))]
        rows = self.query(sql, params)
        found = Candidates()
        per_key: list[list[str]] = [[] for _ in keys]
        for k in range(len(keys)):
            per_key[k] = found.add(r for r in rows if r["key_number"] == k)
        return per_key, found

    def newest_of_key(self, namespace: str, subject: str, attribute: str, limit: int = 20) -> list[Row]:
        """The ``limit`` newest memories of one key (subject, attribute), any scope and status, newest first."""
        return self.query("SELECT * FROM memories WHERE namespace=? AND subject=? AND attribute=? "
                          "ORDER BY valid_from DESC, rowid DESC LIMIT ?", (namespace, subject, attribute, limit))

    def postings(self, namespace: str, term: str, limit: int) -> list[tuple[str, int, int]]:
        """``(memory_id, tf, dl)`` of at most ``limit`` memories of ``namespace`` holding ``term`` (the lexical
        index, ``memory_graph.store.lexical``): one index range."""
        rows = self.query("SELECT memory_id, tf, dl FROM memory_terms WHERE namespace=? AND term=? LIMIT ?",
                          (namespace, term, int(limit)))
        return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]

    def lexical_postings(self, namespace: str, terms: Sequence[str],
                         limit: int) -> tuple[int, int, dict[str, list[tuple[str, int, int]]]]:
        """What a lexical search reads, in one statement: ``(memories indexed, their total length in terms,
        {term: [(memory_id, tf, dl)]})`` of ``namespace``, the postings of each of ``terms`` held by at most
        ``limit`` memories (a term held by more is absent: whether it is costs a count in the index that stops at
        ``limit + 1`` entries, no rows read), terms in the order given. Each term is one index range."""
        terms = list(dict.fromkeys(terms))
        branch = ("SELECT {k} AS k, memory_id, tf, dl FROM memory_terms WHERE namespace=? AND term=? AND "
                  "(SELECT COUNT(*) FROM (SELECT 1 FROM memory_terms WHERE namespace=? AND term=? LIMIT ?) AS held) <= ?")
        sql = " UNION ALL ".join(
            ["SELECT -1 AS k, NULL AS memory_id, docs AS tf, length AS dl FROM lexical_stats WHERE namespace=?"]
            + [branch.format(k=k) for k in range(len(terms))])
        params: list[Any] = [namespace]
        for term in terms:
            params += [namespace, term, namespace, term, int(limit) + 1, int(limit)]
        docs = length = 0
        postings: dict[str, list[tuple[str, int, int]]] = {}
        for r in self.query(sql, params):
            if r["k"] < 0:
                docs, length = int(r["tf"]), int(r["dl"])
            else:
                postings.setdefault(terms[r["k"]], []).append((str(r["memory_id"]), int(r["tf"]), int(r["dl"])))
        return docs, length, {t: postings[t] for t in terms if t in postings}

    def term_frequency(self, namespace: str, term: str, limit: int) -> int:
        """How many memories of ``namespace`` hold ``term``, counted up to ``limit`` (a count in the index, no
        rows read: whether a term is too common to look up costs at most ``limit`` index entries)."""
        rows = self.query("SELECT COUNT(*) AS n FROM (SELECT 1 FROM memory_terms WHERE namespace=? AND term=? LIMIT ?) "
                          "AS held", (namespace, term, int(limit)))
        return int(rows[0]["n"])

    def lexical_stats(self, namespace: str) -> tuple[int, int]:
        """``(memories indexed, their total length in terms)`` of ``namespace``'s lexical index."""
        rows = self.query("SELECT docs, length FROM lexical_stats WHERE namespace=?", (namespace,))
        return (int(rows[0]["docs"]), int(rows[0]["length"])) if rows else (0, 0)

    def schema_votes(self, namespace: str, attribute: str) -> tuple[int, int]:
        """``(replacements, coexist)`` votes recorded for ``attribute`` (see ``Tx.vote``)."""
        rows = self.query("SELECT replacements, coexist FROM schema_votes WHERE namespace=? AND attribute=?",
                          (namespace, attribute))
        return (int(rows[0]["replacements"]), int(rows[0]["coexist"])) if rows else (0, 0)

    def recall(self, namespace: str, recall_id: str) -> Row | None:
        """The recall record ``recall_id`` (query, budget, candidates and chosen as JSON, outcome) or None."""
        rows = self.query("SELECT * FROM recalls WHERE namespace=? AND id=?", (namespace, recall_id))
        return rows[0] if rows else None

    def has_observation_ref(self, namespace: str, ref: str) -> bool:
        """Whether a message with id ``ref`` was stored as an observation of ``namespace``."""
        return bool(self.query("SELECT 1 FROM observations WHERE namespace=? AND ref=? LIMIT 1", (namespace, ref)))

    def status_counts(self, namespace: str) -> dict[str, int]:
        """``{status: number of memories}`` of ``namespace``."""
        rows = self.query("SELECT status, COUNT(*) AS n FROM memories WHERE namespace=? GROUP BY status", (namespace,))
        return {r["status"]: int(r["n"]) for r in rows}

    def observation_count(self, namespace: str) -> int:
        return int(self.query("SELECT COUNT(*) AS n FROM observations WHERE namespace=?", (namespace,))[0]["n"])

    def recent_memories(self, namespace: str, limit: int = 50) -> list[Row]:
        """The ``limit`` newest memories (by ``valid_from``) of ``namespace``: ``id, text, status, retention,
        valid_from, valid_to, scope``."""
        return self.query("SELECT id, text, status, retention, valid_from, valid_to, scope FROM memories "
                          "WHERE namespace=? ORDER BY valid_from DESC, created_at DESC, rowid DESC LIMIT ?",
                          (namespace, limit))

    def supersession_step(self, namespace: str, memory_id: str, newer: bool) -> str | None:
        """One step along a supersession chain: the memory that superseded ``memory_id`` (``newer``) or the one
        it superseded (the first recorded link), or None."""
        if newer:
            sql = "SELECT src_id AS other FROM links WHERE namespace=? AND dst_id=? AND type='supersedes' ORDER BY created_at, rowid"
        else:
            sql = "SELECT dst_id AS other FROM links WHERE namespace=? AND src_id=? AND type='supersedes' ORDER BY created_at, rowid"
        rows = self.query(sql + " LIMIT 1", (namespace, memory_id))
        return str(rows[0]["other"]) if rows else None

    def items(self, path_prefix: str) -> list[Row]:
        """BaseStore items whose path (a JSON array) starts with ``path_prefix`` (the JSON of a namespace prefix
        without its closing bracket), newest first. Compared byte for byte (``substr``), never with ``LIKE``,
        which SQLite folds to one case: ``["GUS"`` is not under ``["gus"``."""
        head = path_prefix + ","
        return self.query("SELECT * FROM items WHERE (path = ? OR substr(path, 1, ?) = ?) "
                          "ORDER BY updated_at DESC, rowid DESC", (path_prefix + "]", len(head), head))

    def change_mark(self, namespace: str) -> tuple[int, int, int]:
        """A cheap mark that differs after any change to ``namespace``'s memories (each writes an event; a hard
        delete removes events and records what it erased): ``(events, memories, erased)`` counts. Lets a reader
        that keeps a view (the inspector) see that it is stale, a hard delete in another process included."""
        row = self.query("SELECT (SELECT COUNT(*) FROM events WHERE namespace=?) AS e, "
                         "(SELECT COUNT(*) FROM memories WHERE namespace=?) AS m, (SELECT COUNT(*) FROM erased) AS x",
                         (namespace, namespace))[0]
        return int(row["e"]), int(row["m"]), int(row["x"])

    def item(self, path: str, key: str) -> Row | None:
        """The BaseStore item ``key`` at exactly namespace path ``path`` (None when absent)."""
        rows = self.query("SELECT * FROM items WHERE path=? AND key=?", (path, key))
        return rows[0] if rows else None

    def observations_of_ref(self, namespace: str, ref: str) -> list[Row]:
        """Observations stored from the message ``ref`` (exactly that ref: every chunk of a long message keeps it,
        their ``chunk`` column tells them apart), oldest first, a message's chunks in order."""
        return self.query("SELECT * FROM observations WHERE namespace=? AND ref = ? ORDER BY time, rowid",
                          (namespace, ref))

    def item_paths(self) -> list[str]:
        """Every distinct namespace path (JSON array) of the BaseStore items."""
        return [r["path"] for r in self.query("SELECT DISTINCT path FROM items ORDER BY path")]

    def namespaces(self) -> list[str]:
        """Every namespace (user id) that has observations."""
        return [r["namespace"] for r in self.query("SELECT DISTINCT namespace FROM observations ORDER BY namespace")]

    def namespace_rows(self, kind: str, namespace: str) -> list[Row]:
        """Every row of record ``kind`` (see ``tx.PORTABLE``: observation, memory, provenance, link, event, stats,
        schema_vote, recall, feedback, item) of ``namespace``, with the portable columns only, in insertion order.
        O(namespace): for export and the inspector, never on a hot path.

        Raises:
            ValueError: an unknown ``kind``.
        """
        if kind not in PORTABLE:
            raise ValueError(f"unknown record kind {kind!r}")
        table, columns, order = PORTABLE[kind]
        return self.query(f"SELECT {', '.join(columns)} FROM {table} WHERE namespace=? ORDER BY {order}", (namespace,))

    def meta(self, key: str) -> str | None:
        """A value of the ledger's ``meta`` table (None when unset)."""
        rows = self.query("SELECT value FROM meta WHERE key=?", (key,))
        return str(rows[0]["value"]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.tx() as tx:
            tx.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                       (key, value))

    def store_id(self) -> str:
        """This store's id: 12 hex digits drawn when first asked and kept in ``meta`` (names the server backend's
        Chroma collections, whatever URL reached the database)."""
        found = self.meta("store_id")
        if found is not None:
            return found
        with self.tx() as tx:
            tx.execute("INSERT INTO meta(key, value) VALUES ('store_id', ?) ON CONFLICT(key) DO NOTHING", (new_id(),))
            return str(tx.execute("SELECT value FROM meta WHERE key='store_id'").fetchone()["value"])

    def erase_jobs(self) -> list[Row]:
        """Hard deletes whose ledger part committed and whose chat threads are still to scrub (all namespaces)."""
        return self.query("SELECT * FROM erase_jobs ORDER BY id")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
