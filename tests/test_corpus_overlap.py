"""The update corpus (training/corpus/) shares no 8-word run with any evaluation file (issue 20).

Evaluation files: the unseen conversations (evals/unseen/, every set), the supersession suite's unseen templates,
the dev templates of evals/supersession.py, and LoCoMo (../shared/data/locomo or $MEMORY_GRAPH_LOCOMO, when
present). Words are lower-cased runs of letters, digits and apostrophes; a template's {placeholders} split runs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from training.corpus_io import CORPUS, all_texts, read_conversations, read_pairs, writers

ROOT = Path(__file__).resolve().parents[1]
RUN = 8
_WORD = re.compile(r"[a-z0-9']+")


def shingles(text: str, n: int = RUN) -> set[tuple[str, ...]]:
    """The n-word runs of ``text``; a ``{placeholder}`` breaks a run."""
    out: set[tuple[str, ...]] = set()
    for part in re.split(r"\{[^}]*\}", text.lower()):
        words = _WORD.findall(part)
        out.update(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return out


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def evaluation_texts() -> Iterator[str]:
    for path in sorted((ROOT / "evals" / "unseen").rglob("*.json")):
        yield from _strings(json.loads(path.read_text(encoding="utf-8")))
    yield from _strings(json.loads((ROOT / "evals" / "supersession_unseen_templates.json").read_text(encoding="utf-8")))
    yield (ROOT / "evals" / "supersession.py").read_text(encoding="utf-8")  # the dev templates are literals there
    locomo = Path(os.environ.get("MEMORY_GRAPH_LOCOMO") or ROOT.parent / "shared" / "data" / "locomo")
    for path in sorted(locomo.glob("*.json")) if locomo.is_dir() else []:
        yield from _strings(json.loads(path.read_text(encoding="utf-8")))


def test_shingles_split_words_and_placeholders() -> None:
    assert ("one", "two", "three") in shingles("One two, three!", 3)
    assert not shingles("a b c {x} d e f", 4)


def test_no_eight_word_run_of_an_evaluation_file_is_in_the_corpus() -> None:
    evaluation: set[tuple[str, ...]] = set()
    for text in evaluation_texts():
        evaluation |= shingles(text)
    assert len(evaluation) > 10_000  # the evaluation files were read
    shared = {}
    for text in all_texts():
        for run in shingles(text) & evaluation:
            shared[" ".join(run)] = text
    assert not shared, f"{len(shared)} 8-word runs shared with evaluation data, e.g. {list(shared.items())[:3]}"


def test_the_corpus_is_what_the_data_card_says() -> None:
    """At least 15 writers besides the pilot, 6,000 pairs beyond the pilot's, no label under 5%, 60 conversations."""
    if not (CORPUS / "pilot").exists():
        pytest.fail("training/corpus/pilot is missing")
    pairs = [p for p in read_pairs() if not p.writer.startswith("pilot")]
    labels = {p.label for p in pairs}
    assert len([w for w in writers() if w != "pilot"]) >= 15
    assert len(pairs) >= 6_000
    for label in labels:
        assert sum(p.label == label for p in pairs) / len(pairs) >= 0.05, label
    assert len(read_conversations()) >= 60
