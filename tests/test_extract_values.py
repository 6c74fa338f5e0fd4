"""The rule extractor's values and filler (issue 20 item 5; breaker run)."""

from __future__ import annotations

import pytest

from memory_graph.extract.rules import clean_value, extract, phatic
from memory_graph.records import Observation


@pytest.mark.parametrize(("raw", "value"), [("$95,000", "$95,000"), ("1,200 mg", "1,200 mg"), ("Porto by the way", "Porto"),
                                            ("Porto, Portugal", "Porto"), ("called Tofu", "Tofu"), ("named Rex", "Rex")])
def test_values_are_the_thing_not_its_frame(raw: str, value: str) -> None:
    assert clean_value(raw) == value


@pytest.mark.parametrize(("text", "filler"), [
    ("That's all for tonight, thanks.", True), ("ok cool, talk later!", True), ("Night!", True), ("thanks so much!! 🙏", True),
    ("My cat is sick.", False), ("I moved to Porto.", False), ("ok 5pm then", False), ("Thanks, the rent is 900 now.", False),
])
def test_phatic_turns_are_told_from_statements(text: str, filler: bool) -> None:
    assert phatic(text) is filler


def test_filler_forms_no_memory_and_a_pet_name_is_its_value() -> None:
    def obs(text: str) -> Observation:
        return Observation(id="o1", text=text, speaker="user", source="user", time="2024-01-01T00:00:00+00:00")

    assert extract(obs("That's all for tonight, thanks.")) == []
    (cat,) = extract(obs("My new cat is called Tofu."))
    assert cat.value == "Tofu"


@pytest.mark.parametrize(("text", "value"), [
    ("My address is Flat 4, 221B Baker Street, London.", "Flat 4, 221B Baker Street, London"),
    ("My home address is 12 Elm Road, Leeds, but I am moving soon.", "12 Elm Road, Leeds"),
    ("My email address is ana@example.org, use it.", "ana@example.org"),
    ("My home is in Turku, Finland.", "Turku"),
])
def test_a_postal_address_keeps_its_commas(text: str, value: str) -> None:
    """N7 (sixth breaker run, issue 21): a comma ended every value, so "Flat 4, 221B Baker Street" was stored as
    "Flat 4" and a hard delete of the address left the street where another message quoted it."""
    record = extract(Observation(id="o1", text=text, speaker="user", source="user", time="2024-01-01T00:00:00+00:00"))[0]
    assert record.value == value
