"""Searches served from one unfiltered over-fetch (issue 13): the Python filter agrees with Chroma's, and a
store search gives what the filtered Chroma query gives, falling back to it when the over-fetch is short."""

from __future__ import annotations

import uuid
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from fakes import StemBagEmbedder
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_graph import Memory
from memory_graph.store import IndexQuery, VectorIndex
from memory_graph.store.index import filter_fields, matches

STATUSES = ["current", "contested", "superseded", "retracted"]


def test_matches_follows_chroma_operators() -> None:
    meta = {"namespace": "u", "status": "superseded", "valid_from": 10, "valid_to": 20}
    assert matches(meta, {"namespace": "u"})
    assert not matches(meta, {"namespace": "v"})
    assert matches(meta, {"$and": [{"namespace": "u"}, {"status": {"$in": ["superseded"]}}]})
    assert not matches(meta, {"status": {"$in": ["current", "contested"]}})
    assert matches(meta, {"valid_from": {"$lte": 10}, "valid_to": {"$gt": 10}})
    assert not matches(meta, {"valid_to": {"$gt": 20}})
    assert matches(meta, {"$or": [{"status": "current"}, {"valid_to": {"$gte": 20}}]})
    assert not matches(meta, {"time": {"$lte": 5}})  # a missing field fails a comparison
    assert matches(meta, {"time": {"$ne": 5}})
    with pytest.raises(ValueError):
        matches(meta, {"status": {"$like": "cur%"}})
    assert filter_fields({"$and": [{"namespace": "u"}, {"$or": [{"a": 1}, {"b": {"$gt": 2}}]}]}) == {"namespace", "a", "b"}


_meta = st.fixed_dictionaries({
    "namespace": st.sampled_from(["a", "b"]),
    "status": st.sampled_from(STATUSES),
    "valid_from": st.integers(0, 5),
    "valid_to": st.integers(0, 5),
})
_leaf = st.one_of(
    st.builds(lambda s: {"status": {"$in": s}}, st.lists(st.sampled_from(STATUSES), min_size=1, max_size=3)),
    st.builds(lambda op, t: {"valid_from": {op: t}}, st.sampled_from(["$lte", "$lt", "$gt", "$gte"]), st.integers(0, 5)),
    st.builds(lambda op, t: {"valid_to": {op: t}}, st.sampled_from(["$lte", "$gt", "$ne", "$eq"]), st.integers(0, 5)),
    st.builds(lambda n: {"namespace": n}, st.sampled_from(["a", "b"])),
)
_filter = st.one_of(_leaf, st.builds(lambda a, b, op: {op: [a, b]}, _leaf, _leaf, st.sampled_from(["$and", "$or"])))


@settings(max_examples=40, deadline=None)
@given(metas=st.lists(_meta, min_size=1, max_size=12), where=_filter)
def test_matches_agrees_with_chroma(metas: list[dict], where: dict) -> None:
    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection(f"t{uuid.uuid4().hex}", embedding_function=None)
    ids = [f"m{i}" for i in range(len(metas))]
    col.add(ids=ids, embeddings=np.eye(len(metas), 4, dtype=np.float32) + 0.1, metadatas=metas)
    chroma = set(col.get(where=where, include=[])["ids"])
    assert {i for i, m in zip(ids, metas, strict=True) if matches(m, where)} == chroma
    client.delete_collection(col.name)


def test_store_search_equals_the_filtered_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mostly replaced values near the query (a long-lived store): the over-fetch is short of current ones, the
    search falls back, and the answer equals Chroma's filtered query either way; another namespace's memories
    never come back."""
    import memory_graph.store as store_module

    monkeypatch.setattr(store_module, "OVERFETCH", 8)
    monkeypatch.setattr(store_module, "FIRST_FETCH", 4)
    mem = Memory(tmp_path / "s", user_id="u")
    other = Memory(tmp_path / "s", user_id="v")
    try:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        turns = [{"role": "user", "text": f"We upgraded Redis to version 7.{i} in production.",
                  "time": f"2026-01-{i + 1:02d}T10:00:00Z"} for i in range(12)]
        turns += [{"role": "user", "text": t, "time": "2026-02-01T10:00:00Z"}
                  for t in ("My sister Ana works at Acme.", "I live in Lisbon now.", "Our standup is on Monday.")]
        mem.observe_many(turns)
        other.observe_many([{"role": "user", "text": "We upgraded Redis to version 9.9 in production."}])
        store = mem.store
        vector = store.embed(["What version of Redis runs in production?"])[0]
        live = {"status": {"$in": ["current", "contested"]}}
        replaced = {"status": {"$in": ["superseded"]}}
        with store.session():
            for where in (live, replaced, None):
                want = VectorIndex.search(store.index.memories, vector, "u", 5, where)
                got = store.search_memories(vector, "u", 5, where)
                # equal similarities in order (ties may come in either order), each hit of "u" and passing the filter
                assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
                rows = store.ledger.memories("u", [i for i, _ in got])
                assert len(rows) == len(got)
                assert all(where is None or rows[i]["status"] in where["status"]["$in"] for i, _ in got)
        v_ids = set(other.store.ledger.memories("v", [i for i, _ in store.search_memories(vector, "v", 50)]))
        assert v_ids and not v_ids & {i for i, _ in store.search_memories(vector, "u", 50)}
        # enough=0: only what the over-fetch holds, never a second query
        calls = []
        monkeypatch.setattr(VectorIndex, "search", staticmethod(lambda *a, **k: calls.append(a) or []))
        store.search_memories_many(vector, "u", [IndexQuery(50, replaced, enough=0)])
        assert calls == []
    finally:
        other.close()
        mem.close()


@pytest.mark.parametrize("few", [256, 0])  # the ledger resolves the filter to few memories / too many: Chroma's
def test_a_short_search_is_exact_by_the_ledger_or_by_chroma(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             few: int) -> None:
    """A request the over-fetch leaves short (a scope holding one live value, far from the query among many
    others) is answered exactly: by scoring the few memories the ledger finds for its filter, without a filtered
    Chroma search, or, when the filter matches more than FEW_MATCHES, by that search; the same hits either way."""
    import memory_graph.store as store_module

    monkeypatch.setattr(store_module, "OVERFETCH", 4)
    monkeypatch.setattr(store_module, "FIRST_FETCH", 2)
    monkeypatch.setattr(store_module, "FEW_MATCHES", few)
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe_many([{"role": "user", "text": f"We upgraded Redis to version 7.{i} in production.",
                           "time": f"2026-01-{i + 1:02d}T10:00:00Z"} for i in range(8)]
                         + [{"role": "user", "text": f"My friend {n} lives in Lisbon.", "time": "2026-02-01T10:00:00Z"}
                            for n in ("Ana", "Bram", "Chen", "Dita", "Emeka", "Farah")]
                         + [{"role": "user", "text": "In staging, we run Redis 6.", "time": "2026-02-02T10:00:00Z"}])
        store = mem.store
        scopes = {r["scope"] for r in store.ledger.query("SELECT scope FROM memories WHERE namespace='u'")}
        assert "staging" in scopes
        vector = store.embed(["Who lives in Lisbon?"])[0]
        where = {"status": {"$in": ["current", "contested"]}, "scope": "staging"}
        with store.session():
            want = VectorIndex.search(store.index.memories, vector, "u", 1, where)
        calls: list[object] = []
        real = VectorIndex.search
        monkeypatch.setattr(VectorIndex, "search", staticmethod(lambda *a, **k: calls.append(a) or real(*a, **k)))
        got = store.search_memories(vector, "u", 1, where)  # fetches 2, then 4 of the ~8 held: short of it
        assert [i for i, _ in got] == [i for i, _ in want] != []
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
        assert (calls == []) == (few > 0)  # a filtered Chroma search only when the ledger found too many
        assert store.ledger.memory_ids_matching("u", {"valid_from": {"$lte": 5}}, 10) is None  # not an index range
        assert store.ledger.memory_ids_matching("u", {"scope": {"$ne": "x"}}, 10) is None


def _part_ids(store: object) -> tuple[set[str], set[str]]:
    with store.session():  # type: ignore[attr-defined]
        held, replaced = store.index.memories.parts  # type: ignore[attr-defined]
        return set(held.get(include=[])["ids"]), set(replaced.get(include=[])["ids"])


def test_replaced_memories_move_to_their_own_collection_with_their_vectors(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "s", user_id="u")
    try:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        old = mem.observe("I live in Lisbon.", time="2026-01-01T10:00:00Z")[0]["id"]
        with mem.store.session():
            before = VectorIndex.vectors(mem.store.index.memories, [old])[old]
        new = mem.observe("I moved to Porto.", time="2026-03-01T10:00:00Z")[0]["id"]
        held, replaced = _part_ids(mem.store)
        assert new in held and old in replaced and old not in held
        mem.store.sync_metadata([new, old])  # nothing moves: a metadata update in place
        assert _part_ids(mem.store) == (held, replaced)
        with mem.store.session():
            assert np.allclose(VectorIndex.vectors(mem.store.index.memories, [old])[old], before)
        assert mem.store.index_counts()["memories"] == len(held) + len(replaced)
        # erasing the replacement makes the old value current again: it moves back
        mem.forget(new, hard=True)
        held, replaced = _part_ids(mem.store)
        assert old in held and new not in held | replaced
        assert "Lisbon" in mem.recall("Where do I live?").context
    finally:
        mem.close()


def test_an_index_made_before_the_split_is_split_on_open(tmp_path: Path) -> None:
    location = tmp_path / "s"
    mem = Memory(location, user_id="u")
    mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
    mem.observe("I live in Lisbon.", time="2026-01-01T10:00:00Z")
    mem.observe("I moved to Porto.", time="2026-03-01T10:00:00Z")
    held_ids, replaced_ids = _part_ids(mem.store)
    with mem.store.session():  # the old layout: every memory in one collection, no layout mark
        held, replaced = mem.store.index.memories.parts
        got = replaced.get(include=["embeddings", "metadatas"])
        held.add(ids=got["ids"], embeddings=np.asarray(got["embeddings"]), metadatas=got["metadatas"])
        replaced.delete(ids=got["ids"])
        held.modify(metadata={"layout": 1})
    mem.close()
    from memory_graph.store import Store

    store = Store.open(str(location))
    try:
        assert _part_ids(store) == (held_ids, replaced_ids)
        with store.session():
            assert store.index.memories.held.metadata["layout"] == 2
    finally:
        store.release()


def test_a_memory_lost_from_the_index_is_indexed_again_on_its_next_update(tmp_path: Path) -> None:
    """Breaker run: a failed index write left a memory in neither collection, and a later status change marked it
    indexed, so it could never be recalled until a reindex."""
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        pin = mem.observe("My locker code is 4921.", time="2025-01-01T10:00:00Z")[0]["id"]
        with mem.store.session():
            mem.store.index.memories.delete([pin])  # the write that was lost
        mem.forget(pin)  # a status change: sync_metadata finds it in neither part
        held, replaced = _part_ids(mem.store)
        assert pin in replaced
        assert mem.store.ledger.query("SELECT indexed FROM memories WHERE id=?", (pin,))[0]["indexed"] == 1
