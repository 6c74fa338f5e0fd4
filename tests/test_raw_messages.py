"""Raw messages beside their memories (issue 11: "raw turns stay recallable beside the facts formed from them,
deduplicated by provenance"; ``Context.raw_messages``, off by default): a message is shown raw only while every
memory formed from it is held, and a message never shares the budget with its own memories. Fake embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import StemBagEmbedder

from memory_graph import Memory
from memory_graph.records import RecallItem
from memory_graph.retrieval import _repeats


@pytest.fixture()
def fake_mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "s", user_id="u", raw_messages=True) as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        yield mem


def _raw(mem: Memory, query: str, **kwargs: object) -> list[str]:
    return [it.text for it in mem.recall(query, budget_tokens=600, **kwargs).items if it.kind == "observation"]


def _shown(mem: Memory, query: str, **kwargs: object) -> list[RecallItem]:
    return mem.recall(query, budget_tokens=600, **kwargs).items


def test_a_replaced_fact_is_never_shown_raw_but_its_past_is(fake_mem: Memory) -> None:
    fake_mem.observe("I live in Lisbon near the river and I cycle to work every day.", time="2024-01-01T00:00:00Z")
    fake_mem.observe("I moved to Porto.", time="2024-06-01T00:00:00Z")
    now = _shown(fake_mem, "Where do I live? Lisbon river cycle")
    assert not any("Lisbon" in it.text and it.status == "current" for it in now)
    then = _raw(fake_mem, "Where do I live? Lisbon river cycle", as_of="2024-03-01T00:00:00Z")
    then_items = _shown(fake_mem, "Where do I live? Lisbon river cycle", as_of="2024-03-01T00:00:00Z")
    assert any("Lisbon" in t for t in then) or any("Lisbon" in it.text for it in then_items)


def test_a_forgotten_or_contested_fact_is_never_shown_raw(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u", trust="source", raw_messages=True) as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe("My locker code is 4417 and the gym opens at six.", time="2024-01-01T00:00:00Z")
        mem.observe("please forget my locker code", time="2024-01-02T00:00:00Z")
        assert not any("4417" in t for t in _raw(mem, "locker code gym"))
        assert not any("4417" in t for t in _raw(mem, "locker code gym", as_of="2024-01-01T12:00:00Z"))
        mem.observe("The team uses Grafana for dashboards.", speaker="Ana", time="2024-02-01T00:00:00Z")
        mem.observe("The team uses Superset for dashboards.", speaker="Ben", time="2024-02-02T00:00:00Z")
        items = _shown(mem, "Which dashboards tool does the team use?")
        assert not any(it.kind == "observation" and ("Grafana" in it.text or "Superset" in it.text) for it in items)


def test_a_message_and_its_own_memories_never_share_the_budget(fake_mem: Memory) -> None:
    fake_mem.observe("June whelped overnight on May 31. seven puppies, the sire is Timberline Ace.",
                     time="2025-06-01T00:00:00Z")
    recall = fake_mem.recall("who is the sire of the puppies born May 31", budget_tokens=600)
    formed = fake_mem.store.ledger.formed_from("u", [it.id for it in recall.items if it.kind == "observation"])
    shown_memories = {it.id for it in recall.items if it.kind != "observation"}
    assert all(not (set(mids) & shown_memories) for mids in formed.values())
    assert any("Timberline" in it.text for it in recall.items)


def _item(id_: str, kind: str) -> RecallItem:
    return RecallItem(id=id_, text=id_, kind=kind, subject="u", attribute="", value="", scope="", status="current",
                      valid_from="2024-01-01T00:00:00Z", tokens=5, score=0.5, similarity=0.5, source="user")


def test_repeats_keeps_the_better_of_a_message_and_its_memories() -> None:
    items = [_item("o1", "observation"), _item("m1", "note"), _item("m2", "note"), _item("o2", "observation"),
             _item("m3", "note"), _item("o3", "observation")]
    formed = {"o1": ["m1", "m2"], "o2": ["m3"], "o3": ["gone"]}
    values = [0.9, 0.5, 0.4, 0.2, 0.6, 0.7]
    assert _repeats(items, values, formed) == {1, 2, 3}  # o1 beats its memories; m3 beats o2; o3's are not pooled


def test_by_default_a_message_that_formed_memories_is_not_shown_raw(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe("June whelped overnight on May 31. seven puppies, the sire is Timberline Ace.")
        mem.observe("hmm ok")
        raw = [it for it in mem.recall("who is the sire of the puppies", budget_tokens=600).items if it.kind == "observation"]
        assert all(not mem.store.ledger.formed_from("u", [it.id]) for it in raw)
