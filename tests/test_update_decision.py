"""The pure learned-linking decision (memory_graph.update_decision) with an injected fake model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memory_graph.relations import LABELS, Relation
from memory_graph.update_decision import MIN_SIMILARITY, READS, THRESHOLD, Candidate, decide, shortlist


def _rel(**probs: float) -> Relation:
    rest = (1 - sum(probs.values())) / (len(LABELS) - len(probs))
    row = tuple(probs.get(lab, rest) for lab in LABELS)
    best = max(range(len(LABELS)), key=row.__getitem__)
    return Relation(LABELS[best], row[best], row)


def fake(verdicts: dict[str, Relation]) -> Any:
    seen: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []

    def relate(pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[Relation]:
        seen.extend(pairs)
        return [verdicts[earlier["text"]] for earlier, _ in pairs]

    relate.seen = seen  # type: ignore[attr-defined]
    return relate


LATER = {"speaker": "user", "date": "2024-06-01T00:00:00Z", "text": "moved to Porto, sold the car, forget my ex"}
CANDS = [Candidate("m1", "I live in Lisbon", "user", "2024-01-01"), Candidate("m2", "I drive a Civic", "user", "2024-01-01"),
         Candidate("m3", "My ex is Tom", "user", "2024-01-01"), Candidate("m4", "My sister lives in Leeds", "user", "2024-01-01"),
         Candidate("m5", "I was born in 1990", "user", "2024-01-01")]


def test_each_outdated_candidate_is_sorted_by_how() -> None:
    relate = fake({"I live in Lisbon": _rel(replaces=0.7), "I drive a Civic": _rel(ends=0.4, replaces=0.2),
                   "My ex is Tom": _rel(forget=0.9), "My sister lives in Leeds": _rel(adds=0.8),
                   "I was born in 1990": _rel(corrects=0.3, unrelated=0.6)})
    verdict = decide(LATER, CANDS, relate)
    assert verdict.supersedes == ["m1"] and verdict.ends == ["m2"] and verdict.forgets == ["m3"]
    assert set(verdict.evidence) == {"m1", "m2", "m3"}
    assert not verdict.request_only
    assert verdict.reason("m1").startswith("update model: replaces (p=0.")
    assert len(relate.seen) == 5 and all(later == LATER for _, later in relate.seen)  # one batched call


def test_a_statement_supersedes_only_its_most_probable_candidate() -> None:
    relate = fake({"I live in Lisbon": _rel(replaces=0.7), "I drive a Civic": _rel(corrects=0.8),
                   "My ex is Tom": _rel(ends=0.9), "My sister lives in Leeds": _rel(ends=0.6),
                   "I was born in 1990": _rel(forget=0.7)})  # m4 ends less surely than m3: only m3 ends
    verdict = decide(LATER, CANDS, relate)
    assert verdict.supersedes == ["m2"] and verdict.ends == ["m3"] and verdict.forgets == ["m5"]
    assert set(verdict.evidence) == {"m2", "m3", "m5"}


def test_a_forget_request_forgets_only_its_most_probable_candidate() -> None:
    """Breaker run: "Strike that from the record." read as forgetting each of the 8 nearest memories retracted 8 of 11."""
    relate = fake({c.text: _rel(forget=0.8 if c.id != "m4" else 0.9) for c in CANDS})
    assert decide(LATER, CANDS, relate).forgets == ["m4"]


def test_below_the_threshold_nothing_is_outdated() -> None:
    relate = fake({c.text: _rel(replaces=0.2, corrects=0.1, ends=0.05, forget=THRESHOLD - 0.36) for c in CANDS})
    assert not decide(LATER, CANDS, relate).evidence
    assert not decide(LATER, [], relate).evidence  # no candidates: no model call, nothing outdated


def test_a_bare_forget_request_forms_no_memory() -> None:
    relate = fake({c.text: _rel(forget=0.8) if c.id == "m3" else _rel(unrelated=0.9) for c in CANDS})
    verdict = decide(LATER, CANDS, relate)
    assert verdict.forgets == ["m3"] and verdict.request_only


def test_a_multi_valued_memory_is_joined_never_superseded_and_a_reminder_forgets_nothing() -> None:
    cats = [Candidate("m1", "I have a cat", "user", "2024-01-01", multi=True),
            Candidate("m2", "My dentist appointment is on Friday", "user", "2024-01-01")]
    relate = fake({"I have a cat": _rel(replaces=0.9), "My dentist appointment is on Friday": _rel(forget=0.9)})
    verdict = decide(LATER, cats, relate, may_forget=False)
    assert not verdict.supersedes and not verdict.forgets and not verdict.evidence
    assert decide(LATER, cats, relate).forgets == ["m2"]


def test_a_word_for_word_copy_of_the_chosen_candidate_goes_with_it() -> None:
    cands = [Candidate("m1", "We use Kafka for the event bus.", "user", "2024-01-01"),
             Candidate("m2", "we use kafka for the event bus", "user", "2024-02-01"),
             Candidate("m3", "We use Kafka for analytics.", "user", "2024-02-01")]
    relate = fake({"We use Kafka for the event bus.": _rel(replaces=0.9), "we use kafka for the event bus": _rel(unrelated=0.8),
                   "We use Kafka for analytics.": _rel(unrelated=0.9)})
    assert decide(LATER, cands, relate).supersedes == ["m1", "m2"]


def test_the_shortlist_reads_the_nearest_and_few_close_others() -> None:
    scored = [("a", 0.12), ("b", 0.6), ("c", MIN_SIMILARITY), ("d", MIN_SIMILARITY - 0.01), ("e", 0.9), ("f", 0.8), ("g", 0.7)]
    assert shortlist(scored) == ["a", "b", "c", "e"][:READS]  # the nearest however far, then the close ones in order
    assert shortlist([("far", 0.01)]) == ["far"]
    assert shortlist([]) == []
    assert shortlist([(str(i), 0.9) for i in range(20)]) == [str(i) for i in range(READS)]
