"""Opening never fails on one bad row, a crash between storing and linking is finished on open, the embedding
cache never loses a vector a call needs, and a store path that is not a store is reported, not created."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_graph import Memory
from memory_graph import store as store_mod
from memory_graph.errors import StoreError, StoreNotFoundError
from memory_graph.store import Store


class _CountingEmbedder:
    """A deterministic fake embedder (no model load) that counts the texts it embeds."""

    dim = 4

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.asarray([[len(t), t.count("a"), t.count("e"), 1.0] for t in texts], dtype=np.float32)


def test_embed_cache_never_evicts_what_the_same_call_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_mod, "EMBED_CACHE_SIZE", 3)
    store = Store.open(tmp_path / "s")
    try:
        fake = _CountingEmbedder()
        store._embedder = fake  # type: ignore[assignment]
        store.embed(["old text"])  # cached long ago
        texts = ["old text"] + [f"new text {i}" for i in range(10)] + ["old text"]
        out = store.embed(texts)  # before the fix: KeyError 'old text' (evicted by this call's own texts)
        assert out.shape == (12, 4)
        assert np.array_equal(out[0], out[-1])
        assert len(store._vectors) <= 3
        assert fake.calls[-1] == [f"new text {i}" for i in range(10)]  # the cached text was not embedded again
    finally:
        store.release()


def test_a_row_that_cannot_be_indexed_is_skipped_and_reported_not_raised(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        formed = mem.observe("I live in Berlin.", time="2024-01-01T00:00:00")
        with mem.store.ledger.tx() as cur:  # a date no version can read, left un-indexed
            cur.execute("UPDATE memories SET valid_from='not a date', indexed=0 WHERE id=?", (formed[0]["id"],))
    with Memory(tmp_path / "s", user_id="other") as mem:  # before the fix: every open raised here
        assert mem.store.last_reconcile["skipped"] == 1
        mem.observe("I live in Oslo.", time="2024-01-01T00:00:00")
        assert "Oslo" in mem.recall("Where does the user live?").items[0].text


def test_an_interrupted_turn_is_finished_when_the_store_opens(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.observe("I work at Acme Robotics.", ref="m7", time="2024-01-01T00:00:00")
        with mem.store.ledger.tx() as cur:  # as if the process died after storing the message, before linking
            cur.execute("DELETE FROM provenance")
            cur.execute("DELETE FROM memories")
            cur.execute("UPDATE observations SET processed=0")
    with Memory(tmp_path / "s", user_id="u") as mem:  # the message never comes again: opening finishes it
        recent = mem.inspect()["recent"]
        assert len(recent) == 1 and mem.inspect(recent[0]["id"])["value"] == "Acme Robotics"
        assert mem.store.ledger.query("SELECT processed FROM observations")[0]["processed"] == 1
        assert mem.resume() == []


def test_a_missing_store_is_reported_not_created(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFoundError, match="does not exist"):
        Memory(tmp_path / "typo", user_id="u", create=False)
    assert not (tmp_path / "typo").exists()


def test_a_foreign_ledger_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "ledger.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a memory-graph ledger"):
        Memory(tmp_path / "s", user_id="u")


def test_linking_an_already_linked_observation_again_forms_nothing(tmp_path: Path) -> None:
    """Two runs that picked up the same interrupted observation (two processes) cannot both form its memories;
    the second reports the memory the first formed (breaker: one of two concurrent ``observe`` calls returned [])."""
    from memory_graph import linking
    from memory_graph.extract import rules
    from memory_graph.records import Observation

    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.observe("I work at Acme Robotics.", ref="m1", time="2024-01-01T00:00:00")
        row = mem.store.ledger.query("SELECT * FROM observations")[0]
        obs = Observation(**{k: row[k] for k in ("id", "text", "speaker", "source", "time", "session_id", "ref")})
        records = rules.extract(obs)
        assert records
        first = mem.inspect()["recent"]
        again = linking.link_records(mem.store, mem.context, records, processed=[obs.id])
        assert [(a["action"], a["id"], a["reason"]) for a in again] == [("duplicate", first[0]["id"], "formed by a concurrent run")]
        assert mem.inspect()["recent"] == first  # nothing written again


def test_hot_lookups_use_the_primary_key_after_open(tmp_path: Path) -> None:
    """The planner has statistics after open, and id lookups use the primary key (EXPLAIN QUERY PLAN)."""
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.observe_many([{"text": f"Note {i}: the build number is {i}.", "time": "2024-01-01T00:00:00"} for i in range(30)])
    with Memory(tmp_path / "s", user_id="u") as mem:
        led = mem.store.ledger
        assert led.query("SELECT COUNT(*) AS n FROM sqlite_master WHERE name='sqlite_stat1'")[0]["n"] == 1
        plan = " ".join(str(r["detail"]) for r in led.query(
            "EXPLAIN QUERY PLAN SELECT * FROM memories WHERE namespace=? AND id IN (?,?)", ("u", "a", "b")))
        assert "sqlite_autoindex_memories_1" in plan or "PRIMARY KEY" in plan, plan


def test_an_unreadable_vector_index_is_a_store_error_and_reindex_rebuilds_it(tmp_path: Path) -> None:
    """Breaker: a garbage ``chroma/chroma.sqlite3`` made every command, ``reindex`` included, fail with
    Chroma's ``InternalError``. The ledger still opens; the index error names the fix; ``reindex`` drops the
    folder and rebuilds it in the same process (Chroma's cached client of the path is forgotten)."""
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.observe("I live in Berlin.", time="2024-01-01T00:00:00")
    (tmp_path / "s" / "chroma" / "chroma.sqlite3").write_bytes(b"garbage" * 500)
    with Memory(tmp_path / "s", user_id="u") as mem:
        assert mem.inspect()["recent"][0]["text"] == "The user lives in Berlin."  # the ledger is fine
        with pytest.raises(StoreError, match="memory-graph reindex"):
            mem.recall("Where do I live?")
        counts = mem.store.reindex()
        assert counts["memories"] == 1
        assert "Berlin" in mem.recall("Where do I live?").context


def test_a_missing_index_is_rebuilt_on_open_and_a_failed_write_does_not_block_reindex(tmp_path: Path) -> None:
    """Third breaker run: with ``chroma/`` deleted, recall silently found nothing; after one failed write on a
    garbage index the unlinked observation made every later open (and ``reindex``) fail."""
    import shutil

    store = tmp_path / "s"
    with Memory(store, user_id="u") as mem:
        mem.observe("I live in Berlin.", time="2024-01-01T00:00:00")
    shutil.rmtree(store / "chroma")
    with Memory(store, user_id="u") as mem:
        assert "Berlin" in mem.recall("Where do I live?").context
    (store / "chroma" / "chroma.sqlite3").write_bytes(b"garbage" * 500)
    with Memory(store, user_id="u") as mem, pytest.raises(StoreError):
        mem.observe("I moved to Porto.", time="2024-02-01T00:00:00")  # stored, not linked
    with Memory(store, user_id="u") as mem:  # opens although resume cannot link it yet
        mem.store.reindex()
        mem.resume()
        assert "Porto" in mem.recall("Where do I live?").context
