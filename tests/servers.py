"""Real servers for the server-backend tests: PostgreSQL and ``chroma run`` on free loopback ports in a temporary
folder (``memory_graph.store.local_servers``, the code behind ``memory-graph servers start``), stopped at the end of the
session.

Without them (no PostgreSQL binaries, no ``psycopg``, no ``chroma``) the tests marked ``server`` are skipped with
the reason; with ``MEMORY_GRAPH_REQUIRE_SERVERS=1`` (CI) they fail instead. ``MEMORY_GRAPH_TEST_DATABASE_URL`` and
``MEMORY_GRAPH_TEST_CHROMA_URL`` use servers started elsewhere (the URL names a database the tests may create
databases next to).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memory_graph.store import local_servers
from memory_graph.store.local_servers import free_port, stop_process

stop = stop_process  # the tests' name for it
__all__ = ["Servers", "free_port", "missing", "started", "stop"]


@dataclass
class Servers:
    admin_url: str  # a database the tests connect to in order to create one database per test
    chroma_url: str
    data_dir: Path | None = None  # PostgreSQL's data folder when these tests started it

    def new_database(self) -> str:
        """A fresh, empty database on the server; returns its URL."""
        import psycopg

        name = f"mg_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.admin_url.rsplit("/", 1)[0] + f"/{name}"


def _external() -> bool:
    return bool(os.environ.get("MEMORY_GRAPH_TEST_DATABASE_URL") and os.environ.get("MEMORY_GRAPH_TEST_CHROMA_URL"))


def missing() -> str | None:
    """Why the servers cannot be started here (None when they can)."""
    return None if _external() else local_servers.missing()


@contextlib.contextmanager
def started() -> Iterator[Servers]:
    """Start PostgreSQL and a Chroma server (or use the ones named in the environment); stop them after."""
    if _external():
        yield Servers(os.environ["MEMORY_GRAPH_TEST_DATABASE_URL"], os.environ["MEMORY_GRAPH_TEST_CHROMA_URL"])
        return
    root = Path(tempfile.mkdtemp(prefix="mg-servers-"))
    os.chmod(root, 0o755)  # PostgreSQL runs as postgres when the tests run as root
    try:
        running = local_servers.start(root / "servers", fsync=False)
        yield Servers(running.admin_url, running.chroma_url, running.folder / "pg")
    finally:
        local_servers.stop(root / "servers")
        shutil.rmtree(root, ignore_errors=True)
