"""Updates in the forms people use (issue 11): an ending event retracts what it names, a role held by one
person at a time changes hands, "call me X" renames. Rule tests run without the embedder; one end-to-end
test per form uses the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_graph import Memory
from memory_graph.extract.rules import WE, extract
from memory_graph.linking import _names
from memory_graph.records import Observation


def _records(text: str, speaker: str = "user") -> list[tuple[str, str, str, int]]:
    obs = Observation(id="o1", text=text, speaker=speaker, source=speaker, time="2025-01-01T00:00:00Z")
    return [(r.subject, r.attribute, r.value, r.polarity) for r in extract(obs)]


@pytest.mark.parametrize(("text", "thing"), [
    ("I sold the Civic.", "the Civic"), ("Rex died last week.", "Rex"), ("Kiki passed away.", "Kiki"),
    ("We retired Jenkins in March.", "Jenkins"), ("I cancelled the Netflix subscription.", "the Netflix subscription"),
    ("My grandma passed away last year.", "grandma"), ("I just sold my old bike to Sam.", "my old bike"),
])
def test_an_ending_event_is_a_retraction_of_what_the_speaker_ended(text: str, thing: str) -> None:
    [(subject, _, value, polarity)] = _records(text)
    assert subject == "user" and polarity == -1 and value == thing


@pytest.mark.parametrize("text", ["Caroline's dog died last week.", "Melanie said her cat died.",
                                  "The old server was retired by the infra team."])
def test_an_ending_that_is_not_the_speakers_is_no_retraction_of_theirs(text: str) -> None:
    assert all(p > 0 or subject != "user" for subject, _, _, p in _records(text))


@pytest.mark.parametrize("text", ["I returned from Lisbon yesterday.", "I bought a Honda Civic.",
                                  "We moved the standup to room 4."])
def test_not_an_ending_event(text: str) -> None:
    records = _records(text)
    assert records and all(p > 0 for *_, p in records)


@pytest.mark.parametrize(("text", "name", "role"), [
    ("So Priya is now the on-call owner.", "Priya", "on-call owner"),
    ("Ana is our treasurer.", "Ana", "treasurer"),
    ("Marco Rossi is the new plot coordinator.", "Marco Rossi", "plot coordinator"),
])
def test_a_role_with_the_definite_article_is_the_groups_slot(text: str, name: str, role: str) -> None:
    assert _records(text) == [(WE, role, name, 1)]


def test_a_role_with_an_indefinite_article_stays_the_persons_trait() -> None:
    assert all(subject != WE for subject, *_ in _records("Ana is a nurse."))


@pytest.mark.parametrize("text", ["Today is the deadline.", "This is the kitchen.", "It is the best option."])
def test_a_common_word_is_no_role_holder(text: str) -> None:
    assert [value for _, _, value, _ in _records(text)] == [text]  # a free-text note, not "the deadline" = "Today"


def test_call_me_is_the_speakers_name() -> None:
    assert _records("Call me Marcus.") == [("user", "name", "Marcus", 1)]
    assert _records("Please call me Jo!", speaker="bob") == [("bob", "name", "Jo", 1)]


def test_names_are_capitalised_or_numbered_tokens_anywhere() -> None:
    assert _names("Rex died last week") == {"rex"}
    assert _names("dog named Rex") == {"rex"}
    assert _names("I sold the Civic") == {"civic"}
    assert _names("The flat 3B is rented") == {"3b"}
    assert _names("the user drinks coffee") == set()


@pytest.mark.parametrize(("before", "after", "ended", "kept"), [
    (["I drive a Honda Civic."], "I sold the Civic.", "Civic", []),
    (["I have a dog named Rex."], "Rex died last week.", "Rex", []),
    (["I have two cats, Tom and Kiki."], "Kiki passed away.", "Kiki", ["Tom"]),
    (["I use Notion for notes."], "I stopped using Notion.", "Notion", []),
])
def test_the_named_thing_ends_and_nothing_else(tmp_path: Path, before: list[str], after: str, ended: str, kept: list[str]) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        for i, text in enumerate(before):
            mem.observe(text, time=f"2025-01-0{i + 1}T00:00:00")
        mem.observe(after, time="2025-03-01T00:00:00")
        rows = mem.store.ledger.query("SELECT text, value, status FROM memories WHERE namespace='u' AND polarity > 0")
        assert all(r["status"] == "retracted" for r in rows if ended in r["value"]), [dict(r) for r in rows]
        assert all(r["status"] == "current" for r in rows if any(k in r["value"] for k in kept))


def test_a_role_changes_hands_and_a_name_is_replaced(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        dana = mem.observe("Dana is the on-call owner.", time="2025-01-01T00:00:00")
        priya = mem.observe("So Priya is now the on-call owner.", time="2025-02-01T00:00:00")
        assert priya[0]["action"] == "supersede" and dana[0]["id"] in priya[0]["targets"]
        marc = mem.observe("My name is Marc.", time="2025-01-01T00:00:00")
        marcus = mem.observe("Call me Marcus.", time="2025-02-01T00:00:00")
        assert marcus[0]["action"] == "supersede" and marc[0]["id"] in marcus[0]["targets"]
