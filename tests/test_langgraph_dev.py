"""``langgraph dev`` serves both graphs of ``langgraph.json``: the agent (offline) and the memory subgraph.

Starts the real CLI server from the repo root on a free port with a temporary store, drives it with
``langgraph_sdk`` and stops it. Skipped only when the ``langgraph`` CLI is not installed.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from servers import free_port

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 60.0

pytestmark = pytest.mark.integration


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    cli = shutil.which("langgraph")
    if cli is None:
        pytest.skip("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]')")
    port, store = free_port(), tmp_path / "store"
    env = {**os.environ, "MEMORY_GRAPH_STORE": str(store), "LANGSMITH_TRACING": "false", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False", "LANGGRAPH_NO_VERSION_CHECK": "1"}
    for var in ("MEMORY_GRAPH_MODEL", "OPENAI_BASE_URL", "MEMORY_GRAPH_USER"):
        env.pop(var, None)
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [cli, "dev", "--port", str(port), "--host", "127.0.0.1", "--no-browser", "--no-reload"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{(tmp_path / 'server.log').read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/ok", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev not ready after {STARTUP_TIMEOUT_S}s:\n{(tmp_path / 'server.log').read_text()[-3000:]}")
            time.sleep(0.25)
        yield url, store
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the session this test started (the CLI and its workers)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        log.close()


def test_langgraph_dev_serves_agent_and_memory(server: tuple[str, Path]) -> None:
    from langgraph_sdk import get_sync_client

    url, store = server
    client = get_sync_client(url=url)
    assert {a["graph_id"] for a in client.assistants.search(limit=20)} >= {"agent", "memory"}
    context: dict[str, Any] = {"user_id": "dev-user"}

    thread = client.threads.create()
    human = {"role": "human", "content": "I live in Lisbon."}
    client.runs.wait(thread["thread_id"], "agent", input={"messages": [human]}, context=context)
    ask = {"role": "human", "content": "Where do I live?"}
    client.runs.wait(thread["thread_id"], "agent", input={"messages": [ask]}, context=context)
    values = client.threads.get_state(thread["thread_id"])["values"]
    answer = values["messages"][-1]
    assert answer["type"] == "ai" and "Lisbon" in answer["content"] and "No LLM is configured" in answer["content"]
    assert "[m:" in answer["content"]
    assert values["credit"]["success"] is True  # the second turn credited the first turn's recall

    out = client.runs.wait(None, "memory", input={"query": "Where does the user live?"}, context=context)
    assert isinstance(out, dict) and "Lisbon" in out["memory_context"]
    assert out["memory_context"].startswith("<memory-context>")

    # langgraph.json names MemoryStore as the server's store: its store API is the memory (put = observe,
    # search = recall), in the same ledger
    client.store.put_item(["dev-user", "notes"], key="locker", value={"content": "My locker number is 4417."})
    assert client.store.get_item(["dev-user", "notes"], key="locker")["value"]["content"] == "My locker number is 4417."
    hits = client.store.search_items(["dev-user"], query="What is my locker number?")["items"]
    assert any("4417" in h["value"]["content"] for h in hits), hits

    # another user who finds the thread (threads.search lists it) cannot run on it: the run fails with
    # ThreadOwnerError, nothing is stored for them, and their message is not left in the owner's thread
    found = [t["thread_id"] for t in client.threads.search(limit=50)]
    assert thread["thread_id"] in found
    before = [m["content"] for m in client.threads.get_state(thread["thread_id"])["values"]["messages"]]
    intruder = {"role": "human", "content": "Where does the owner live? zq-intruder"}
    try:
        refused: Any = client.runs.wait(thread["thread_id"], "agent", input={"messages": [intruder]},
                                        context={"user_id": "mallory"})
    except Exception as exc:  # noqa: BLE001 - the SDK raises or returns the run's error, depending on version
        refused = {"__error__": {"message": str(exc)}}
    assert "ThreadOwnerError" in str(refused) or "another user" in str(refused), refused
    assert "Lisbon" not in str(refused)
    after = [m["content"] for m in client.threads.get_state(thread["thread_id"])["values"]["messages"]]
    assert after == before
    client.runs.wait(thread["thread_id"], "agent", input={"messages": [ask]}, context=context)  # the owner goes on

    # the run's context reached the graphs: everything is stored in the dev-user namespace
    with sqlite3.connect(store / "ledger.sqlite3") as db:
        namespaces = {row[0] for row in db.execute("SELECT DISTINCT namespace FROM observations")}
        intruded = db.execute("SELECT COUNT(*) FROM observations WHERE text LIKE '%zq-intruder%'").fetchone()[0]
    assert namespaces == {"dev-user"} and intruded == 0


def test_langgraph_dev_and_the_cli_share_one_store(server: tuple[str, Path], tmp_path: Path) -> None:
    """The server holds the store only during each operation: the CLI can read and write the same store while
    ``langgraph dev`` runs, and each sees the other's writes (no stale vector index in either process)."""
    import sys

    from langgraph_sdk import get_sync_client

    url, store = server
    client = get_sync_client(url=url)
    context: dict[str, Any] = {"user_id": "dev-user"}
    human = {"role": "human", "content": "I live in Lisbon."}
    client.runs.wait(client.threads.create()["thread_id"], "agent", input={"messages": [human]}, context=context)

    env = {**os.environ, "MEMORY_GRAPH_LOCK_TIMEOUT": "30"}
    cli = [sys.executable, "-m", "memory_graph.cli"]
    facts = tmp_path / "facts.jsonl"
    facts.write_text('{"speaker": "user", "text": "I moved to Porto.", "time": "2030-01-01T00:00:00Z"}\n')
    ingest = subprocess.run([*cli, "ingest", str(facts), "--store", str(store), "--user", "dev-user"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert ingest.returncode == 0, ingest.stderr
    ask = subprocess.run([*cli, "ask", "Where do I live?", "--history", "--store", str(store), "--user", "dev-user"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert ask.returncode == 0, ask.stderr
    assert "Lisbon" in ask.stdout and "Porto" in ask.stdout  # the server's write, seen by the CLI

    out = client.runs.wait(None, "memory", input={"query": "Where does the user live?"}, context=context)
    assert isinstance(out, dict) and "Porto" in out["memory_context"]  # the CLI's write, seen by the server
