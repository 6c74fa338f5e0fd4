"""The chosen lines are presented as a timeline: held lines newest first, then ended ones; within a slot
(subject, attribute, scope) the newest held statement therefore comes first (pure; no embedder)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_graph.records import RecallItem
from memory_graph.retrieval import SLOT_SIMILARITY, answer_order, timeline_order


def _it(i: int, subject: str, attribute: str, scope: str, day: int, status: str = "current", kind: str = "state") -> RecallItem:
    return RecallItem(id=f"m{i}", text=f"t{i}", kind=kind, subject=subject, attribute=attribute, value=str(i),
                      scope=scope, status=status, valid_from=f"2025-01-{day:02d}T00:00:00Z", tokens=5, score=1.0,
                      similarity=0.5, source="user")


def test_an_older_statement_ranked_first_moves_behind_newer_ones() -> None:
    old = _it(1, "user", "location", "", 3)
    other = _it(2, "user", "employer", "", 1)
    new = _it(3, "user", "location", "", 9)
    assert [m.id for m in timeline_order([old, other, new])] == ["m3", "m1", "m2"]


def test_raw_messages_and_unlinked_notes_take_their_place_by_date() -> None:
    """An old note the linker never related to its update (a free-text memory) is met after the newer
    raw message that updates it: the date decides, not the kind or the slot."""
    note = _it(1, "user", "note: metformin dose", "", 3)
    msg = _it(2, "user", "", "", 20, kind="observation")
    staging = _it(3, "we", "redis version", "staging", 9)
    assert [m.id for m in timeline_order([note, staging, msg])] == ["m2", "m3", "m1"]


def test_held_statements_come_before_ended_ones() -> None:
    ended = _it(1, "user", "location", "", 20, status="superseded")
    held = _it(2, "user", "location", "", 5)
    contested = _it(3, "user", "job", "", 4, status="contested")
    assert [m.id for m in timeline_order([ended, held, contested])] == ["m2", "m3", "m1"]


@given(st.lists(st.tuples(st.sampled_from(["user", "we", "Ana"]), st.sampled_from(["location", "job"]),
                          st.sampled_from(["", "staging"]), st.integers(1, 28),
                          st.sampled_from(["current", "superseded", "retracted", "contested"]),
                          st.sampled_from(["state", "observation"])), max_size=12))
def test_property_same_items_held_first_newest_first(specs: list[tuple[str, str, str, int, str, str]]) -> None:
    items = [_it(i, *spec[:4], status=spec[4], kind=spec[5]) for i, spec in enumerate(specs)]
    out = timeline_order(items)
    assert sorted(m.id for m in out) == sorted(m.id for m in items)
    ranks = [(m.status not in ("current", "contested"), -int(m.valid_from[8:10])) for m in out]
    assert ranks == sorted(ranks)
    for key in {(m.subject, m.attribute, m.scope) for m in items}:  # the slot invariant follows
        group = [m for m in out if (m.subject, m.attribute, m.scope) == key and m.status in ("current", "contested")]
        assert [m.valid_from for m in group] == sorted((m.valid_from for m in group), reverse=True)


def test_answer_order_puts_the_best_slot_first_and_its_newest_statement_first() -> None:
    """Issue 20: slots keep the order of their best line; within a slot, held lines newest first, then ended ones."""
    best_old = _it(1, "user", "location", "", 3)  # the most valuable line, an old statement of the slot
    other = _it(2, "user", "employer", "", 20)  # newer, but another slot
    new = _it(3, "user", "location", "", 9)
    ended = _it(4, "user", "location", "", 1, status="superseded")
    about = {1: 0, 2: 1, 3: 0, 4: 0}  # which slot each line is about
    vectors = np.asarray([np.eye(2)[about[i]] for i in (1, 2, 3, 4)], dtype=np.float32)
    assert [m.id for m in answer_order([best_old, other, new, ended], vectors)] == ["m3", "m1", "m4", "m2"]
    near = np.asarray([[1.0, 0.0], [SLOT_SIMILARITY - 0.01, (1 - (SLOT_SIMILARITY - 0.01) ** 2) ** 0.5]], dtype=np.float32)
    assert [m.id for m in answer_order([best_old, new], near)] == ["m1", "m3"]  # below the cut-off: two slots
