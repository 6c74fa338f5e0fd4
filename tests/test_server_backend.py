"""The server backend (issue 12): the ledger on PostgreSQL, the vectors on a Chroma server, both real (started by
``tests/servers.py``). The API behaviour is the same suite as the embedded backend (``tests/test_memory_api.py``
and ``tests/test_langgraph_store.py`` run on both); this file holds what only the server backend has."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from memory_graph import Memory
from memory_graph.errors import InvalidInputError, StoreError
from memory_graph.store.index import PARTS
from memory_graph.store.sql import is_database_url, postgres_schema, redact_url, to_postgres


def test_statements_translate_to_postgres() -> None:
    assert to_postgres("SELECT * FROM memories WHERE namespace=? AND id IN (?,?) ORDER BY valid_from, rowid") == (
        "SELECT * FROM memories WHERE namespace=%s AND id IN (%s,%s) ORDER BY valid_from, seq")
    assert to_postgres("INSERT OR IGNORE INTO provenance(memory_id) VALUES (?)") == (
        "INSERT INTO provenance(memory_id) VALUES (%s) ON CONFLICT DO NOTHING")
    assert to_postgres("SELECT id FROM t WHERE instr(lower(text), ?) > 0 AND text LIKE '%x'") == (
        "SELECT id FROM t WHERE strpos(lower(text), %s) > 0 AND text ILIKE '%%x'")
    assert to_postgres("SELECT '100%'", params=False) == "SELECT '100%'"
    schema = postgres_schema("CREATE TABLE IF NOT EXISTS memories (id TEXT PRIMARY KEY, confidence REAL NOT NULL);"
                             "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, x TEXT)")
    assert "memories (seq BIGSERIAL, id TEXT PRIMARY KEY, confidence DOUBLE PRECISION NOT NULL)" in schema
    assert "events (id BIGSERIAL PRIMARY KEY, x TEXT)" in schema
    assert is_database_url("postgresql://u@h/db") and not is_database_url("./postgresql")
    assert redact_url("postgresql://me:s3cret@host:5432/db") == "postgresql://me:***@host:5432/db"


def test_a_postgres_store_needs_a_chroma_server() -> None:
    with pytest.raises(InvalidInputError, match="Chroma server"):
        Memory("postgresql://nobody@127.0.0.1:1/none", user_id="u")


@pytest.mark.server
def test_an_unreachable_database_is_a_clear_store_error(servers: Any) -> None:
    with pytest.raises(StoreError) as info:
        Memory("postgresql://me:s3cret@127.0.0.1:1/none", user_id="u", chroma_url=servers.chroma_url)
    assert "cannot be reached" in str(info.value) and "s3cret" not in str(info.value)


@pytest.mark.server
def test_two_databases_on_one_chroma_server_never_mix(servers: Any) -> None:
    first, second = servers.new_database(), servers.new_database()
    with Memory(first, user_id="u", chroma_url=servers.chroma_url) as a, \
            Memory(second, user_id="u", chroma_url=servers.chroma_url) as b:
        a.observe("My locker code is 4417.")
        b.observe("My locker code is 9902.")
        assert "4417" in a.recall("locker code").context and "9902" not in a.recall("locker code").context
        assert "9902" in b.recall("locker code").context and "4417" not in b.recall("locker code").context


@pytest.mark.server
def test_a_newer_schema_is_refused(servers: Any) -> None:
    url = servers.new_database()
    with Memory(url, user_id="u", chroma_url=servers.chroma_url) as mem:
        with mem.store.write() as tx:
            tx.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
        mem.store.ledger.vacuum()
    with pytest.raises(StoreError, match="newer"):
        Memory(url, user_id="u", chroma_url=servers.chroma_url)


@pytest.mark.server
def test_a_wiped_chroma_server_is_rebuilt_from_the_ledger(servers: Any) -> None:
    url = servers.new_database()
    with Memory(url, user_id="u", chroma_url=servers.chroma_url) as mem:
        mem.observe("I live in Lisbon.")
        with mem.store.session():
            mem.store.index.drop()  # the Chroma server lost its data
    with Memory(url, user_id="u", chroma_url=servers.chroma_url) as mem:
        assert "Lisbon" in mem.recall("Where do I live?").context
        assert mem.store.last_reconcile["indexed"] >= 2  # the observation and the memory


@pytest.mark.server
def test_a_hard_delete_leaves_no_text_in_the_database_or_vectors_in_chroma(servers: Any) -> None:
    url = servers.new_database()
    with Memory(url, user_id="u", chroma_url=servers.chroma_url) as mem:
        mem.observe("My passport number is XK-77120.", ref="p")
        mem.observe("I live in Lisbon.")
        hit = next(it for it in mem.recall("passport number").items if "XK-77120" in it.text)
        mem.store.ledger.db.analyze()  # what autovacuum does as tables grow: pg_stats samples the values
        gone = mem.forget(hit.id, hard=True)
        rows = mem.store.ledger.query("SELECT text FROM observations UNION ALL SELECT text FROM memories")
        assert rows and not any("XK-77120" in r["text"] for r in rows)
        sampled = mem.store.ledger.query("SELECT attname FROM pg_stats WHERE most_common_vals::text LIKE ? OR "
                                         "histogram_bounds::text LIKE ?", ("%XK-77120%", "%XK-77120%"))
        assert sampled == []  # nor in the planner's statistics (breaker run)
        if servers.data_dir is not None:  # nor in the tables' files (VACUUM FULL); the WAL is the server's own
            import psycopg

            with psycopg.connect(servers.admin_url, autocommit=True) as admin:
                admin.execute("CHECKPOINT")  # pages on disk, not only in shared buffers
            found = [f for f in (servers.data_dir / "base").rglob("*") if f.is_file() and b"XK-77120" in f.read_bytes()]
            assert found == []
        with mem.store.session():
            left = [i for part in PARTS for i in mem.store.index.present(mem.context.user_id, part,
                                                                          gone["forgotten"] + gone["observations"])]
        assert left == []


@pytest.mark.server
def test_the_cli_takes_a_database_url_and_a_chroma_server(servers: Any, tmp_path: Any) -> None:
    url = servers.new_database()
    facts = tmp_path / "facts.jsonl"
    facts.write_text('{"speaker": "user", "text": "I live in Lisbon.", "time": "2024-01-01T00:00:00Z"}\n'
                     '{"speaker": "user", "text": "I moved to Porto.", "time": "2024-06-01T00:00:00Z"}\n')
    cli = [sys.executable, "-m", "memory_graph.cli"]
    ingest = subprocess.run([*cli, "ingest", str(facts), "--store", url, "--chroma", servers.chroma_url, "--user", "u"],
                            capture_output=True, text=True, timeout=300)
    assert ingest.returncode == 0, ingest.stderr
    ask = subprocess.run([*cli, "ask", "Where do I live?", "--history", "--user", "u"], capture_output=True, text=True,
                         timeout=300, env={**_env(), "MEMORY_GRAPH_DATABASE_URL": url,
                                           "MEMORY_GRAPH_CHROMA_URL": servers.chroma_url})
    assert ask.returncode == 0, ask.stderr
    assert "Porto" in ask.stdout and "superseded" in ask.stdout
    missing = subprocess.run([*cli, "ask", "Where?", "--store", url, "--user", "u"], capture_output=True, text=True,
                             timeout=300, env={k: v for k, v in _env().items() if k != "MEMORY_GRAPH_CHROMA_URL"})
    assert missing.returncode != 0 and "Chroma server" in missing.stderr and "Traceback" not in missing.stderr


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_a_url_that_is_not_a_store_is_refused() -> None:
    for location in ("http://127.0.0.1:5432/db", "postgresql+psycopg://u@h/db"):
        with pytest.raises(InvalidInputError, match="neither a folder"):
            Memory(location, user_id="u")
    assert redact_url("postgresql://h/db?password=qsecret123&x=1") == "postgresql://h/db?password=***&x=1"


@pytest.mark.server
def test_every_spelling_of_a_database_finds_one_index_and_one_chroma_server(servers: Any) -> None:
    """Breaker run: localhost vs 127.0.0.1 (or two Chroma servers) gave one database two diverging indexes."""
    url = servers.new_database()
    alias = url.replace("127.0.0.1", "localhost")
    with Memory(url, user_id="u", chroma_url=servers.chroma_url) as mem:
        mem.observe("My garage door code is 5521.")
    with Memory(alias, user_id="u", chroma_url=servers.chroma_url) as mem:
        assert "5521" in mem.recall("garage door code").context
    port = servers.chroma_url.rsplit(":", 1)[1]
    with pytest.raises(StoreError, match="keeps its vectors on the Chroma server"):
        Memory(url, user_id="u", chroma_url=f"http://localhost:{port}")


@pytest.mark.server
def test_a_chroma_server_that_goes_away_is_a_store_error(servers: Any, tmp_path: Any) -> None:
    """Breaker run: with the Chroma server down, observe and recall raised httpx.ConnectError."""
    import time
    import urllib.request

    from servers import free_port

    port = free_port()
    chroma = subprocess.Popen(["chroma", "run", "--path", str(tmp_path / "c"), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        with Memory(servers.new_database(), user_id="u", chroma_url=f"http://127.0.0.1:{port}") as mem:
            mem.observe("I live in Lisbon.")
            chroma.kill()
            chroma.wait(30)
            with pytest.raises(StoreError, match="Chroma server"):
                mem.recall("Where do I live?")
            with pytest.raises(StoreError, match="Chroma server"):
                mem.observe("I moved to Porto.")
    finally:
        if chroma.poll() is None:
            chroma.kill()


def test_the_servers_command_starts_and_stops_both_servers() -> None:
    """Issue 21: ``memory-graph servers start --dir D`` prints two URLs a store opens with; ``stop`` stops both."""
    from conftest import require
    from typer.testing import CliRunner

    from memory_graph.cli import app
    from memory_graph.store import local_servers

    require(local_servers.missing(), "servers command")
    runner = CliRunner()
    folder = Path(tempfile.mkdtemp(prefix="mg-cli-servers-")) / "srv"
    os.chmod(folder.parent, 0o755)  # PostgreSQL's user (postgres, when run as root) must enter every folder above
    started = runner.invoke(app, ["servers", "start", "--dir", str(folder)])
    try:
        assert started.exit_code == 0, started.output
        urls = dict(line.split("=", 1) for line in started.stdout.split() if "=" in line)
        with Memory(urls["MEMORY_GRAPH_DATABASE_URL"], user_id="alice",
                    chroma_url=urls["MEMORY_GRAPH_CHROMA_URL"]) as mem:
            mem.observe("I live in Porto.", time="2024-01-01T00:00:00")
            assert "Porto" in mem.recall("Where do I live?").context
    finally:
        stopped = runner.invoke(app, ["servers", "stop", "--dir", str(folder)])
    assert stopped.exit_code == 0 and "stopped" in stopped.stdout
    assert not local_servers.stop(folder)  # nothing left running
    shutil.rmtree(folder.parent, ignore_errors=True)
