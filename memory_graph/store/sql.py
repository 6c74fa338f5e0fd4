"""The ledger's database connection: SQLite (embedded, a file) or PostgreSQL (server, a URL), one interface.

The ledger's SQL is written once, in SQLite's dialect with ``?`` parameters; :func:`to_postgres` translates the
few differences for PostgreSQL (placeholders, ``INSERT OR IGNORE``, ``rowid``, ``instr``, the schema's types).
Rows support both ``row["column"]`` and ``row[0]``, as ``sqlite3.Row`` does.

Write transactions: SQLite's ``BEGIN IMMEDIATE`` takes the database's write lock at the start; on PostgreSQL a
transaction takes one transaction-level advisory lock (``pg_advisory_xact_lock``) at the start, so writers run one
after another (a write reads a slot and then ends what it replaces: two writers must not both read the old head)
while readers never wait (MVCC). The lock goes with the transaction's end, also when its process dies.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
WRITE_LOCK_KEY = 0x6D656D67  # "memg": the advisory lock every ledger write transaction of a database takes


def is_database_url(location: str | Path) -> bool:
    """Whether a store location names a PostgreSQL database rather than a folder."""
    return str(location).lower().startswith(POSTGRES_SCHEMES)


def looks_like_url(location: str | Path) -> bool:
    """Whether a store location is written as a URL (``scheme://...``): a folder path is never one."""
    return re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", str(location)) is not None


_PLACEHOLDER = re.compile(r"\?")
_ROWID = re.compile(r"\browid\b")


def to_postgres(sql: str, params: bool = True) -> str:
    """The PostgreSQL form of a ledger statement written for SQLite: ``?`` -> ``%s`` (and a literal ``%`` ->
    ``%%``), ``INSERT OR IGNORE INTO t ...`` -> ``INSERT INTO t ... ON CONFLICT DO NOTHING``, ``rowid`` -> ``seq``
    (the insertion-order column the PostgreSQL schema adds), ``instr(`` -> ``strpos(``, ``LIKE`` -> ``ILIKE`` (SQLite's
    ``LIKE`` ignores ASCII case), and in DDL
    (``params=False``: a statement run without parameters, whose ``%`` stays as it is)
    ``INTEGER PRIMARY KEY [AUTOINCREMENT]`` -> ``BIGSERIAL PRIMARY KEY``, ``REAL`` -> ``DOUBLE PRECISION``, and a
    table's ``WITHOUT ROWID`` is dropped."""
    out = _PLACEHOLDER.sub("%s", sql.replace("%", "%%")) if params else sql
    if re.match(r"\s*INSERT OR IGNORE INTO", out, re.I):
        out = re.sub(r"INSERT OR IGNORE INTO", "INSERT INTO", out, count=1, flags=re.I) + " ON CONFLICT DO NOTHING"
    out = _ROWID.sub("seq", out)
    out = re.sub(r"\binstr\(", "strpos(", out)
    out = re.sub(r"\bLIKE\b", "ILIKE", out)  # SQLite's LIKE ignores ASCII case; PostgreSQL's does not
    out = re.sub(r"INTEGER PRIMARY KEY(?: AUTOINCREMENT)?", "BIGSERIAL PRIMARY KEY", out)
    out = re.sub(r"\bREAL\b", "DOUBLE PRECISION", out)
    out = re.sub(r"\)\s*WITHOUT ROWID\s*$", ")", out)  # PostgreSQL's tables are heaps with a primary-key index
    if re.match(r"\s*CREATE TABLE IF NOT EXISTS (observations|memories|links|items) \(", out):
        out = out.replace("(", "(seq BIGSERIAL, ", 1)  # the insertion order SQLite keeps as rowid
    return out


def postgres_schema(schema: str) -> str:
    """The SQLite schema script for PostgreSQL: translated, and every table that SQLite orders by ``rowid`` gets
    an insertion-order column ``seq`` (PostgreSQL has no rowid)."""
    return ";\n".join(to_postgres(st.strip(), params=False) for st in schema.split(";") if st.strip()) + ";"


class Row(dict):  # type: ignore[type-arg]
    """A result row: by column name, or by position like ``sqlite3.Row``."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)


class Database:
    """One connection to the ledger's database; the ``Ledger`` serialises its use between threads."""

    kind = "sqlite"

    def cursor(self) -> Any:
        raise NotImplementedError

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.cursor().execute(sql, params)

    def script(self, sql: str) -> None:
        raise NotImplementedError

    def begin(self, cur: Any) -> None:
        raise NotImplementedError

    def schema_version(self, cur: Any | None = None) -> int:
        raise NotImplementedError

    def set_schema_version(self, cur: Any, version: int) -> None:
        raise NotImplementedError

    def analyze(self) -> None:
        raise NotImplementedError

    def explain(self, sql: str, params: Sequence[Any] = ()) -> list[str]:
        """The planner's plan of the read ``sql`` (the ledger's dialect) as text lines, for tests of the hot
        queries: SQLite ``EXPLAIN QUERY PLAN`` details; PostgreSQL ``EXPLAIN`` with sequential scans
        discouraged (``enable_seqscan = off``), so a ``Seq Scan`` left in the plan means no index can serve it."""
        raise NotImplementedError

    def vacuum(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SqliteDatabase(Database):
    """A SQLite file in WAL mode (readers never wait for the writer)."""

    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA secure_delete=ON")

    def cursor(self) -> Any:
        return self._conn.cursor()

    def script(self, sql: str) -> None:
        self._conn.executescript(sql)

    def begin(self, cur: Any) -> None:
        cur.execute("BEGIN IMMEDIATE")

    def schema_version(self, cur: Any | None = None) -> int:
        return int((cur or self._conn).execute("PRAGMA user_version").fetchone()[0])

    def set_schema_version(self, cur: Any, version: int) -> None:
        cur.execute(f"PRAGMA user_version={int(version)}")

    def analyze(self) -> None:
        self._conn.execute("PRAGMA analysis_limit=1000")
        self._conn.execute("ANALYZE")

    def explain(self, sql: str, params: Sequence[Any] = ()) -> list[str]:
        return [str(row["detail"]) for row in self._conn.execute("EXPLAIN QUERY PLAN " + sql, tuple(params))]

    def vacuum(self) -> None:
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.execute("VACUUM")
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self._conn.close()


class _PgCursor:
    """A psycopg cursor that takes the ledger's SQLite-dialect statements (``to_postgres``); a failure of the
    server or the connection becomes ``StoreError`` (``_store_errors``)."""

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _PgCursor:
        with _store_errors():
            if params:
                self._cur.execute(to_postgres(sql), tuple(params))
            else:
                self._cur.execute(to_postgres(sql, params=False))
        return self

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> _PgCursor:
        rows = [tuple(r) for r in rows]
        if rows:
            with _store_errors():
                self._cur.executemany(to_postgres(sql), rows)
        return self

    def fetchone(self) -> Row | None:
        return self._cur.fetchone() if self._cur.description else None  # type: ignore[no-any-return]

    def fetchall(self) -> list[Row]:
        return list(self._cur.fetchall()) if self._cur.description else []

    @property
    def rowcount(self) -> int:
        return int(self._cur.rowcount)


@contextlib.contextmanager
def _store_errors() -> Iterator[None]:
    """psycopg's failures as the project's errors: the lock wait ran out -> ``StoreBusyError``; text PostgreSQL
    cannot store (a NUL byte) -> ``InvalidInputError``; the server gone, the connection lost, no rights ->
    ``StoreError`` (the next operation reconnects). A bug in a statement stays what it is."""
    import psycopg

    from memory_graph.errors import InvalidInputError, StoreBusyError, StoreError

    try:
        yield
    except psycopg.errors.LockNotAvailable:
        raise StoreBusyError("the store is busy: another writer held it past MEMORY_GRAPH_LOCK_TIMEOUT") from None
    except psycopg.DataError as exc:
        raise InvalidInputError(f"the database refused a value ({str(exc).strip().splitlines()[0]})") from None
    except (psycopg.OperationalError, psycopg.InterfaceError, psycopg.errors.InsufficientPrivilege) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"the PostgreSQL store failed ({type(exc).__name__}: {redact_url(first)})") from None


def _row_factory(cursor: Any) -> Any:
    names = [d.name for d in cursor.description] if cursor.description else []
    return lambda values: Row(zip(names, values, strict=True))


class PostgresDatabase(Database):
    """A PostgreSQL database (``postgresql://user:password@host:port/dbname``), autocommit outside ``BEGIN``.

    Raises:
        StoreError: the server cannot be reached or refuses the connection (the message names the host, not the
            password).
    """

    kind = "postgresql"

    def __init__(self, url: str, lock_timeout_s: float | None = None) -> None:
        self.url = url
        self.lock_timeout_s = lock_timeout_s if lock_timeout_s is not None else float(
            os.environ.get("MEMORY_GRAPH_LOCK_TIMEOUT", "120"))
        self._conn: Any = None
        self._connect()

    def _connect(self) -> None:
        import psycopg

        from memory_graph.errors import StoreError

        try:
            self._conn = psycopg.connect(self.url, autocommit=True, row_factory=_row_factory, connect_timeout=15)
        except (psycopg.Error, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(f"PostgreSQL store {redact_url(self.url)!r} cannot be reached ({type(exc).__name__}: "
                             f"{redact_url(first)})") from None

    def cursor(self) -> Any:
        if self._conn is None or self._conn.closed or self._conn.broken:  # a restart or a dropped connection
            self._connect()
        return _PgCursor(self._conn.cursor())

    def script(self, sql: str) -> None:
        cur = self.cursor()
        if cur.execute("SELECT to_regclass('meta') IS NOT NULL AS ready").fetchone()["ready"]:
            return  # created before: opening a store takes no lock (migrations take it when there are any)
        with _store_errors(), self._conn.transaction():
            raw = self._conn.cursor()
            raw.execute(f"SET LOCAL lock_timeout = '{int(self.lock_timeout_s * 1000)}ms'")
            raw.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")  # two first opens: one creates
            for statement in (s.strip() for s in sql.split(";")):
                if statement:
                    raw.execute(statement)

    def begin(self, cur: Any) -> None:
        cur.execute("BEGIN")
        cur.execute(f"SET LOCAL lock_timeout = '{int(self.lock_timeout_s * 1000)}ms'")
        cur.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")

    def schema_version(self, cur: Any | None = None) -> int:
        row = (cur or self.cursor()).execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row["value"]) if row else 0

    def set_schema_version(self, cur: Any, version: int) -> None:
        cur.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET "
                    "value=excluded.value", (str(int(version)),))

    def analyze(self) -> None:
        self._conn.execute("ANALYZE")

    def explain(self, sql: str, params: Sequence[Any] = ()) -> list[str]:
        with _store_errors(), self._conn.transaction():
            raw = self._conn.cursor()
            raw.execute("SET LOCAL enable_seqscan = off")
            raw.execute("EXPLAIN " + to_postgres(sql), tuple(params))
            return [str(next(iter(row.values()))) for row in raw.fetchall()]

    def vacuum(self) -> None:
        """``VACUUM FULL`` of the tables a hard delete edits: each is rewritten into new files and the old ones are
        removed, so erased rows do not stay in the table's files (plain ``VACUUM`` only marks them free; breaker
        run), and analyzed again, so the planner's statistics (``pg_stats``: most common values, histograms) no
        longer sample them. The write-ahead log keeps them until the server recycles its segments: the operator's business."""
        cur = self.cursor()
        for table in ("observations", "memories", "provenance", "links", "events", "recalls", "feedback", "items",
                      "erase_jobs", "memory_terms"):
            cur.execute(f"VACUUM (FULL, ANALYZE) {table}")  # ANALYZE: pg_stats keeps sampled values (breaker run)
        with contextlib.suppress(Exception):  # the old statistics rows, when the role may (owner or superuser)
            cur.execute("VACUUM FULL pg_statistic")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def redact_url(url: str) -> str:
    """``url`` (or a message quoting one) without its password, in the authority or as a ``password=`` parameter."""
    out = re.sub(r"(://[^:/@\s]*):[^\s/]*@", r"\1:***@", url)
    return re.sub(r"(password=)[^&\s]*", r"\1***", out, flags=re.I)
