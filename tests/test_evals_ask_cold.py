"""``evals/ask_cold.py`` (issue 22): the command lines it times and its refusal of a folder that is no store (the
timing itself is a benchmark, not a test)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evals import ask_cold


def test_commands_time_ask_the_floor_and_a_baseline(tmp_path: Path) -> None:
    argv = ask_cold.commands(tmp_path / "s", "bench", "Where?", baseline=tmp_path / "old")
    assert argv["ask"][1:4] == ["-m", "memory_graph.cli", "ask"] and argv["ask_baseline"] == argv["ask"]
    assert argv["floor"][:2] == [sys.executable, "-c"] and argv["floor"][3] == str(
        (tmp_path / "s" / "chroma").resolve()
    )
    assert "PersistentClient" in argv["floor"][2] and "get_embedder" in argv["floor"][2]
    assert "ask_baseline" not in ask_cold.commands(tmp_path / "s", "bench", "Where?")


def test_a_folder_without_a_chroma_index_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        ask_cold.main(["--store", str(tmp_path)])
    assert exc.value.code == 2
