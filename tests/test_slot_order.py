"""Within a slot (subject, attribute, scope) the newest held statement is presented first (pure; no embedder)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_graph.records import RecallItem
from memory_graph.retrieval import slot_order


def _it(i: int, subject: str, attribute: str, scope: str, day: int, status: str = "current", kind: str = "state") -> RecallItem:
    return RecallItem(id=f"m{i}", text=f"t{i}", kind=kind, subject=subject, attribute=attribute, value=str(i),
                      scope=scope, status=status, valid_from=f"2025-01-{day:02d}T00:00:00Z", tokens=5, score=1.0,
                      similarity=0.5, source="user")


def test_an_older_statement_ranked_first_moves_behind_the_newer_one_of_its_slot() -> None:
    old = _it(1, "user", "location", "", 3)
    other = _it(2, "user", "employer", "", 1)
    new = _it(3, "user", "location", "", 9)
    assert [m.id for m in slot_order([old, other, new])] == ["m3", "m1", "m2"]


def test_scopes_subjects_and_raw_messages_stay_apart() -> None:
    staging = _it(1, "we", "redis version", "staging", 9)
    prod = _it(2, "we", "redis version", "production", 3)
    ana = _it(3, "Ana", "location", "", 9)
    me = _it(4, "user", "location", "", 1)
    msg = _it(5, "user", "message", "", 20, kind="observation")
    order = [m.id for m in slot_order([prod, msg, me, staging, ana])]
    assert order == ["m2", "m5", "m4", "m1", "m3"]


def test_held_statements_come_before_ended_ones_of_their_slot() -> None:
    ended = _it(1, "user", "location", "", 20, status="superseded")
    held = _it(2, "user", "location", "", 5)
    assert [m.id for m in slot_order([ended, held])] == ["m2", "m1"]


@given(st.lists(st.tuples(st.sampled_from(["user", "we", "Ana"]), st.sampled_from(["location", "job"]),
                          st.sampled_from(["", "staging"]), st.integers(1, 28),
                          st.sampled_from(["current", "superseded", "contested"])), max_size=12))
def test_property_same_items_and_newest_held_first_in_every_slot(specs: list[tuple[str, str, str, int, str]]) -> None:
    items = [_it(i, *spec[:4], status=spec[4]) for i, spec in enumerate(specs)]
    out = slot_order(items)
    assert sorted(m.id for m in out) == sorted(m.id for m in items)
    for key in {(m.subject, m.attribute, m.scope) for m in items}:
        group = [m for m in out if (m.subject, m.attribute, m.scope) == key]
        ranks = [(m.status not in ("current", "contested"), -int(m.valid_from[8:10])) for m in group]
        assert ranks == sorted(ranks)
