"""The unseen-conversation suite: its frozen files load, and its judge reads order, status and dates as documented
(pure: no embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.systems import RecalledItem
from evals.unseen import DATA, Question, judge, load_conversation, load_folder


def _item(text: str, status: str = "current", valid_to: str | None = None) -> RecalledItem:
    return RecalledItem(id=text[:8], text=text, status=status, valid_to=valid_to)


Q = Question(id="q", type="current", question="Where do I live?", accept=("Leeds",), replaced=("Manchester",))


def test_every_frozen_conversation_loads_with_enough_questions() -> None:
    convs = load_folder(DATA)
    assert len(convs) >= 6
    for conv in convs:
        assert 30 <= len(conv.turns) <= 60 and len(conv.questions) >= 12
        assert [t.time for t in conv.turns] == sorted(t.time for t in conv.turns)


def test_current_value_first_and_replaced_as_current() -> None:
    assert judge([_item("I live in Leeds now."), _item("I live in Manchester.")], Q) == {
        "shown": True, "first": True, "first_line": True, "replaced_as_current": True}
    assert judge([_item("I live in Manchester."), _item("I live in Leeds now.")], Q)["first"] is False


def test_first_line_is_the_very_first_line_shown() -> None:
    """Issue 20: the reader's first line must answer; a first line about something else fails, even when the answer
    comes second and no replaced value is shown (where ``first`` still holds)."""
    assert judge([_item("My sister lives in York."), _item("I live in Leeds now.")], Q) == {
        "shown": True, "first": True, "first_line": False, "replaced_as_current": False}
    assert judge([_item("I live in Manchester.", status="superseded"), _item("Leeds.")], Q)["first_line"] is False
    assert judge([], Q)["first_line"] is False


def test_a_line_marked_outdated_is_neither_first_nor_current() -> None:
    items = [_item("I live in Manchester.", status="superseded"), _item("I live in Leeds now.")]
    assert judge(items, Q) == {"shown": True, "first": True, "first_line": False, "replaced_as_current": False}
    ended = [_item("I live in Manchester.", valid_to="2025-01-01T00:00:00Z"), _item("Leeds it is.")]
    assert judge(ended, Q)["replaced_as_current"] is False


def test_contested_still_counts_as_shown_as_current() -> None:
    assert judge([_item("I live in Manchester.", status="contested")], Q)["replaced_as_current"] is True


def test_a_line_naming_both_values_presents_the_old_one_as_old() -> None:
    assert judge([_item("Moved from Manchester to Leeds.")], Q) == {
        "shown": True, "first": True, "first_line": True, "replaced_as_current": False}


def test_as_of_uses_the_question_time_for_valid_to() -> None:
    q = Question(id="a", type="as_of", question="Where did I live?", accept=("Manchester",), replaced=("Leeds",),
                 as_of="2024-06-01T00:00:00Z")
    held_then = _item("I live in Manchester.", valid_to="2025-01-01T00:00:00Z")
    assert judge([held_then], q)["first"] is True


def test_forgotten_questions_only_count_the_value_coming_back() -> None:
    q = Question(id="f", type="forgotten", question="What is my locker code?", accept=(), replaced=("2264",))
    assert judge([_item("My locker code is 2264.")], q) == {"shown": False, "first": False, "first_line": False,
                                                              "replaced_as_current": True}
    assert judge([], q)["replaced_as_current"] is False


def test_a_malformed_file_names_itself(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": []}')
    with pytest.raises(ValueError, match="bad.json"):
        load_conversation(bad)
