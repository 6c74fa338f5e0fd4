"""Shared fixtures: offline environment, a fresh store per test, the example conversation."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
for var in ("MEMORY_GRAPH_MODEL", "OPENAI_BASE_URL"):
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
