"""The server backend: the ledger on PostgreSQL, the vectors on a Chroma server (issue 12).

Selected by a URL: ``Memory("postgresql://user@host:5432/db", chroma_url="http://host:8000")``, the CLI's
``--store postgresql://... --chroma http://...``, or ``MEMORY_GRAPH_DATABASE_URL`` / ``MEMORY_GRAPH_CHROMA_URL``. Many
processes on many machines share it: there is no file lock; PostgreSQL's transactions decide (every write
transaction takes the database's advisory write lock first, see ``memory_graph.store.sql``, and readers never
wait), and the Chroma server is one index that every client sees at once (no per-process copy to refresh).

The same ``Store`` interface as the embedded backend (the rest of the code cannot tell them apart), with these
differences: the collections are named after the store's id, drawn once and kept in its ledger
(``mg_<12 hex>_<namespace key>-live``, see ``memory_graph.store.index``), so one Chroma server holds the indexes of several stores and every spelling of one
database's URL finds the same index; the ledger records its Chroma server and refuses another (``_bind``); a hard delete removes the vectors through Chroma's API, and what the *server's*
files keep until its own compaction is the server's business (the embedded backend compacts its files itself);
the CLI chat keeps its threads in memory for the session (there is no store folder for ``threads.sqlite3``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from memory_graph.errors import InvalidInputError, MemoryGraphError, StoreError, StoreNotFoundError
from memory_graph.store import Store
from memory_graph.store.index import VectorIndex
from memory_graph.store.ledger import Ledger
from memory_graph.store.sql import redact_url

log = logging.getLogger(__name__)


def chroma_client(url: str) -> Any:
    """A Chroma ``HttpClient`` for ``http(s)://host:port`` (telemetry off).

    Raises:
        InvalidInputError: ``url`` is not an http(s) URL with a host.
    """
    import chromadb
    from chromadb.config import Settings

    try:
        parsed = urlparse(url)
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
    except ValueError:  # a port out of range
        raise InvalidInputError(f"a Chroma server URL looks like http://host:8000, got {url!r}") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise InvalidInputError(f"a Chroma server URL looks like http://host:8000, got {url!r}")
    try:
        return chromadb.HttpClient(host=parsed.hostname, port=port, ssl=parsed.scheme == "https",
                                   settings=Settings(anonymized_telemetry=False))
    except Exception as exc:  # noqa: BLE001 - chromadb raises ValueError (with the server's page) when it is not reachable
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"the Chroma server {url!r} cannot be used ({type(exc).__name__}: {first})") from None


def _remote_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the Chroma server failing (unreachable, an error page), not a bug of ours."""
    import httpx

    return isinstance(exc, (httpx.HTTPError, ConnectionError)) or type(exc).__module__.startswith("chromadb")


def normalise_chroma_url(url: str) -> str:
    """``scheme://host:port`` of a Chroma server URL (the form recorded in the ledger)."""
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 8000)
    return f"{parsed.scheme}://{(parsed.hostname or '').lower()}:{port}"


class ServerStore(Store):
    """Ledger on PostgreSQL + index on a Chroma server (see the module docstring).

    Raises:
        InvalidInputError: no Chroma server URL, or a malformed one.
        StoreError: either server cannot be reached.
        StoreNotFoundError: ``create`` is False and the database holds no memory-graph ledger.
    """

    def __init__(self, database_url: str, chroma_url: str, embedding_model: str = "", create: bool = True) -> None:
        if not chroma_url:
            raise InvalidInputError("a PostgreSQL store keeps its vectors on a Chroma server: give its URL "
                                    "(--chroma http://host:8000 or MEMORY_GRAPH_CHROMA_URL)")
        self.path = None  # type: ignore[assignment]
        self.location = redact_url(database_url)  # for messages
        self.url = database_url
        self.chroma_url = chroma_url
        self._key = (database_url, embedding_model, chroma_url)
        self._setup(embedding_model)
        self._client = chroma_client(chroma_url)
        self.ledger = Ledger(database_url)
        try:
            if not create and not self.ledger.namespaces():
                raise StoreNotFoundError(f"store {self.location!r} holds no memories (a command that writes creates it)")
            self._prefix = f"mg_{self.ledger.store_id()}_"
            self._bind(chroma_url)
            self._open()
        except BaseException:
            self.ledger.close()
            raise

    def _bind(self, chroma_url: str) -> None:
        """Record which Chroma server holds this store's vectors, and refuse another one: two processes writing to
        two servers would leave each index missing the other's writes (breaker run: recall then missed current
        values). ``MEMORY_GRAPH_CHROMA_REBIND=1`` moves the index to the given server (it is rebuilt there)."""
        given = normalise_chroma_url(chroma_url)
        bound = self.ledger.meta("chroma_url")
        if bound is None or bound == given:
            if bound is None:
                self.ledger.set_meta("chroma_url", given)
            return
        if os.environ.get("MEMORY_GRAPH_CHROMA_REBIND") != "1":
            raise StoreError(f"store {self.location!r} keeps its vectors on the Chroma server {bound}, not {given}; "
                             f"use that one (or set MEMORY_GRAPH_CHROMA_REBIND=1 once to rebuild the index on {given})")
        log.warning("store %s: moving the vector index from %s to %s", self.location, bound, given)
        self.ledger.set_meta("chroma_url", given)
        with self.session():
            self._drop_index()

    @property
    def threads_folder(self) -> Path | None:
        return None

    @contextlib.contextmanager
    def session(self) -> Iterator[Store]:
        """One operation (re-entrant): an ``RLock`` between this process's threads only; between processes the
        database's transactions decide, and the Chroma server is one shared index."""
        with self._thread_lock:
            self._depth += 1
            try:
                yield self
            except MemoryGraphError:
                raise
            except Exception as exc:
                if not _remote_failure(exc):
                    raise
                first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
                raise StoreError(f"the Chroma server {self.chroma_url!r} failed ({type(exc).__name__}: {first}); "
                                 "what the ledger committed is kept, and the index catches up on the next open") from None
            finally:
                self._depth -= 1

    def _open_index(self) -> VectorIndex:
        """This store's collections on the Chroma server.

        Raises:
            StoreError: the server is down or refuses (the message names it).
        """
        try:
            return VectorIndex(None, client=self._client, prefix=self._prefix, remember_missing=False)
        except Exception as exc:  # noqa: BLE001 - Chroma's client raises its own classes when the server is down
            raise StoreError(f"the Chroma server {self.chroma_url!r} cannot be used ({type(exc).__name__}: {exc})") from exc

    def _close_index(self) -> None:
        self._index = None  # the HTTP client stays; nothing is held on the server between requests

    def _purge_index_files(self, ids: Any) -> None:
        """Nothing to compact here: the records are deleted through the server's API (its files are its own)."""

    def _discard_index(self) -> None:
        """Drop both collections on the server (``Store._drop_index`` then marks the ledger's rows for indexing)."""
        self.index.drop()
        self._index = None

    def _recover_compaction(self) -> None:
        """No local compaction exists to be interrupted."""

    def _recover_missing_index(self) -> None:
        """A server whose collections are empty while the ledger says rows are indexed (a new or wiped Chroma
        server): every row is marked for indexing, so this reconcile rebuilds the index."""
        if self.index.total() or self.index.legacy_names():
            return
        if self.ledger.query(
            "SELECT 1 FROM memories WHERE indexed=1 UNION ALL SELECT 1 FROM observations WHERE indexed=1 LIMIT 1"
        ):
            log.warning("store %s: the Chroma server holds no index for it; rebuilding it from the ledger", self.location)
            self._drop_index(every_row=False)
