"""Chain-head resolution at recall: a query that matches a replaced memory brings what replaced it."""

from __future__ import annotations

from memory_graph import Memory


def test_a_query_about_the_old_value_brings_the_current_head(mem: Memory) -> None:
    mem.observe("I live in Lisbon, in a flat near the river.", time="2024-01-01T00:00:00")
    names = ["Tom", "Ana", "Leo", "Mia", "Sam", "Eva", "Noah", "Ida", "Max", "Zoe", "Kai", "Liv"]
    # look-alike distractors about other people, more similar to the query than "I moved to Porto." (the pool
    # holds the 48 nearest current memories)
    mem.observe_many([{"text": f"My friend {n} {s} rents a flat near the river in Lisbon.", "time": "2024-02-01T00:00:00"}
                      for n in names for s in ("Silva", "Costa", "Pereira", "Santos", "Rocha")])
    formed = mem.observe("I moved to Porto.", time="2024-06-01T00:00:00")
    porto = next(f for f in formed if f["value"] == "Porto")
    assert porto["action"] == "supersede"
    r = mem.recall("Do I still live in Lisbon, in the flat near the river?", budget_tokens=400)
    ids = [it.id for it in r.items]
    assert porto["id"] in ids  # the head of the chain the query matched
    assert all(it.status == "current" for it in r.items)  # the replaced memory itself is not shown as current
    assert not any("I live in Lisbon" in it.text or "user lives in Lisbon" in it.text for it in r.items)
