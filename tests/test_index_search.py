"""Searches served from one unfiltered over-fetch (issue 13) of a namespace's own collections (issue 22): the
Python filter agrees with Chroma's, and a store search gives what a brute-force search of the records its filter
matches gives, falling back to one when the over-fetch is short; one index write per turn; a store of the
previous layout is moved on open."""

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
from memory_graph.store.index import LIVE, OBSERVATIONS, PARTS, REPLACED, filter_fields, matches

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


def _exact(store: object, ns: str, vector: np.ndarray, n: int, where: dict | None) -> list[tuple[str, float]]:
    """The answer by brute force: every memory of ``ns`` whose ledger row matches ``where``, by its stored vector."""
    from memory_graph.store import memory_metadata
    from memory_graph.store.index import cosine_ranked

    rows = store.ledger.query("SELECT * FROM memories WHERE namespace=?", (ns,))  # type: ignore[attr-defined]
    ids = [r["id"] for r in rows if matches(memory_metadata(r), where or {})]
    with store.session():  # type: ignore[attr-defined]
        return cosine_ranked(vector, store.index.vectors(ns, ids))[:n]  # type: ignore[attr-defined]


def test_store_search_equals_the_exact_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mostly replaced values near the query (a long-lived store): the over-fetch is short of current ones, the
    search widens, and the answer equals a brute-force search of what the filter matches either way; another
    namespace's memories never come back."""
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
        for filed in (False, True):  # the replaced values still in the inbox of the live part, then filed
            if filed:
                with store.session():
                    store._file_inbox("u", force=True)
            for where in (live, replaced, None):
                want = _exact(store, "u", vector, 5, where)
                got = store.search_memories(vector, "u", 5, where)
                # equal similarities in order (ties may come in either order), each hit of "u" and passing the filter
                assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
                rows = store.ledger.memories("u", [i for i, _ in got])
                assert len(rows) == len(got)
                assert all(where is None or rows[i]["status"] in where["status"]["$in"] for i, _ in got)
        v_ids = set(other.store.ledger.memories("v", [i for i, _ in store.search_memories(vector, "v", 50)]))
        assert v_ids and not v_ids & {i for i, _ in store.search_memories(vector, "u", 50)}
        # enough=0: only what the over-fetch holds, never an exact search
        calls = []
        monkeypatch.setattr(store_module.Store, "_scored", lambda *a, **k: calls.append(a) or [])
        store.search_memories_many(vector, "u", [IndexQuery(50, replaced, enough=0)])
        assert calls == []
    finally:
        other.close()
        mem.close()


@pytest.mark.parametrize("few", [256, 0])  # the ledger resolves the filter to few memories / too many
def test_a_short_search_is_exact_by_the_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, few: int) -> None:
    """A request the over-fetch leaves short (a scope holding one live value, far from the query among many
    others) is answered exactly: by scoring the few memories the ledger finds for its filter before a wider fetch,
    or, when the filter matches more than FEW_MATCHES, after it, from every memory the filter matches."""
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
        want = _exact(store, "u", vector, 1, where)
        nearest: list[int] = []
        real = VectorIndex.nearest
        monkeypatch.setattr(VectorIndex, "nearest", lambda self, *a: nearest.append(a[-1]) or real(self, *a))
        got = store.search_memories(vector, "u", 1, where)  # fetches 2 of the ~8 held: short of it
        assert [i for i, _ in got] == [i for i, _ in want] != []
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
        assert (4 in nearest) == (few == 0)  # the wider fetch only when the ledger found too many
        assert store.ledger.memory_ids_matching("u", {"valid_from": {"$lte": 5}}, 10) is None  # not an index range
        assert store.ledger.memory_ids_matching("u", {"scope": {"$ne": "x"}}, 10) is None


def _part_ids(store: object, ns: str = "u") -> dict[str, set[str]]:
    with store.session():  # type: ignore[attr-defined]
        index = store.index  # type: ignore[attr-defined]
        out = {}
        for part in PARTS:
            collection = index.collection(ns, part)
            out[part] = set(collection.get(include=[])["ids"]) if collection is not None else set()
        return out


def test_a_turn_is_one_index_write_and_replaced_memories_are_filed_in_batches(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: one Chroma write per turn (its observation and memories, in the namespace's live part); a status
    change writes nothing; the inbox is filed FILE_BATCH records at a time, each record with its stored vector."""
    import memory_graph.store as store_module

    monkeypatch.setattr(store_module, "FILE_BATCH", 4)
    mem = Memory(tmp_path / "s", user_id="u")
    try:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        old = mem.observe("I live in Lisbon.", time="2026-01-01T10:00:00Z")[0]["id"]
        with mem.store.session():
            before = mem.store.index.vectors("u", [old])[old]
        writes: list[str] = []
        for name in ("upsert", "delete", "update", "add"):
            real = getattr(type(_collection(mem.store)), name)
            monkeypatch.setattr(type(_collection(mem.store)), name,
                                lambda self, *a, _real=real, _name=name, **k: writes.append(_name) or _real(self, *a, **k))
        new = mem.observe("I moved to Porto.", time="2026-03-01T10:00:00Z")[0]["id"]
        assert writes == ["upsert"]  # the turn's observation and memory; the supersession wrote nothing
        parts = _part_ids(mem.store)
        assert {old, new} <= parts[LIVE] and not parts[REPLACED]
        assert mem.store.ledger.query("SELECT status FROM memories WHERE id=?", (old,))[0]["status"] == "superseded"
        assert "Porto" in mem.recall("Where do I live?").context
        mem.observe("Our standup is on Monday.", time="2026-03-02T10:00:00Z")  # the inbox reaches 4: filed
        parts = _part_ids(mem.store)
        assert new in parts[LIVE] and old in parts[REPLACED] and old not in parts[LIVE]
        assert len(parts[OBSERVATIONS]) == 3 and not parts[OBSERVATIONS] & parts[LIVE]
        with mem.store.session():
            assert np.allclose(mem.store.index.vectors("u", [old])[old], before)
        assert mem.store.index_counts() == {"memories": 3, "observations": 3}
        # erasing the replacement makes the old value current again: it moves back
        mem.forget(new, hard=True)
        parts = _part_ids(mem.store)
        assert old in parts[LIVE] and new not in parts[LIVE] | parts[REPLACED]
        assert "Lisbon" in mem.recall("Where do I live?").context
    finally:
        mem.close()


def _collection(store: object) -> object:
    with store.session():  # type: ignore[attr-defined]
        return store.index.collection("u", LIVE)  # type: ignore[attr-defined]


def test_namespaces_have_collections_of_their_own(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as u, Memory(tmp_path / "s", user_id="a/b:ü é" * 30) as v:
        u.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        u.observe("I live in Lisbon.")
        v.observe("I live in Porto.")
        with u.store.session():
            names = u.store.index.names()
        assert len(names) == 2 and all(len(n) < 63 for n in names)
        assert "Porto" not in u.recall("Where do I live?").context
        assert "Lisbon" not in v.recall("Where do I live?").context


def test_a_store_made_before_collections_per_namespace_is_moved_on_open(tmp_path: Path) -> None:
    """A store made by the previous layout (collections ``memories``, ``replaced_memories``, ``observations``
    shared by every namespace; ledger schema 11) opens: the ledger is migrated and the vectors are moved into
    a collection per namespace, with their stored vectors, without embedding anything again."""
    from memory_graph.store import Store, memory_metadata

    location = tmp_path / "s"
    with Memory(location, user_id="u") as mem, Memory(location, user_id="v") as other:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe("I live in Lisbon.", time="2026-01-01T10:00:00Z")
        mem.observe("I moved to Porto.", time="2026-03-01T10:00:00Z")
        other.observe("My sister Ana works at Acme.", time="2026-03-01T10:00:00Z")
        store = mem.store
        with store.session():
            store._file_inbox("u", force=True)
            store._file_inbox("v", force=True)
        counts = store.index_counts()
        want = {ns: _part_ids(store, ns) for ns in ("u", "v")}
        with store.session():  # write the old layout from the new one, as the previous version kept it
            index = store.index
            rows = {r["id"]: r for r in store.ledger.query("SELECT * FROM memories")}
            obs = {r["id"]: r for r in store.ledger.query("SELECT * FROM observations")}
            held = index.client.get_or_create_collection("memories", metadata={"layout": 2}, embedding_function=None,
                                                         configuration={"hnsw": {"space": "cosine"}})
            replaced = index.client.get_or_create_collection("replaced_memories", embedding_function=None,
                                                             configuration={"hnsw": {"space": "cosine"}})
            observations = index.client.get_or_create_collection("observations", embedding_function=None,
                                                                 configuration={"hnsw": {"space": "cosine"}})
            for name, (ids, vectors, _) in index.dump().items():
                for i, vector in zip(ids, vectors, strict=True):
                    if i in obs:
                        observations.upsert(ids=[i], embeddings=[vector],
                                            metadatas=[{"namespace": obs[i]["namespace"], "time": 0}])
                    else:
                        target = held if rows[i]["status"] in ("current", "contested") else replaced
                        target.upsert(ids=[i], embeddings=[vector], metadatas=[memory_metadata(rows[i])])
                index.client.delete_collection(name)
        with store.ledger.tx() as cur:  # and the ledger of schema 11
            cur.execute("DROP TABLE index_inbox")
            cur.execute("DROP TABLE index_drops")
            cur.execute("PRAGMA user_version=11")
    store = Store.open(str(location))
    try:
        assert store._embedder is None  # nothing was embedded again to open it
        store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        assert {ns: _part_ids(store, ns) for ns in ("u", "v")} == want
        assert store.index_counts() == counts
        with store.session():
            assert store.index.legacy_names() == []
        assert store.ledger.query("SELECT COUNT(*) AS n FROM index_inbox")[0]["n"] == 0
        with Memory(store=store, user_id="u") as mem:
            assert "Porto" in mem.recall("Where do I live?").context
            gone = mem.forget(mem.recall("Where do I live?").items[0].id, hard=True)
            assert gone["hard"]
    finally:
        store.release()


def test_a_memory_lost_from_the_index_is_indexed_again_on_its_next_update(tmp_path: Path) -> None:
    """Breaker run: a failed index write left a memory in no collection, and a later status change marked it
    indexed, so it could never be recalled until a reindex."""
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        pin = mem.observe("My locker code is 4921.", time="2025-01-01T10:00:00Z")[0]["id"]
        with mem.store.session():
            mem.store.index.delete("u", [pin])  # the write that was lost
        mem.forget(pin)  # a status change: sync_metadata finds it in no part
        assert pin in _part_ids(mem.store)[REPLACED]
        assert mem.store.ledger.query("SELECT indexed FROM memories WHERE id=?", (pin,))[0]["indexed"] == 1


def test_an_observation_never_takes_a_memorys_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found on the full LoCoMo run of issue 22: ids were unique per table only, and a memory and a message now share
    a namespace's ``live`` index part, so an observation drawn with a memory's id failed the turn's index write
    (Chroma: duplicate ids) or would overwrite the memory's vector. The draw is redrawn when either table has it."""
    from memory_graph.store import tx as tx_mod

    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        taken = mem.observe("I live in Lisbon.", time="2024-01-01T00:00:00")[0]["id"]
        original = tx_mod._syllables
        draws = iter([taken])
        monkeypatch.setattr(tx_mod, "_syllables", lambda n: next(draws, None) or original(n))
        formed = mem.observe("I moved to Porto.", time="2024-02-01T00:00:00")
        ids = [r["id"] for r in mem.store.ledger.query("SELECT id FROM observations UNION ALL SELECT id FROM memories")]
        assert len(ids) == len(set(ids)) and formed and formed[0]["id"] != taken
        assert next(draws, "spent") == "spent"  # the colliding id was drawn, and redrawn
