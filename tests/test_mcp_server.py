"""The MCP server (``memory-graph mcp``) through the official SDK's client, over stdio and streamable HTTP.

Every server is a subprocess of ``tests/fake_embedder_cli.py`` (the CLI with the test embedder, so no model
loads); each is stopped when its test ends, passed or not.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from servers import stop

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp_types import TextResourceContents  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "tests" / "fake_embedder_cli.py"
CALL_TIMEOUT_S = 120  # a stuck server fails the test instead of hanging it (not a speed assertion)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMORY_GRAPH_MODEL", "OPENAI_BASE_URL", "MEMORY_GRAPH_USER")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update({"ANONYMIZED_TELEMETRY": "False", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    return env


def stdio_server(store: Path, user: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(LAUNCHER), "mcp", "--store", str(store),
                                                                "--user", user], env=_env(), cwd=ROOT)


@contextmanager
def http_server(store: Path, user: str, log: Path) -> Iterator[str]:
    """``memory-graph mcp --http 0`` as a subprocess; yields the URL it prints once it listens."""
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, str(LAUNCHER), "mcp", "--http", "0", "--store", str(store),
                                 "--user", user], stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=_env(), cwd=ROOT)
        try:
            deadline = time.monotonic() + CALL_TIMEOUT_S
            while not (found := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", log.read_text())):
                assert proc.poll() is None, f"the server exited ({proc.returncode}): {log.read_text()}"
                assert time.monotonic() < deadline, f"the server never listened: {log.read_text()}"
                time.sleep(0.2)
            yield found.group(1)
        finally:
            stop(proc)


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(4 * CALL_TIMEOUT_S):
            await scenario()

    anyio.run(bounded)


async def call(client: Client, tool: str, args: dict[str, Any]) -> Any:
    """A tool call that must succeed: its structured content."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content


async def call_error(client: Client, tool: str, args: dict[str, Any]) -> str:
    """A tool call that must fail as an MCP tool error (not a crash): its message."""
    result = await client.call_tool(tool, args)
    assert result.is_error, result
    return " ".join(c.text for c in result.content if c.type == "text")


async def recent_memories(client: Client) -> list[dict[str, Any]]:
    """The resource ``memory://recent``, parsed."""
    contents = (await client.read_resource("memory://recent")).contents
    assert len(contents) == 1 and isinstance(contents[0], TextResourceContents)
    return list(json.loads(contents[0].text))


def text_of(result: Any) -> str:
    return " ".join(c.text for c in result.content if c.type == "text")


async def the_scenario(client: Client) -> None:
    """remember, a supersession, recall (current / history / as_of), history, feedback, malformed calls, hard forget."""
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} >= {"remember", "recall", "feedback", "inspect", "history", "forget"}
    for tool in tools.tools:  # the namespace is the server's: no tool takes a user
        assert not {"user", "user_id", "namespace"} & set(tool.input_schema.get("properties", {})), tool.name

    leeds = (await call(client, "remember", {"text": "I live in Leeds.", "time": "2024-01-01T09:00:00"}))["formed"]
    york = (await call(client, "remember", {"text": "I moved to York.", "speaker": "user",
                                            "time": "2024-06-01T09:00:00Z", "ref": "msg-2"}))["formed"]
    assert [f["action"] for f in york] == ["supersede"] and york[0]["targets"] == [leeds[0]["id"]]
    old_id, new_id = leeds[0]["id"], york[0]["id"]

    now = await client.call_tool("recall", {"query": "Where do I live?"})
    assert not now.is_error
    rec = now.structured_content
    assert "York" in rec["context"] and "Leeds" not in rec["context"]
    assert rec["recall_id"] in text_of(now) and "<memory-context>" in text_of(now)
    first = rec["memories"][0]
    assert first["id"] == new_id and first["status"] == "current" and first["valid_from"].startswith("2024-06-01")
    assert first["source"] == "user" and first["valid_to"] is None

    past = await call(client, "recall", {"query": "Where do I live?", "as_of": "2024-03-01"})
    assert "Leeds" in past["context"] and "York" not in past["context"]
    both = await call(client, "recall", {"query": "Where do I live?", "include_history": True, "budget_tokens": 300})
    assert f"superseded by m:{new_id}" in both["context"] and both["tokens_used"] <= 300
    chain = await client.call_tool("history", {"memory_id": new_id})
    assert not chain.is_error
    assert [h["id"] for h in chain.structured_content["chain"]] == [old_id, new_id]
    assert chain.structured_content["chain"][0]["superseded_by"] == new_id
    assert f"[m:{old_id}]" in text_of(chain) and f"superseded by m:{new_id}" in text_of(chain)

    credit = await call(client, "feedback", {"recall_id": rec["recall_id"], "success": True, "used_ids": [new_id]})
    assert new_id in credit["credited"]
    assert (await call(client, "inspect", {"memory_id": new_id}))["stats"]["overall"]["credited"] >= 1

    # malformed calls: each an MCP tool error, and the server answers afterwards
    assert "NotFoundError" in await call_error(client, "inspect", {"memory_id": "no-such-id"})
    assert "NotFoundError" in await call_error(client, "feedback", {"recall_id": "no-such-recall", "success": True})
    assert "InvalidInputError" in await call_error(client, "feedback", {"recall_id": rec["recall_id"], "success": True})
    assert "time" in await call_error(client, "recall", {"query": "Where do I live?", "as_of": "Ben"})
    assert "budget_tokens" in await call_error(client, "recall", {"query": "x", "budget_tokens": "lots"})
    assert "memory_id" in await call_error(client, "forget", {})
    assert "text" in await call_error(client, "remember", {"text": "   "})
    assert await call_error(client, "no_such_tool", {"x": 1})
    assert (await call(client, "inspect", {}))["memories"] == {"current": 1, "superseded": 1}

    assert {m["id"] for m in await recent_memories(client)} == {old_id, new_id}

    gone = await call(client, "forget", {"memory_id": new_id, "hard": True})
    assert gone["hard"] is True and new_id in gone["forgotten"]
    assert "NotFoundError" in await call_error(client, "inspect", {"memory_id": new_id})
    after = await call(client, "recall", {"query": "Where do I live? York", "include_history": True})
    assert "York" not in after["context"] and all(m["id"] != new_id for m in after["memories"])


def test_stdio(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(tmp_path / "store", "alice"), read_timeout_seconds=CALL_TIMEOUT_S) as client:
            await the_scenario(client)

    run(scenario)


def test_streamable_http(tmp_path: Path) -> None:
    with http_server(tmp_path / "store", "alice", tmp_path / "server.log") as url:
        async def scenario() -> None:
            async with Client(url, read_timeout_seconds=CALL_TIMEOUT_S) as client:
                await the_scenario(client)

        run(scenario)


def test_two_users_on_one_store_never_meet(tmp_path: Path) -> None:
    store = tmp_path / "store"

    async def scenario() -> None:
        async with Client(stdio_server(store, "alice"), read_timeout_seconds=CALL_TIMEOUT_S) as alice, \
                Client(stdio_server(store, "bob"), read_timeout_seconds=CALL_TIMEOUT_S) as bob:
            a = (await call(alice, "remember", {"text": "I live in Leeds.", "time": "2024-01-01"}))["formed"][0]["id"]
            b = (await call(bob, "remember", {"text": "I live in Paris.", "time": "2024-01-02"}))["formed"][0]["id"]
            for me, mine, theirs, other_city, own_city in ((alice, a, b, "Paris", "Leeds"), (bob, b, a, "Leeds", "Paris")):
                rec = await call(me, "recall", {"query": f"Where do I live? {other_city} {own_city}",
                                                "include_history": True})
                assert own_city in rec["context"] and other_city not in rec["context"]
                assert [m["id"] for m in rec["memories"]] == [mine]
                summary = await call(me, "inspect", {})
                assert [m["id"] for m in summary["recent"]] == [mine] and summary["observations"] == 1
                assert [m["id"] for m in await recent_memories(me)] == [mine]
                for tool, args in (("inspect", {"memory_id": theirs}), ("history", {"memory_id": theirs}),
                                   ("forget", {"memory_id": theirs, "hard": True})):
                    assert "NotFoundError" in await call_error(me, tool, args)
                # an argument naming a user is not an argument: ignored or refused, never obeyed
                sneaky = await me.call_tool("recall", {"query": f"Where do I live? {other_city}", "user": "x"})
                assert other_city not in text_of(sneaky)
            assert "Paris" in (await call(bob, "recall", {"query": "Where do I live?"}))["context"]  # bob's survived

    run(scenario)


def test_cli_refuses_a_bad_or_busy_port(tmp_path: Path) -> None:
    def mcp(port: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(LAUNCHER), "mcp", "--http", str(port), "--store",
                               str(tmp_path / "store")], capture_output=True, text=True, env=_env(), cwd=ROOT,
                              timeout=CALL_TIMEOUT_S)

    bad = mcp(70000)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--http" in bad.stderr, bad.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = mcp(taken.getsockname()[1])
    lines = [ln for ln in busy.stderr.splitlines() if ln.strip()]
    assert busy.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: cannot listen"), busy.stderr


def test_the_readme_client_snippet_runs_as_written(tmp_path: Path) -> None:
    """Issue 21: README's MCP section shows the official client storing a fact and recalling it; the snippet is run
    here exactly as written (in a fresh folder, with the ``memory-graph`` command on PATH)."""
    import shutil

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## As an MCP server"):]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet and "from mcp import Client" in snippet.group(1)
    command = shutil.which("memory-graph")
    if command is None:
        pytest.skip("the memory-graph command is not on PATH (pip install -e .)")
    env = {**_env(), "PATH": os.pathsep.join([str(Path(command).parent), os.environ.get("PATH", "")])}
    done = subprocess.run([sys.executable, "-c", snippet.group(1)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=4 * CALL_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "<memory-context>" in done.stdout and "Porto" in done.stdout, done.stdout
