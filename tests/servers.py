"""Real servers for the server-backend tests: PostgreSQL (Debian's ``initdb``/``pg_ctl``) and ``chroma run``, each
started on a free loopback port in a temporary folder and stopped at the end of the session.

Without them (no PostgreSQL binaries, no ``psycopg``, no ``chroma``) the tests marked ``server`` are skipped with
the reason; with ``MEMORY_GRAPH_REQUIRE_SERVERS=1`` (CI) they fail instead. ``MEMORY_GRAPH_TEST_DATABASE_URL`` and
``MEMORY_GRAPH_TEST_CHROMA_URL`` use servers started elsewhere (the URL names a database the tests may create
databases next to).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

START_TIMEOUT_S = 90


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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(proc: subprocess.Popen[Any], timeout: float = 20.0) -> None:
    """Stop a server a test started: SIGTERM, then SIGKILL when it has not exited after ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def missing() -> str | None:
    """Why the servers cannot be started here (None when they can)."""
    if os.environ.get("MEMORY_GRAPH_TEST_DATABASE_URL") and os.environ.get("MEMORY_GRAPH_TEST_CHROMA_URL"):
        return None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]')"
    if not (_pg_bin("initdb") and _pg_bin("pg_ctl")):
        return "PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql)"
    if not shutil.which("chroma"):
        return "the chroma CLI is not installed (pip install chromadb)"
    return None


def _as_postgres(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as the ``postgres`` user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _wait(check: object, what: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():  # type: ignore[operator]
                return
        time.sleep(0.3)
    raise RuntimeError(f"{what} did not start in {START_TIMEOUT_S} s:\n{log.read_text(errors='replace')[-2000:]}")


@contextlib.contextmanager
def started() -> Iterator[Servers]:
    """Start PostgreSQL and a Chroma server (or use the ones named in the environment); stop them after."""
    if os.environ.get("MEMORY_GRAPH_TEST_DATABASE_URL") and os.environ.get("MEMORY_GRAPH_TEST_CHROMA_URL"):
        yield Servers(os.environ["MEMORY_GRAPH_TEST_DATABASE_URL"], os.environ["MEMORY_GRAPH_TEST_CHROMA_URL"])
        return
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="mg-servers-"))
    os.chmod(root, 0o755)
    pgdata, pg_log = root / "pg", root / "pg.log"
    pgdata.mkdir()
    if os.geteuid() == 0:
        shutil.chown(pgdata, "postgres")
        shutil.chown(root, "postgres")
    pg_port, chroma_port = free_port(), free_port()
    pg_ctl = _pg_bin("pg_ctl")
    chroma = None
    try:
        subprocess.run(_as_postgres([str(_pg_bin("initdb")), "-D", str(pgdata), "-A", "trust", "-U", "postgres",
                                     "--locale=C", "-E", "UTF8"]), check=True, capture_output=True, timeout=120)
        subprocess.run(_as_postgres([str(pg_ctl), "-D", str(pgdata), "-l", str(pg_log), "-w", "-t", "60", "-o",
                                     f"-p {pg_port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start"]),
                       check=True, capture_output=True, timeout=120)
        admin = f"postgresql://postgres@127.0.0.1:{pg_port}/postgres"
        _wait(lambda: psycopg.connect(admin, connect_timeout=2).close() is None, "PostgreSQL", pg_log)
        chroma_log = root / "chroma.log"
        with chroma_log.open("w") as out:
            chroma = subprocess.Popen(["chroma", "run", "--path", str(root / "chroma"), "--host", "127.0.0.1",
                                       "--port", str(chroma_port)], stdout=out, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        url = f"http://127.0.0.1:{chroma_port}"
        _wait(lambda: urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2).status == 200, "chroma run", chroma_log)
        yield Servers(admin, url, pgdata)
    finally:
        if chroma is not None:
            stop(chroma)
        subprocess.run(_as_postgres([str(pg_ctl), "-D", str(pgdata), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
