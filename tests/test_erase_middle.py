"""Erasing the middle version of a fact leaves the oldest replaced, now by the newest (breaker run, issue 14)."""

from __future__ import annotations

from pathlib import Path

from fakes import StemBagEmbedder

from memory_graph import Memory
from memory_graph.store.erase import chain_bridges


def test_chain_bridges_skip_erased_versions() -> None:
    # A <- B <- C <- D (each superseded by the next); erase B and C: A is bridged to D
    assert chain_bridges({"A": ["B"]}, {"B": "C", "C": "D"}, {"B", "C"}) == {"A": "D"}
    # erase the head: nothing survives above, no bridge (A is restored instead)
    assert chain_bridges({"C": ["D"]}, {}, {"D"}) == {}
    # a retraction has no successor: no bridge
    assert chain_bridges({"A": ["R"]}, {}, {"R"}) == {}
    # a cycle in corrupt data ends
    assert chain_bridges({"A": ["B"]}, {"B": "C", "C": "B"}, {"B", "C"}) == {}


def test_erasing_the_middle_version(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        lisbon = mem.observe("I live in Lisbon.", time="2025-01-01T10:00:00Z")[0]["id"]
        porto = mem.observe("I moved to Porto.", time="2025-02-01T10:00:00Z")[0]["id"]
        berlin = mem.observe("I moved to Berlin.", time="2025-03-01T10:00:00Z")[0]["id"]
        mem.forget(porto, hard=True)
        old = mem.inspect(lisbon)
        assert old["status"] == "superseded" and old["superseded_by"] == berlin, old
        assert old["valid_to"][:10] == "2025-03-01"
        context = mem.recall("Where do I live?").context
        assert "Berlin" in context and "Lisbon" not in context
        assert [h["id"] for h in mem.history(berlin)] == [lisbon, berlin]
        assert "Lisbon" in mem.recall("Where do I live?", as_of="2025-02-15T00:00:00Z").context
        # erasing the head now restores the old value
        mem.forget(berlin, hard=True)
        assert mem.inspect(lisbon)["status"] == "current"


def test_a_soft_forget_is_held_at_no_time(tmp_path: Path) -> None:
    """Breaker run: forget(id) ended the memory "now", so any earlier as_of showed it as current."""
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        pin = mem.observe("My bank PIN is 4921.", time="2025-01-01T10:00:00Z")[0]["id"]
        mem.forget(pin)
        assert mem.inspect(pin)["status"] == "retracted"
        assert "4921" not in mem.recall("What is my bank PIN?", as_of="2025-06-01T00:00:00Z").context
        assert "4921" not in mem.recall("What is my bank PIN?").context
