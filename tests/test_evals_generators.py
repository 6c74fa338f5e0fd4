"""The eval generators: deterministic per seed, truths consistent, wording requirements met."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evals.common import epoch
from evals.locomo import load_conversation
from evals.outcome import FAMILIES, make_world
from evals.supersession import (
    CHANGE,
    DECIDE,
    PARAPHRASE,
    PLAIN,
    TOPICS,
    generate,
    load_templates,
    words,
)


def test_supersession_is_deterministic_and_sized() -> None:
    a, b = generate(1000), generate(1000)
    assert [s.turns for s in a] == [s.turns for s in b]
    assert [s.turns for s in generate(1001, 3, 3)] != [s.turns for s in a[:3] + a[120:123]]
    assert Counter(s.kind for s in a) == {"odr": 120, "vdr": 80}


def test_templates_per_update_kind() -> None:
    for templates in (DECIDE, CHANGE, PLAIN, PARAPHRASE):
        assert len(set(templates)) >= 10
    for t in TOPICS:
        assert not (words(t.aliases[0]) & words(t.aliases[1]))
        assert not any(words(a) & words(t.canon) for a in t.aliases)


def test_the_unseen_template_set_loads_and_generates_the_same_truth_shape() -> None:
    """The helper-written wording (never tuned on): every template formats, and the generator builds the same
    scenarios from it as from the dev set (the wording differs, and with it the random draws that follow)."""
    unseen = load_templates("unseen")
    for kind in ("restate", "change", "plain", "paraphrase"):
        assert len(set(unseen.of(kind))) >= 10
        for t in unseen.of(kind):
            t.format(v="X", canon="c", Canon="C", old="O", alias="a", Alias="A")
    # written independently: a natural sentence may coincide ("{Canon} is {v}."), the sets mostly differ
    assert len(set(unseen.decide + unseen.change + unseen.plain) & set(DECIDE + CHANGE + PLAIN)) <= 3
    dev, new = generate(1000, 12, 8), generate(1000, 12, 8, unseen)
    assert [s.kind for s in dev] == [s.kind for s in new] and all(s.chains and s.questions for s in new)
    assert [s.turns[0].text for s in dev] != [s.turns[0].text for s in new]
    with pytest.raises(ValueError, match="unknown template set"):
        load_templates("tuned")


def test_supersession_truth_is_consistent() -> None:
    scenarios = generate(1000)
    versions = Counter()
    for sc in scenarios:
        refs = [t.ref for t in sc.turns]
        assert len(refs) == len(set(refs))
        assert [epoch(t.time) for t in sc.turns] == sorted(epoch(t.time) for t in sc.turns)
        values = [v.value for c in sc.chains for v in c.versions]
        assert len(values) == len(set(values))  # no value repeats inside a scenario
        by_ref = {st.turn.ref: st for st in sc.statements}
        for chain in sc.chains:
            for v in chain.versions:
                assert v.value in by_ref[v.ref].turn.text
        for q in sc.questions:
            if q.kind == "odr":
                versions[len(q.chain.versions)] += 1
            if q.kind == "asof":
                held = q.chain.held_at(q.as_of)
                assert held is not None and held < len(q.chain.versions) - 1
            if q.kind == "vdr":
                assert "@" in q.chain.key and len(q.chain.versions) == 1
    assert set(versions) == {2, 3, 4, 5, 6}


def test_update_wordings_are_all_present() -> None:
    scenarios = generate(1000)
    kinds = Counter(q.update_kind for sc in scenarios for q in sc.questions if q.kind == "odr")
    assert kinds == {"restate": 30, "change": 30, "plain": 30, "paraphrase": 30}
    assert sum(q.different_speaker for sc in scenarios for q in sc.questions if q.kind == "odr") == 40
    vdr = [q for sc in scenarios for q in sc.questions if q.kind == "vdr"]
    assert Counter(q.update_kind for q in vdr) == {"change": 40, "plain": 40}


def test_paraphrase_updates_share_no_word_with_the_replaced_decision() -> None:
    checked = 0
    for sc in generate(1000):
        last: dict[str, tuple[str, str]] = {}
        for st in sc.statements:
            if st.chain is None:
                continue
            if st.kind == "paraphrase":
                prev_text, prev_value = last[st.chain]
                shared = (words(st.turn.text) - words(st.value or "")) & (words(prev_text) - words(prev_value))
                assert not shared, (st.turn.text, prev_text)
                checked += 1
            last[st.chain] = (st.turn.text, st.value or "")
    assert checked > 30


def test_vdr_scope_a_is_stated_first_and_survives() -> None:
    for sc in generate(1000, 0, 20):
        q = sc.questions[0]
        scope_a = q.chain.versions[0]
        other = [c for c in sc.chains if c.key.split("@")[0] == q.chain.key.split("@")[0] and c.key != q.chain.key]
        assert other and all(epoch(v.time) > epoch(scope_a.time) for c in other for v in c.versions)


def test_outcome_worlds_are_deterministic_and_consistent() -> None:
    for family in FAMILIES:
        w1, w2 = make_world(1000, family, episodes=12), make_world(1000, family, episodes=12)
        assert w1.turns == w2.turns and w1.episodes == w2.episodes
        assert len(w1.episodes) == 12
        texts = {t.ref: t.text for t in w1.turns}
        for q in w1.queries:
            roles = w1.roles(q)
            assert list(roles.values()).count("gold") == 1
            values = [v for _, v, _ in w1.versions[q.key]]
            assert len(set(values)) == len(values)
            looks = [texts[ref] for ref in w1.lookalikes.get(q.key, ())]
            for text in looks:  # a look-alike never carries the answer
                assert not any(text.endswith(f" {v}.") for v in values)
            assert len({t.split()[1] for t in looks}) == len(looks)  # nor shares a subject with another
        if family == "control":
            assert len(set(w1.episodes)) == len(w1.episodes)  # no recurrence
        else:
            assert len(set(w1.episodes)) < len(w1.episodes)
    sc = make_world(1000, "state_change")
    assert any(q.as_of for q in sc.queries) and any(q.as_of is None for q in sc.queries)
    assert any("future" in sc.roles(q).values() for q in sc.queries if q.as_of)
    assert make_world(1000, "budget_tight").budget < make_world(1000, "distractor").budget
    assert make_world(1000, "distractor").turns != make_world(1001, "distractor").turns


def test_locomo_loader_handles_quirks(tmp_path) -> None:
    conv = {
        "sample_id": "t-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a photo of a dog"}],
            "session_2_date_time": "10:00 am on 9 May, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "The cat is called Miso."}],
            "session_3_date_time": "10:00 am on 19 May, 2023",
        },
        "qa": [{"question": "What is the cat called?", "answer": "Miso", "evidence": ["D2:1; D1:1"], "category": 4},
               {"question": "Broken", "answer": "x", "evidence": ["D"], "category": 1},
               {"question": "Trick?", "adversarial_answer": "y", "evidence": ["D:1:2", "D9:9"], "category": 5}],
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(conv))
    c = load_conversation(path)
    assert [t.ref for t in c.turns] == ["D1:1", "D1:2", "D2:1"]
    assert c.turns[0].time == "2023-05-08T13:56:00Z" and c.turns[1].time == "2023-05-08T13:56:30Z"
    assert "[shares a photo: a photo of a dog]" in c.turns[1].text
    assert [q.evidence for q in c.questions] == [("D2:1", "D1:1"), ("D1:2",)]
    assert c.skipped_questions == 1 and c.dropped_evidence == 2


def test_paraphrase_study_reports_and_refuses_test_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    from evals import paraphrase_study

    paraphrase_study.main(["--seed", "0", "--scenarios", "3"])
    out = capsys.readouterr().out
    assert "paraphrase: best is true predecessor" in out and "| text >= 0.5 |" in out
    with pytest.raises(SystemExit):
        paraphrase_study.main(["--seed", "1000"])


@pytest.mark.parametrize("content", ['[{"x": 1}]', '{"conversation": 3}', "{not json"])
def test_a_malformed_locomo_file_is_a_value_error_naming_it(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json"):
        load_conversation(bad)
