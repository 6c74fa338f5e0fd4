"""Leave-one-out replay in ``Memory.feedback``: only for ambiguous successes, within its call budget, and
credit goes to the memory whose removal loses the success."""

from __future__ import annotations

from memory_graph import Memory
from memory_graph.credit import MAX_REPLAYS


def _two_porto_memories(mem: Memory) -> tuple[str, list[str]]:
    mem.observe("Maya lives in Porto.", speaker="user", time="2024-01-10T09:00:00")
    mem.observe("Maya's sister lives in Porto.", speaker="user", time="2024-01-11T09:00:00")
    r = mem.recall("Where does Maya live?", budget_tokens=300)
    shown = [it.id for it in r.items]
    maya = next(it.id for it in r.items if it.text.startswith("Maya lives"))
    assert len([it for it in r.items if it.value == "Porto"]) == 2
    return r.id, [maya, *[s for s in shown if s != maya]]


def test_replay_credits_the_memory_whose_removal_loses_the_success(mem: Memory) -> None:
    recall_id, (maya, *_) = _two_porto_memories(mem)
    calls: list[list[str]] = []

    def replay(ids: list[str]) -> bool:
        calls.append(ids)
        return maya in ids

    out = mem.feedback(recall_id, success=True, answer="Porto", replay=replay)
    assert out["replays"] == len(calls) == 2 <= MAX_REPLAYS
    assert set(out["credited"]) == {maya}


def test_without_replay_both_value_matches_are_credited(mem: Memory) -> None:
    recall_id, _ = _two_porto_memories(mem)
    out = mem.feedback(recall_id, success=True, answer="Porto")
    assert out["replays"] == 0 and len(out["credited"]) >= 2


def test_no_replay_when_the_answer_settles_it_or_on_failure(mem: Memory) -> None:
    mem.observe("Maya lives in Porto.", speaker="user", time="2024-01-10T09:00:00")
    mem.observe("Omar lives in Lisbon.", speaker="user", time="2024-01-11T09:00:00")
    calls: list[list[str]] = []

    def replay(ids: list[str]) -> bool:
        calls.append(ids)
        return True

    r = mem.recall("Where does Maya live?", budget_tokens=300)
    assert mem.feedback(r.id, success=True, answer="Porto", replay=replay)["replays"] == 0
    r2 = mem.recall("Where does Maya live?", budget_tokens=300)
    assert mem.feedback(r2.id, success=False, answer="Lisbon", replay=replay)["replays"] == 0
    r3 = mem.recall("Where does Maya live?", budget_tokens=300)
    assert mem.feedback(r3.id, success=True, used_ids=[r3.items[0].id], replay=replay)["replays"] == 0
    assert calls == []


def test_no_replay_for_a_recall_that_already_has_an_outcome(mem: Memory) -> None:
    import pytest

    recall_id, _ = _two_porto_memories(mem)
    mem.feedback(recall_id, success=True, answer="Porto")
    calls: list[list[str]] = []
    with pytest.raises(ValueError, match="already has an outcome"):
        mem.feedback(recall_id, success=True, answer="Porto", replay=lambda ids: calls.append(ids) or True)
    assert calls == []


def test_concurrent_feedback_on_one_recall_is_recorded_once(mem: Memory) -> None:
    import threading

    mem.observe("Maya lives in Porto.", speaker="user")
    errors: list[Exception] = []
    for _ in range(10):
        r = mem.recall("Where does Maya live?", budget_tokens=300)

        def give(rid: str = r.id, used: str = r.items[0].id) -> None:
            try:
                mem.feedback(rid, success=True, used_ids=[used])
            except ValueError as err:
                errors.append(err)

        threads = [threading.Thread(target=give) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    stats = mem.inspect(r.items[0].id)["stats"]["overall"]
    assert stats["credited"] == 10 and len(errors) == 10
