"""The shipped update model (memory_graph.relations) loads, runs, refuses bad input, and agrees with a handful of
unambiguous cases. Its quality is a benchmark (training/MODEL_CARD.md, `python -m training.train`), not a test."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from memory_graph.cli import app
from memory_graph.errors import InvalidInputError
from memory_graph.relations import (
    LABELS,
    MODEL_DIR,
    OUTDATES,
    classify,
    classify_many,
    default_model,
    pair_text,
)
from tests.cli_checks import one_error_line


def test_the_model_ships_in_the_package() -> None:
    config = json.loads((MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    assert tuple(config["labels"]) == LABELS
    assert (MODEL_DIR / "model.onnx").stat().st_size < 30 * 2**20  # int8, under 30 MB
    assert (MODEL_DIR / "tokenizer.json").exists()


def test_pair_text_is_one_format() -> None:
    a, b = pair_text({"speaker": "User", "date": "2024-01-05T10:00:00Z", "text": " I live in York "}, "we moved")
    assert a == "user, 2024-01-05: I live in York"
    assert b == "user: we moved"


@pytest.mark.parametrize("bad", ["", "   ", {"text": ""}, {"speaker": "user"}, 42, None, {"text": "x", "date": 5},
                                 "I live in \ud800 Porto", {"text": "x", "date": "not a date"},
                                 {"text": "x", "date": "99999-01-01"}, {"text": "x", "speaker": "\udc00"}])
def test_bad_sides_are_refused(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        classify(bad, "I moved to Porto")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        classify("I live in Lisbon", bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("pairs", ["ab", [("a",)], [("a", "b", "c")], {"a": "b"}, None, 5, [1], [b"ab"]])
def test_malformed_batches_are_refused(pairs: object) -> None:
    """Breaker run: these raised ValueError/TypeError from the unpacking or the tokenizer."""
    with pytest.raises(InvalidInputError):
        classify_many(pairs)  # type: ignore[arg-type]


def test_probabilities_are_a_distribution() -> None:
    rels = classify_many([("I live in Lisbon", "I moved to Porto"), ("a" * 50_000, "b " * 50_000)])
    assert len(rels) == 2
    for rel in rels:
        assert rel.label in LABELS and abs(sum(rel.probs) - 1) < 1e-4 and 0 <= rel.outdates <= 1
    assert classify_many([]) == []
    assert default_model() is default_model()  # loaded once per process


def test_a_pairs_figures_do_not_depend_on_the_other_pairs_read_with_it() -> None:
    # the int8 model scales activations by its whole input: read in one batch, a pair's figures moved with its
    # neighbours and their padding (issue 22); each pair is one run now, so the same pair always reads the same
    pair = ("I live in Lisbon", "We moved to Porto last week.")
    others = [("My locker code is 4471 and the gym is on Elm Street, near the station where I park the car.",
               "Tomorrow the team meets at ten in room 4 to plan the next two sprints of the billing project."),
              ("I drive a Civic", "I sold the Civic")]
    alone = classify_many([pair])[0].probs
    for company in ([*others, pair], [pair, others[0]], [others[1], pair, others[0]]):
        rels = classify_many(company)
        assert rels[company.index(pair)].probs == alone


UNAMBIGUOUS = [
    ({"date": "2024-01-05", "text": "I work at Northwind as a data analyst."},
     {"date": "2024-09-01", "text": "I quit Northwind and started at Contoso this week."}, True),
    ({"date": "2023-03-01", "text": "My gym membership is 35 euros a month."},
     {"date": "2024-02-01", "text": "The gym raised the membership to 42 euros a month."}, True),
    ({"date": "2024-05-01", "text": "Please remember my locker code is 4471."},
     {"date": "2024-05-09", "text": "Forget my locker code, delete it from your memory please."}, True),
    ({"date": "2024-01-05", "text": "I live in York with my partner."},
     {"date": "2024-03-01", "text": "My sister just moved to Leeds for her new job."}, False),
    ({"date": "2024-01-05", "text": "We have a beagle called Biscuit."},
     {"date": "2024-02-11", "text": "Should we get a second dog at some point?"}, False),
]


@pytest.mark.parametrize("earlier,later,outdates", UNAMBIGUOUS)
def test_agrees_with_unambiguous_cases(earlier: dict[str, str], later: dict[str, str], outdates: bool) -> None:
    rel = classify_many([(earlier, later)])[0]
    assert (rel.outdates >= 0.5) is outdates, (rel.label, rel.outdates)
    assert (rel.label in OUTDATES) is outdates


def test_cli_relate() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["relate", "I work at Northwind.", "I left Northwind and joined Contoso.", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["label"] in LABELS and set(out["probabilities"]) == set(LABELS)


def test_cli_relate_bad_input_is_one_error_line() -> None:
    for args, needle in ((["relate", "", "x"], "text"), (["relate", "a", "b", "--later-date", "not a date"], "date")):
        proc = subprocess.run([sys.executable, "-m", "memory_graph.cli", *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2
        one_error_line(proc.stderr, needle)
