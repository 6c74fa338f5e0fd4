"""The offline answer quotes the first current memories of a recall, in the recall's (answer-first) order."""

from __future__ import annotations

from memory_graph.offline import current_items, offline_answer


def _item(mid: str, score: float, status: str = "current") -> dict[str, object]:
    return {"id": mid, "text": f"text {mid}", "kind": "fact", "status": status, "score": score}


def test_the_first_current_items_are_quoted_in_recall_order() -> None:
    items = [_item("old", 0.9, "superseded"), _item("answer", 0.8), _item("next", 0.2), _item("third", 0.3)]
    assert [f["id"] for f in current_items(items, max_items=2)] == ["answer", "next"]
    text = offline_answer(items, max_items=2)
    assert text.index("[m:answer]") < text.index("[m:next]") and "[m:old]" not in text and "[m:third]" not in text


def test_no_current_item_says_so() -> None:
    assert "no stored memory matches" in offline_answer([_item("x", 1.0, "retracted")])
    assert current_items(None) == []
