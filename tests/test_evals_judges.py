"""The eval judges on hand-made cases whose answer is known, including cases where they must report failure."""

from __future__ import annotations

import math

import pytest

from evals.common import DEV_SEEDS, TEST_SEEDS, TRAIN_SEEDS, parse_seeds
from evals.judges import (
    Chain,
    ReaderDraws,
    ReaderItem,
    Version,
    attention,
    judge_decision,
    judge_evidence,
    link_scores,
    normalize_evidence,
    presented_current,
    simulated_reader,
)
from evals.report import t_interval
from evals.systems import RecalledItem, fill_budget

T1, T2, T3 = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"
CHAIN = Chain("billing_db", (Version("m1", "PostgreSQL", T1), Version("m2", "MySQL", T2), Version("m3", "Aurora", T3)))
KNOWN = {"m1", "m2", "m3", "x1"}


def item(ref: str | None, text: str, time: str | None = None, status: str = "current", valid_to: str | None = None):
    return RecalledItem(id=ref or text, text=text, refs=(ref,) if ref else (), time=time, status=status, valid_to=valid_to)


V1 = item("m1", "We use PostgreSQL for the billing database.", T1)
V2 = item("m2", "We switched the billing database to MySQL.", T2)
V3 = item("m3", "Invoice storage lives in Aurora.", T3)
OTHER = item("x1", "We use Kafka for the message queue.", T2)


# ---- presented_current ------------------------------------------------------------------------------------


def test_unmarked_items_are_presented_as_current() -> None:
    assert presented_current(V1)
    assert presented_current(item("m1", "x", status="contested"))


def test_marked_items_are_not_presented_as_current() -> None:
    assert not presented_current(item("m1", "x", T1, status="superseded", valid_to=T2))
    assert not presented_current(item("m1", "x", T1, status="retracted"))


def test_as_of_uses_validity_interval() -> None:
    mid = "2024-01-15T00:00:00Z"
    old = item("m1", "x", T1, status="superseded", valid_to=T2)
    assert presented_current(old, mid)  # held at mid-January
    assert not presented_current(old, "2024-02-15T00:00:00Z")  # ended 1 Feb
    assert not presented_current(item("m2", "x", T2), mid)  # stated after as_of
    assert not presented_current(item("m1", "x", T1, status="superseded"), mid)  # marked, no end date


# ---- ODR / VDR / as_of -----------------------------------------------------------------------------------


def test_flat_context_with_replaced_decision_is_an_odr_failure() -> None:
    v = judge_decision([V1, V2, V3], CHAIN, known_refs=KNOWN)
    assert v.stale and v.stale_dated and v.current_found and not v.hidden


def test_dates_let_a_reader_see_the_newest() -> None:
    v = judge_decision([V3, V1], CHAIN, shows_dates=True, known_refs=KNOWN)
    assert v.stale and not v.stale_dated and v.current_found


def test_dated_context_missing_the_current_decision_fails_both_readings() -> None:
    v = judge_decision([V2, V1, OTHER], CHAIN, shows_dates=True, known_refs=KNOWN)
    assert v.stale and v.stale_dated and not v.current_found and v.hidden


def test_marked_superseded_history_is_not_stale() -> None:
    v = judge_decision([V3, item("m2", V2.text, T2, status="superseded", valid_to=T3)], CHAIN, known_refs=KNOWN)
    assert not v.stale and v.current_found


def test_empty_context_is_not_stale_but_hides_the_valid_decision() -> None:
    v = judge_decision([], CHAIN, known_refs=KNOWN)
    assert not v.stale and v.hidden and not v.current_found


def test_valid_decision_marked_superseded_is_hidden() -> None:
    wrongly = item("m3", V3.text, T3, status="superseded", valid_to="2024-04-01T00:00:00Z")
    v = judge_decision([wrongly], CHAIN, known_refs=KNOWN)
    assert v.hidden and not v.stale


def test_vdr_counts_a_valid_decision_marked_doubtful_in_any_way_as_hidden() -> None:
    """Issue 11: honest uncertainty must not buy ODR with hidden decisions. The strict (VDR) judge finds the
    held version only when it is shown with no doubt: contested, or ended by a date, is hidden."""
    for doubtful in (item("m3", V3.text, T3, status="contested"), item("m3", V3.text, T3, valid_to="2024-04-01T00:00:00Z")):
        assert judge_decision([doubtful], CHAIN, known_refs=KNOWN, strict=True).hidden
        assert not judge_decision([doubtful], CHAIN, known_refs=KNOWN).hidden  # the lenient (ODR) judge finds it
    assert not judge_decision([V3], CHAIN, known_refs=KNOWN, strict=True).hidden  # unmarked: found


def test_text_fallback_for_items_without_refs() -> None:
    change = item(None, "We replaced MySQL with Aurora for the billing database.")
    assert judge_decision([change], CHAIN, known_refs=KNOWN).current_found  # names Aurora: the newest named
    stale = item(None, "the billing database: MySQL")
    v = judge_decision([stale], CHAIN, known_refs=KNOWN)
    assert v.stale and v.hidden


def test_known_ref_of_another_statement_is_not_matched_by_text() -> None:
    lookalike = item("x1", "Analytics moved off MySQL.")
    v = judge_decision([lookalike], CHAIN, known_refs=KNOWN)
    assert not v.stale and v.hidden


def test_as_of_question_judges_the_value_held_then() -> None:
    as_of = "2024-02-15T00:00:00Z"  # MySQL held
    ok = judge_decision([item("m2", V2.text, T2, status="superseded", valid_to=T3)], CHAIN, as_of=as_of, known_refs=KNOWN)
    assert ok.current_found and not ok.stale and not ok.future_leak
    flat = judge_decision([V1, V2], CHAIN, as_of=as_of, known_refs=KNOWN)  # a store filtered by date
    assert flat.stale and flat.current_found
    leak = judge_decision([V3], CHAIN, as_of=as_of, known_refs=KNOWN)
    assert not leak.future_leak  # dated after as_of: not presented as current then
    leak2 = judge_decision([item("m3", V3.text, None)], CHAIN, as_of=as_of, known_refs=KNOWN)
    assert leak2.future_leak and leak2.hidden
    with pytest.raises(ValueError):
        judge_decision([V1], CHAIN, as_of="2023-06-01T00:00:00Z")


# ---- links --------------------------------------------------------------------------------------------------


def test_link_scores_right_wrong_and_missing() -> None:
    other = Chain("queue", (Version("q1", "Kafka", T1), Version("q2", "NATS", T2)))
    perfect = link_scores({("m2", "m1"), ("m3", "m2"), ("q2", "q1")}, [CHAIN, other])
    assert perfect.precision == 1.0 and perfect.recall == 1.0
    wrong = link_scores({("m1", "m2"), ("q2", "m3"), ("f9", "m1")}, [CHAIN, other])  # reversed, cross-chain, filler
    assert wrong.precision == 0.0 and wrong.recall == 0.0
    half = link_scores({("m3", "m1"), ("q1", "q2")}, [CHAIN, other])  # skip link is right; reversed is wrong
    assert half.precision == 0.5 and math.isclose(half.recall, 1 / 3)
    none = link_scores(set(), [CHAIN])
    assert none.precision is None and none.recall == 0.0


# ---- LoCoMo evidence --------------------------------------------------------------------------------------


def test_normalize_evidence_mends_dataset_quirks() -> None:
    assert normalize_evidence(["D8:6; D9:17", "D:11:26", "D", "D1:3", "D1:3"]) == ["D8:6", "D9:17", "D11:26", "D1:3"]


def test_evidence_recall() -> None:
    items = [item("D1:3", "a"), item("D2:5", "b")]
    full = judge_evidence(items, ["D1:3"])
    assert full.recall == 1.0 and full.all_found
    part = judge_evidence(items, ["D1:3", "D4:1"])
    assert part.recall == 0.5 and not part.all_found
    miss = judge_evidence([], ["D1:3"])
    assert miss.recall == 0.0 and not miss.all_found
    assert not judge_evidence(items, []).all_found


# ---- simulated reader -------------------------------------------------------------------------------------


def draws(n: int = 8, attend: float = 0.0, pick: float = 0.9, lost: float = 0.99, **at: float) -> ReaderDraws:
    a = [attend] * n
    for k, v in at.items():
        a[int(k[1:])] = v
    return ReaderDraws(tuple(a), tuple([pick] * n), lost)


def test_position_reader_takes_the_first_match() -> None:
    ctx = [ReaderItem("irrelevant", None), ReaderItem("gold", None), ReaderItem("stale", None)]
    assert simulated_reader(ctx, "position", draws()).success
    stale_first = [ReaderItem("stale", None), ReaderItem("gold", None)]
    v = simulated_reader(stale_first, "position", draws())
    assert not v.success and v.picked == 0


def test_position_reader_skips_items_marked_superseded() -> None:
    ctx = [ReaderItem("stale", T1, current=False), ReaderItem("gold", T2)]
    assert simulated_reader(ctx, "position", draws()).success


def test_reader_misses_unattended_gold() -> None:
    ctx = [ReaderItem("irrelevant", None), ReaderItem("gold", None)]
    assert not simulated_reader(ctx, "position", draws(p1=attention(1))).success  # draw at the threshold: unseen


def test_lookalike_confuses_the_reader_when_drawn() -> None:
    ctx = [ReaderItem("lookalike", None), ReaderItem("gold", None)]
    assert simulated_reader(ctx, "position", draws(pick=0.9)).success
    assert not simulated_reader(ctx, "position", draws(pick=0.1)).success


def test_timestamp_reader_prefers_the_newest_date() -> None:
    ctx = [ReaderItem("stale", T1), ReaderItem("gold", T2)]
    assert not simulated_reader(ctx, "position", draws()).success
    assert simulated_reader(ctx, "timestamp", draws()).success
    undated = [ReaderItem("stale", None), ReaderItem("gold", None)]
    assert not simulated_reader(undated, "timestamp", draws()).success  # no dates: falls back to position


def test_timestamp_reader_respects_as_of() -> None:
    ctx = [ReaderItem("gold", T1), ReaderItem("future", T3)]
    assert simulated_reader(ctx, "timestamp", draws(), as_of=T2).success
    assert not simulated_reader(ctx, "timestamp", draws()).success


def test_irrelevant_context_distracts() -> None:
    ctx = [ReaderItem("gold", None)] + [ReaderItem("irrelevant", None)] * 5
    assert simulated_reader(ctx, "position", draws(lost=0.5)).success
    lost = simulated_reader(ctx, "position", draws(lost=0.1))  # 5 * 0.04 = 0.2 > 0.1
    assert not lost.success and lost.reason.startswith("lost")


def test_reader_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        simulated_reader([ReaderItem("gold", None)], "psychic", draws())
    with pytest.raises(ValueError):
        simulated_reader([ReaderItem("oracle", None)], "position", draws())
    with pytest.raises(ValueError):
        simulated_reader([ReaderItem("gold", None)] * 3, "position", draws(n=2))
    assert not simulated_reader([], "position", draws()).success


# ---- statistics, budgets, seeds ---------------------------------------------------------------------------


def test_t_interval_known_values() -> None:
    ci = t_interval([1.0, 2.0, 3.0])
    assert ci["mean"] == 2.0 and math.isclose(ci["half"], 4.302653 / math.sqrt(3), rel_tol=1e-5)
    assert t_interval([0.5])["half"] is None
    assert t_interval([])["mean"] is None


def test_fill_budget_skips_what_does_not_fit() -> None:
    ranked = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    assert [i for i, _ in fill_budget(ranked, {"a": 6, "b": 6, "c": 3}, 10)] == ["a", "c"]
    assert fill_budget(ranked, {"a": 11, "b": 11, "c": 11}, 10) == []


def test_seed_sets_are_disjoint_and_parse() -> None:
    assert not (set(TRAIN_SEEDS) & set(DEV_SEEDS)) and not (set(DEV_SEEDS) & set(TEST_SEEDS))
    assert not (set(TRAIN_SEEDS) & set(TEST_SEEDS))
    assert parse_seeds("test:3", ()) == (1000, 1001, 1002)
    assert parse_seeds("5-7,9", ()) == (5, 6, 7, 9)
    assert parse_seeds(None, (1,)) == (1,)
    with pytest.raises(ValueError):
        parse_seeds("x", ())
