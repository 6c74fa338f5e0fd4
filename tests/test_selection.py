"""Selection rules around the knapsack: the similarity guard, the compact block under tight budgets, the
learned usefulness model and the features every recall record keeps."""

from __future__ import annotations

import pytest

from memory_graph import Memory
from memory_graph.config import Context
from memory_graph.records import RecallItem
from memory_graph.retrieval import PREAMBLE, _guard, render_context
from memory_graph.tokens import count_tokens
from memory_graph.usefulness import FEATURES, LOGISTIC, Posterior, features, learned_usefulness


def _item(i: int, tokens: int = 10) -> RecallItem:
    return RecallItem(id=f"m{i}", text="t", kind="state", subject="s", attribute="a", value="v", scope="",
                      status="current", valid_from="2024-01-01T00:00:00Z", tokens=tokens, score=0.5,
                      similarity=0.5, source="user")


def test_guard_keeps_the_most_similar_without_evidence_against_it() -> None:
    items = [_item(0), _item(1), _item(2)]
    assert _guard(items, [0.7, 0.9, 0.8], [None, None, None], room=100) == [1]


def test_guard_yields_to_task_class_evidence_of_uselessness() -> None:
    items = [_item(0), _item(1)]
    useless = Posterior.from_stats(0.0, 1.0, 0.0)  # blamed once for this task class: mean 1/3
    assert _guard(items, [0.7, 0.9], [None, useless], room=100) == []
    helpful = Posterior.from_stats(2.0, 0.0, 0.0)
    assert _guard(items, [0.7, 0.9], [None, helpful], room=100) == [1]


def test_guard_skips_a_candidate_that_does_not_fit() -> None:
    assert _guard([_item(0, tokens=50)], [0.9], [None], room=40) == []


def test_features_row_and_learned_usefulness_follow_the_evidence() -> None:
    fresh = features(0.8, 0.8, 0, 0.0, 0.8, 20, None, "location", False, False)
    assert len(fresh) == len(FEATURES) == len(LOGISTIC[0]) == len(LOGISTIC[2])
    assert fresh[FEATURES.index("help_task")] == 0.5 and fresh[FEATURES.index("gap")] == 0.0
    credited = {"": {"shown": 4.0, "credited": 4.0, "blamed": 0.0, "unrewarded": 0.0},
                "location": {"shown": 4.0, "credited": 4.0, "blamed": 0.0, "unrewarded": 0.0}}
    blamed = {"": {"shown": 4.0, "credited": 0.0, "blamed": 4.0, "unrewarded": 0.0},
              "location": {"shown": 4.0, "credited": 0.0, "blamed": 4.0, "unrewarded": 0.0}}
    good = features(0.8, 0.8, 0, 0.0, 0.8, 20, credited, "location", False, False)
    bad = features(0.8, 0.8, 0, 0.0, 0.8, 20, blamed, "location", False, False)
    assert learned_usefulness(good, 1.0) > learned_usefulness(fresh, 1.0) > learned_usefulness(bad, 1.0)
    assert learned_usefulness(good, 0.0) == 0.0  # relevance gates the learned value too
    assert 0.0 < learned_usefulness(fresh, 1.0) < 1.0


def test_context_rejects_an_unknown_usefulness_model() -> None:
    with pytest.raises(ValueError, match="usefulness"):
        Context(usefulness="neural")  # type: ignore[arg-type]


def test_tight_budget_drops_the_preamble_not_the_fence(mem: Memory) -> None:
    mem.observe("I live in Lisbon.", time="2024-01-10T09:00:00")
    roomy = mem.recall("Where does the user live?", budget_tokens=200)
    assert PREAMBLE in roomy.context and roomy.items
    lisbon = next(it for it in roomy.items if it.value == "Lisbon")
    line_and_fence = count_tokens(render_context([lisbon], None, compact=True)) + 1
    assert line_and_fence < count_tokens(render_context([lisbon], None))
    tight = mem.recall("Where does the user live?", budget_tokens=line_and_fence)
    assert tight.items and tight.items[0].value == "Lisbon"
    assert PREAMBLE not in tight.context
    assert tight.context.startswith("<memory-context>") and tight.context.endswith("</memory-context>")
    assert tight.tokens_used <= line_and_fence


def test_recall_record_keeps_features_and_the_guard_reason(mem: Memory) -> None:
    mem.observe("I live in Lisbon.", time="2024-01-10T09:00:00")
    mem.observe("My sister lives in Oslo.", time="2024-01-11T09:00:00")
    r = mem.recall("Where does the user live?", budget_tokens=200)
    assert all(len(c["features"]) == len(FEATURES) for c in r.candidates)
    top = max(r.candidates, key=lambda c: c["similarity"])
    assert top["chosen"] and top["reason"].startswith("chosen: similarity guard")


def test_ids_cost_the_same_tokens_in_a_context_line(mem: Memory) -> None:
    from memory_graph.store.tx import ID_TOKENS

    formed = mem.observe_many([{"text": f"Person {i} lives in Town {i}.", "speaker": "user"} for i in range(30)])
    costs = {count_tokens(f" [m:{f['id']}] ") for f in formed if f.get("id")}
    assert costs == {ID_TOKENS}


def test_lexical_hits_obey_status_and_as_of(mem: Memory) -> None:
    from memory_graph.retrieval import _lexical_keep, _scored_hits

    mem.observe("I live in Lisbon.", time="2024-01-10T09:00:00")
    mem.observe("I moved to Porto.", time="2024-06-02T09:00:00")
    vec = mem.store.embed(["Lisbon"])[0]
    ns = mem.context.user_id
    found = mem.store.search_lexical(ns, "Lisbon", 40)
    pool = mem.store.ledger.recall_candidates(ns, found)
    assert found and _lexical_keep(found, pool, set(), None, False) == []  # the Lisbon memory is superseded: not a
    then = _lexical_keep(found, pool, set(), "2024-03-01T00:00:00Z", False)  # candidate for a question about now
    hits = _scored_hits(then, mem.store.memory_vectors(then, ns), vec)
    assert len(hits) == 1 and 0.0 < hits[0][1] <= 1.0


def test_history_recall_brings_the_chain_of_what_it_recalls(mem: Memory) -> None:
    mem.observe("I live in Lisbon.", time="2024-01-10T09:00:00")
    mem.observe("I moved to Porto.", time="2024-03-02T09:00:00")
    mem.observe("We live in Berlin now.", time="2024-09-02T09:00:00")
    mem.observe_many([{"text": f"My colleague Ana{i} works on project {i} at the office.", "speaker": "user",
                       "time": f"2024-05-{i + 1:02d}T09:00:00"} for i in range(15)])
    r = mem.recall("Where do I live?", include_history=True, budget_tokens=400)
    texts = " ".join(it.text for it in r.items)
    assert "Berlin" in texts and "Porto" in texts and "Lisbon" in texts
    porto = next(it for it in r.items if "Porto" in it.text)
    assert porto.status == "superseded" and porto.superseded_by


def test_every_budget_is_kept_or_refused_clearly(mem: Memory) -> None:
    mem.observe("I live in Lisbon.", time="2024-01-10T09:00:00")
    mem.observe("My brother Leo has a very long and winding story about the bakery he wants to open in Porto next spring.",
                time="2024-01-11T09:00:00")
    for as_of in (None, "2024-02-01"):
        for budget in range(1, 61):
            try:
                r = mem.recall("Where does the user live?", budget_tokens=budget, as_of=as_of)
            except ValueError as err:
                assert "below the context block" in str(err)
                continue
            assert count_tokens(r.context) == r.tokens_used <= budget, (budget, as_of, r.context)
            assert r.context.startswith("<memory-context>") and r.context.endswith("</memory-context>")


@pytest.mark.parametrize("budget", [float("inf"), float("nan"), 2.5, True, 10**19, -3])
def test_unusable_budgets_raise_value_error(mem: Memory, budget: object) -> None:
    mem.observe("I live in Lisbon.")
    with pytest.raises(ValueError, match="budget_tokens"):
        mem.recall("Where does the user live?", budget_tokens=budget)  # type: ignore[arg-type]


def test_a_huge_budget_costs_no_more_than_the_candidates(mem: Memory) -> None:
    import time

    mem.observe_many([{"text": f"Person {i} lives in Town {i}.", "speaker": "user"} for i in range(15)])
    start = time.perf_counter()
    r = mem.recall("Where does Person 3 live?", budget_tokens=1_000_000)
    assert time.perf_counter() - start < 5.0 and r.items


@pytest.mark.parametrize("field,value", [("budget_tokens", 30.5), ("max_items", 2.5), ("learning", "no"),
                                         ("linking", "false")])
def test_context_rejects_wrong_types(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        Context(**{field: value})  # type: ignore[arg-type]


def test_memory_text_cannot_forge_citations_or_carry_control_characters(mem: Memory) -> None:
    mem.observe("Maya likes [o:babababa] and [m:kokokoko] \x1b[31mred\x01.", speaker="user")
    r = mem.recall("What does Maya like?", budget_tokens=300)
    assert "[o:babababa]" not in r.context and "[m:kokokoko]" not in r.context
    assert "\x1b" not in r.context and "\x01" not in r.context


def test_same_key_facts_join_the_pool_with_their_scopes(mem: Memory) -> None:
    from memory_graph.retrieval import _same_key_hits

    mem.observe("We use Redis for the cache layer in staging.", time="2024-01-10T09:00:00")
    mem.observe("We use Memcached for the cache layer in production.", time="2024-01-11T09:00:00")
    ns = mem.context.user_id
    rows = mem.store.ledger.query("SELECT id, scope FROM memories WHERE namespace=?", (ns,))
    staging = next(r["id"] for r in rows if r["scope"] == "staging")
    production = next(r["id"] for r in rows if r["scope"] == "production")
    vec = mem.store.embed(["Which cache do we use?"])[0]
    pool = mem.store.ledger.recall_candidates(ns, [staging])
    extra = _same_key_hits(mem.store, ns, [(staging, 0.9)], pool, vec, {}, None, False)
    assert [m for m, _ in extra] == [production]
    r = mem.recall("Which cache do we use?", budget_tokens=300)
    shown = " ".join(it.text + " " + it.scope for it in r.items)  # a memory with its scope, or its message
    assert all(word in shown for word in ("Redis", "staging", "Memcached", "production"))
