"""PostgreSQL and a Chroma server on free loopback ports in one folder: the server backend on one machine, for
trying it out and for the tests (``memory-graph servers start --dir D`` / ``stop --dir D``; ``tests/servers.py``).

``start(folder)`` initialises PostgreSQL's data folder (``initdb``, trust authentication on 127.0.0.1 only) unless
it exists, starts it (``pg_ctl``; as the ``postgres`` user when run as root, since PostgreSQL refuses root) and
``chroma run`` (detached: it outlives the command), creates the database ``memory`` and records both in
``FOLDER/servers.json``; ``stop(folder)`` stops them. Both servers listen on 127.0.0.1 only and have no password:
for one machine, not for a network.

Errors: ``StoreError`` when a binary is missing (the message says what to install) or a server does not start
(with the end of its log).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_graph.errors import StoreError

START_TIMEOUT_S = 90
STATE_FILE = "servers.json"
DATABASE = "memory"


@dataclass
class Running:
    """Servers started in ``folder``: ``admin_url`` (database ``postgres``), ``database_url`` (database
    ``memory``), ``chroma_url``, and what stopping them needs."""

    folder: Path
    admin_url: str
    database_url: str
    chroma_url: str
    chroma_pid: int


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: subprocess.Popen[Any], timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL when ``proc`` has not exited after ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def pg_bin(name: str) -> str | None:
    """PostgreSQL's program ``name`` (on PATH, else Debian's ``/usr/lib/postgresql/*/bin``), or None."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def missing() -> str | None:
    """Why the servers cannot be started here (None when they can)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]')"
    if not (pg_bin("initdb") and pg_bin("pg_ctl")):
        return "PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql)"
    if not shutil.which("chroma"):
        return "the chroma CLI is not installed (pip install chromadb)"
    return None


def as_postgres(cmd: list[str]) -> list[str]:
    """``cmd`` as the ``postgres`` user when this process is root (PostgreSQL refuses to run as root)."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def wait_until(check: Callable[[], Any], what: str, log: Path) -> None:
    """Poll ``check`` until it returns true; ``StoreError`` with the end of ``log`` after ``START_TIMEOUT_S``."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.3)
    raise StoreError(f"{what} did not start in {START_TIMEOUT_S} s: {log.read_text(errors='replace')[-2000:]}")


def _run(cmd: list[str], what: str) -> None:
    """Run ``cmd``; ``StoreError`` with the end of its output when it fails (run as root, PostgreSQL runs as the
    ``postgres`` user, which must be able to enter every folder above ``--dir``)."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise StoreError(f"{what} failed ({done.returncode}): {(done.stderr or done.stdout)[-1500:]}")


def _connects(url: str) -> bool:
    import psycopg

    psycopg.connect(url, connect_timeout=2).close()
    return True


def start(folder: str | Path, fsync: bool = True) -> Running:
    """Start PostgreSQL and ``chroma run`` in ``folder`` (created; ``pg/``, ``chroma/``, logs, ``servers.json``).

    Args:
        folder: where the servers keep their data; starting again after :func:`stop` keeps it.
        fsync: PostgreSQL's ``fsync`` (the tests turn it off for speed; never for data you keep).

    Raises:
        StoreError: a binary is missing, the folder already runs servers, or a server did not start.
    """
    import psycopg

    why = missing()
    if why:
        raise StoreError(f"cannot start the servers: {why}")
    root = Path(folder).resolve()
    if (root / STATE_FILE).exists():
        raise StoreError(f"servers are already running in {root} (memory-graph servers stop --dir {root})")
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    pgdata, pg_log, chroma_log = root / "pg", root / "pg.log", root / "chroma.log"
    fresh = not pgdata.exists()
    pgdata.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(pgdata, "postgres")
        shutil.chown(root, "postgres")
    pg_port, chroma_port = free_port(), free_port()
    if fresh:
        _run(as_postgres([str(pg_bin("initdb")), "-D", str(pgdata), "-A", "trust", "-U", "postgres", "--locale=C",
                          "-E", "UTF8"]), "initdb")
    options = f"-p {pg_port} -k {root} -c listen_addresses=127.0.0.1" + ("" if fsync else " -c fsync=off")
    _run(as_postgres([str(pg_bin("pg_ctl")), "-D", str(pgdata), "-l", str(pg_log), "-w", "-t", "60", "-o", options,
                      "start"]), "pg_ctl start")
    admin = f"postgresql://postgres@127.0.0.1:{pg_port}/postgres"
    wait_until(lambda: _connects(admin), "PostgreSQL", pg_log)
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname=%s", (DATABASE,)).fetchone():
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    with chroma_log.open("w") as out:
        chroma = subprocess.Popen(["chroma", "run", "--path", str(root / "chroma"), "--host", "127.0.0.1",
                                   "--port", str(chroma_port)], stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
    running = Running(root, admin, admin.rsplit("/", 1)[0] + f"/{DATABASE}", f"http://127.0.0.1:{chroma_port}", chroma.pid)
    (root / STATE_FILE).write_text(json.dumps({"admin_url": admin, "database_url": running.database_url,
                                               "chroma_url": running.chroma_url, "chroma_pid": chroma.pid}))
    try:
        wait_until(lambda: urllib.request.urlopen(f"{running.chroma_url}/api/v2/heartbeat", timeout=2).status == 200,
                   "chroma run", chroma_log)
    except BaseException:
        stop(root)
        raise
    return running


def stop(folder: str | Path) -> bool:
    """Stop the servers :func:`start` started in ``folder`` (their data stays); returns whether any were running."""
    root = Path(folder).resolve()
    state = root / STATE_FILE
    if not state.exists():
        return False
    pid = int(json.loads(state.read_text()).get("chroma_pid", 0))
    if pid > 0:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)  # its own session: the server and its workers
    subprocess.run(as_postgres([str(pg_bin("pg_ctl")), "-D", str(root / "pg"), "-m", "fast", "stop"]),
                   capture_output=True, timeout=60)
    state.unlink()
    return True
