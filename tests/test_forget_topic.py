""""Forget what I told you about X": a request to forget a topic, whoever it is about (issue 11; the unseen set 3
showed every such request ignored). Rule tests and linking tests with the fake embedder (no model load)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import StemBagEmbedder

from memory_graph import Memory
from memory_graph.extract import rules
from memory_graph.records import Observation


def _records(text: str) -> list[tuple[bool, str, str]]:
    obs = Observation(id="o1", text=text, speaker="user", source="user", time="2025-01-01T00:00:00Z")
    return [(r.forget, r.attribute, r.value) for r in rules.extract(obs)]


@pytest.mark.parametrize(("text", "topic"), [
    ("please forget what I told you about Paddy's hip.", "Paddy's hip"),
    ("also, can you forget what i said about why tom's leaving, the gambling thing.", "why tom's leaving, the gambling thing"),
    ("Scrap the bit about Josh being made redundant, he asked me to keep it quiet.", "Josh being made redundant"),
    ("ok don't keep the stuff about my sister's divorce", "my sister's divorce"),
    ("Actually, please delete everything I mentioned regarding the lawsuit!", "the lawsuit"),
    ("disregard what I wrote about the salary", "the salary"),
])
def test_forget_about_requests_name_their_topic(text: str, topic: str) -> None:
    assert rules.withheld(text)  # never recalled raw: it would show what is to be forgotten
    forgets = [r for r in _records(text) if r[0]]
    assert forgets == [(True, rules.FORGET_TOPIC, topic)]


@pytest.mark.parametrize("text", [
    "Drop the kids at school at 8.",
    "I always forget what I said about budgets in meetings.",
    "Don't forget the dentist on Friday.",
    "We talked about the stuff about Rome.",
    "Remember what I told you about Paddy's hip?",
])
def test_other_sentences_are_not_forget_requests(text: str) -> None:
    assert not rules.withheld(text)
    assert not any(r[0] for r in _records(text))


@pytest.fixture()
def fake_mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "s", user_id="niamh") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        yield mem


def _current(mem: Memory) -> list[str]:
    return [r["text"] for r in mem.inspect()["recent"] if r["status"] == "current"]


def test_the_topic_goes_and_the_rest_of_the_note_stays(fake_mem: Memory) -> None:
    fake_mem.observe("The grant came through for the new engine. Paddy is having a hip operation.",
                     time="2025-03-01T10:00:00Z")
    fake_mem.observe("Sam says Paddy is having a hip operation.", speaker="Sam", time="2025-03-02T10:00:00Z")
    before = _current(fake_mem)
    assert any("hip" in t for t in before)
    out = fake_mem.observe("please forget what I told you about Paddy's hip.", time="2025-03-05T10:00:00Z")
    assert [a["action"] for a in out] == ["forget"] and len(out[0]["targets"]) == 1
    after = _current(fake_mem)
    mine = [t for t in after if "Sam" not in t]
    assert mine and not any("hip" in t for t in mine)  # the user's statement on the topic is gone
    assert any("grant came through" in t for t in mine)  # what else the note said stays (a redacted memory)
    assert any("Sam says" in t for t in after)  # another speaker's statement is not the user's to forget
    assert not any("forget" in t for t in after)  # the request itself is no memory
    hits = fake_mem.recall("What is wrong with Paddy's hip?").items
    assert not any("hip" in it.text and "Sam" not in it.text for it in hits)
    # held at no time: history and as_of never show the forgotten sentence either
    then = fake_mem.recall("Paddy hip", as_of="2025-03-03T00:00:00Z", include_history=True).items
    assert not any("hip" in it.text and "Sam" not in it.text for it in then)


def test_a_topic_nobody_mentioned_forgets_nothing(fake_mem: Memory) -> None:
    fake_mem.observe("Training is on Wednesdays at 7pm.", time="2025-03-01T10:00:00Z")
    out = fake_mem.observe("forget what I said about the lawsuit", time="2025-03-02T10:00:00Z")
    assert out[0]["action"] == "forget" and out[0]["targets"] == []
    assert _current(fake_mem) == ["Training is on Wednesdays at 7pm."]


def test_a_topic_with_a_name_needs_its_other_words(fake_mem: Memory) -> None:
    """Breaker run: "about Paddy's hip" also retracted "Paddy's birthday is on 9 June"."""
    fake_mem.observe("Paddy's birthday is on 9 June.", time="2025-03-01T10:00:00Z")
    fake_mem.observe("I was born in Berlin.", time="2025-03-01T11:00:00Z")
    fake_mem.observe("Paddy is having a hip operation.", time="2025-03-01T12:00:00Z")
    fake_mem.observe("please forget what I told you about Paddy's hip.", time="2025-03-05T10:00:00Z")
    fake_mem.observe("forget what I said about the Berlin office", time="2025-03-06T10:00:00Z")
    after = _current(fake_mem)
    assert "Paddy's birthday is on 9 June." in " ".join(after) and not any("hip" in t for t in after)
    assert any("born in Berlin" in t for t in after)


@pytest.mark.parametrize("text", ["forget what I said about my car", "Forget that I told you about my car."])
def test_forget_what_i_said_about_my_thing_is_forget_my_thing(text: str) -> None:
    assert [r for r in _records(text) if r[0]] == [(True, "car", "car")]
