"""The offline answer quotes the most useful current memories of a recall, in the recall's (timeline) order."""

from __future__ import annotations

from memory_graph.offline import current_items, offline_answer


def _item(mid: str, score: float, status: str = "current") -> dict[str, object]:
    return {"id": mid, "text": f"text {mid}", "kind": "fact", "status": status, "score": score}


def test_the_most_useful_current_items_are_quoted_in_recall_order() -> None:
    items = [_item("new1", 0.2), _item("old", 0.9, "superseded"), _item("new2", 0.3), _item("answer", 0.8),
             _item("new3", 0.1)]
    assert [f["id"] for f in current_items(items, max_items=2)] == ["new2", "answer"]
    text = offline_answer(items, max_items=2)
    assert text.index("[m:new2]") < text.index("[m:answer]") and "[m:old]" not in text and "[m:new1]" not in text


def test_no_current_item_says_so() -> None:
    assert "no stored memory matches" in offline_answer([_item("x", 1.0, "retracted")])
    assert current_items(None) == []
