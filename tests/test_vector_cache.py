"""Stored vectors a ``VectorIndex`` read or wrote are answered without a Chroma read (issue 22), and never
outlive what the index holds: an upsert replaces the kept vector, a delete forgets it, a compaction and a
closed index forget everything; a server store's index (``remember_missing=False``) keeps none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_graph.store import index as index_module
from memory_graph.store.index import LIVE, MEMORY, OBSERVATIONS, REPLACED, VectorIndex


def _unit(seed: int, dim: int = 8) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


class _CountingGets:
    """Counts the Chroma ``get`` calls of the collections an index hands out."""

    def __init__(self, index: VectorIndex, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = index.collection

        def counted(namespace: str, part: str, create: bool = False) -> Any:
            found = original(namespace, part, create)
            if found is None or getattr(found, "_counted", False):
                return found
            get = found.get

            def spy(*args: Any, **kwargs: Any) -> Any:
                self.calls += 1
                return get(*args, **kwargs)

            found.get = spy
            found._counted = True
            return found

        monkeypatch.setattr(index, "collection", counted)


@pytest.fixture()
def index(tmp_path: Path) -> Any:
    vector_index = VectorIndex(tmp_path / "chroma")
    yield vector_index
    vector_index.close()


def test_a_vector_read_or_written_is_not_read_again(index: VectorIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    index.upsert("u", LIVE, ["a", "b"], np.stack([_unit(1), _unit(2)]), [MEMORY, MEMORY])
    index.upsert("u", REPLACED, ["c"], np.stack([_unit(3)]), [MEMORY])
    index._stored.clear()  # as a fresh process: nothing kept
    gets = _CountingGets(index, monkeypatch)
    first = index.vectors("u", ["a", "c", "missing"], (LIVE, REPLACED))
    assert set(first) == {"a", "c"} and gets.calls == 2  # one read per part
    again = index.vectors("u", ["c", "a"], (LIVE, REPLACED))
    assert gets.calls == 2, "kept vectors are not read again"
    assert list(again) == ["c", "a"] and np.allclose(again["a"], _unit(1), atol=1e-6)
    index.vectors("u", ["b", "a"], (LIVE, REPLACED))
    assert gets.calls == 4, "only the vector not kept is read (from each part that may hold it)"
    index.upsert("u", LIVE, ["d"], np.stack([_unit(4)]), [MEMORY])
    assert np.allclose(index.vectors("u", ["d"], (LIVE,))["d"], _unit(4), atol=1e-6) and gets.calls == 4
    with pytest.raises(ValueError):
        again["a"][0] = 0.0  # a kept vector is read-only: no caller can change what the next one gets


def test_a_kept_vector_follows_upserts_deletes_and_compactions(index: VectorIndex) -> None:
    index.upsert("u", LIVE, ["a"], np.stack([_unit(1)]), [MEMORY])
    index.upsert("u", LIVE, ["a"], np.stack([_unit(5)]), [MEMORY])
    assert np.allclose(index.vectors("u", ["a"])["a"], _unit(5), atol=1e-6)
    index.delete("u", ["a"])
    assert index.vectors("u", ["a"]) == {}
    index.upsert("u", OBSERVATIONS, ["o"], np.stack([_unit(6)]), [MEMORY])
    assert index.vectors("v", ["o"]) == {}, "a vector is kept per namespace"
    index.restore(index.name("u", OBSERVATIONS), ["o"], np.stack([_unit(7)]), [{"type": MEMORY}])
    assert np.allclose(index.vectors("u", ["o"])["o"], _unit(7), atol=1e-6), "a compaction forgets what was kept"
    index.delete(None, ["o"])
    assert index.vectors("u", ["o"]) == {}


def test_a_failed_write_leaves_no_vector_kept(index: VectorIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    index.upsert("u", LIVE, ["a"], np.stack([_unit(1)]), [MEMORY])

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(index_module, "write", refuse)
    with pytest.raises(RuntimeError):
        index.upsert("u", LIVE, ["a"], np.stack([_unit(9)]), [MEMORY])
    monkeypatch.undo()
    assert np.allclose(index.vectors("u", ["a"])["a"], _unit(1), atol=1e-6), "the index still holds the old vector"


def test_the_cache_is_bounded_and_off_where_another_process_may_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "VECTOR_CACHE", 3)
    bounded = VectorIndex(tmp_path / "a")
    ids = [f"r{i}" for i in range(5)]
    bounded.upsert("u", LIVE, ids, np.stack([_unit(i) for i in range(5)]), [MEMORY] * 5)
    assert list(bounded._stored) == [("u", "r2"), ("u", "r3"), ("u", "r4")]
    assert set(bounded.vectors("u", ids)) == set(ids)
    bounded.close()
    assert not bounded._stored
    shared = VectorIndex(tmp_path / "b", remember_missing=False)
    shared.upsert("u", LIVE, ids, np.stack([_unit(i) for i in range(5)]), [MEMORY] * 5)
    assert set(shared.vectors("u", ids)) == set(ids) and not shared._stored
    shared.close()


def test_a_hard_delete_leaves_no_kept_vector_of_what_it_erased(stem_memory: Any) -> None:
    mem = stem_memory("u")
    mem.observe("My locker code is 4471.", time="2026-01-02T09:00:00Z")
    mem.observe("I live in Lisbon.", time="2026-01-03T09:00:00Z")
    recall = mem.recall("What is my locker code?")
    locker = next(it.id for it in recall.items if "4471" in it.text)
    with mem.store.session():
        kept_before = {i for _, i in mem.store.index._stored}
        keeps = mem.store.index.remember_missing  # the embedded store's index; a server store's keeps none
    assert (locker in kept_before) if keeps else not kept_before, "the recall kept the vectors it read or wrote"
    erased = mem.forget(locker, hard=True)
    gone = {*erased["forgotten"], *erased["observations"]}
    with mem.store.session():
        kept = {i for _, i in mem.store.index._stored}
        assert not kept & gone
        assert mem.store.index.vectors("u", sorted(gone)) == {}
    assert all("4471" not in it.text for it in mem.recall("What is my locker code?").items)


def test_drop_caches_forgets_embedded_texts_and_kept_vectors(stem_memory: Any) -> None:
    mem = stem_memory("u")
    mem.observe("I live in Lisbon.", time="2026-01-03T09:00:00Z")
    first = mem.recall("Where do I live?")
    mem.store.drop_caches()
    assert not mem.store._vectors
    with mem.store.session():
        assert not mem.store.index._stored
    assert [it.id for it in mem.recall("Where do I live?").items] == [it.id for it in first.items]
