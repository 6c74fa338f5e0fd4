"""Schema migrations (an older store opens and upgrades; a newer one is refused) and withheld messages
(role-play, hypotheticals and forget requests are never recalled as raw messages)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_graph import Memory
from memory_graph.errors import StoreError
from memory_graph.extract.rules import withheld
from memory_graph.store.ledger import SCHEMA, SCHEMA_VERSION


def test_withheld_reads_every_sentence() -> None:
    assert withheld("Pretend my name is Zoe for this game.")
    assert withheld("Ok. Please forget my locker code 2264.")
    assert withheld("Let's say the budget is unlimited.")
    assert not withheld("I live in Leeds. Don't forget my appointment.")
    assert not withheld("My name is Priya.")


def test_a_store_of_the_base_schema_is_upgraded_in_place(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    conn = sqlite3.connect(tmp_path / "s" / "ledger.sqlite3")
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO observations(id, namespace, text, speaker, source, time, created_at, indexed, processed) "
                 "VALUES ('obsa', 'u', 'I live in Leeds.', 'user', 'user', '2024-01-01T00:00:00Z', "
                 "'2024-01-01T00:00:00Z', 0, 1)")
    conn.commit()
    conn.close()
    with Memory(tmp_path / "s", user_id="u") as mem:
        assert mem.store.ledger.query("PRAGMA user_version")[0][0] == SCHEMA_VERSION
        assert mem.store.ledger.query("SELECT withheld FROM observations")[0]["withheld"] == 0
        assert mem.inspect()["observations"] == 1


def test_a_newer_store_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store.ledger.query(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    with pytest.raises(StoreError, match="newer than this"):
        Memory(tmp_path / "s", user_id="u")


def test_role_play_and_forget_requests_are_not_recalled_as_raw_messages(mem: Memory) -> None:
    mem.observe("Pretend my name is Zoe for this game, okay.", time="2024-01-01T00:00:00")
    mem.observe("Please forget my locker code 2264.", time="2024-01-02T00:00:00")
    mem.observe("Hmm the blue drawer squeaks a lot lately", time="2024-01-03T00:00:00")  # forms no memory: raw
    texts = " ".join(it.text for it in mem.recall("What is my name? What is my locker code? The drawer?").items)
    assert "Zoe" not in texts and "2264" not in texts
    assert "blue drawer" in texts
