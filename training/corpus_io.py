"""Reading the update corpus (``training/corpus/``): labelled pairs and annotated conversations.

Layout (the data card, ``training/DATA_CARD.md``): one folder per writer (``w01`` ... and ``pilot``), each with
``pairs.jsonl`` (one labelled pair a line) and ``conversations/*.json`` (whole chats, each user turn annotated
with the earlier turns it replaces, corrects, ends or asks to forget).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"
CHANGE_RELATIONS = ("replaces", "corrects", "ends", "forget")


@dataclass(frozen=True)
class Pair:
    """One labelled pair: ``earlier`` and ``later`` are ``{"speaker", "date", "text"}``; ``origin`` says where it
    came from (``pairs`` or ``conversation:<file>``)."""

    earlier: dict[str, str]
    later: dict[str, str]
    label: str
    writer: str
    domain: str
    origin: str = "pairs"


@dataclass
class Conversation:
    """One annotated conversation: ``turns`` as written (``speaker``, ``text``, ``time``, ``relations``)."""

    name: str
    writer: str
    domain: str
    turns: list[dict[str, Any]]
    questions: list[dict[str, Any]] = field(default_factory=list)
    path: Path | None = None


def writers(corpus: Path = CORPUS) -> list[str]:
    """The writer folders of the corpus, sorted."""
    return sorted(p.name for p in corpus.iterdir() if p.is_dir() and any(p.glob("pairs*.jsonl")))


def read_pairs(corpus: Path = CORPUS) -> list[Pair]:
    """Every labelled pair of every writer's ``pairs.jsonl`` (the pilot's writers are ``pilot-a``/``pilot-b``)."""
    out: list[Pair] = []
    for writer in writers(corpus):
        for path in sorted((corpus / writer).glob("pairs*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                who = str(row.get("writer") or writer)
                if writer == "pilot":
                    who = f"pilot-{path.stem.rsplit('_', 1)[-1]}"
                out.append(Pair(earlier=_side(row["earlier"]), later=_side(row["later"]), label=str(row["label"]),
                                writer=who, domain=str(row.get("domain", ""))))
    return out


def _side(raw: dict[str, Any]) -> dict[str, str]:
    return {"speaker": str(raw.get("speaker") or "user"), "date": str(raw.get("date") or "")[:10], "text": str(raw["text"])}


def read_conversations(corpus: Path = CORPUS) -> list[Conversation]:
    """Every annotated conversation of the corpus, by writer then file name."""
    out = []
    for writer in writers(corpus):
        for path in sorted((corpus / writer / "conversations").glob("*.json")):
            raw = json.loads(path.read_text(encoding="utf-8"))
            out.append(Conversation(name=f"{writer}/{path.stem}", writer=writer, domain=str(raw.get("domain", "")),
                                    turns=list(raw["turns"]), questions=list(raw.get("questions") or []), path=path))
    return out


def turn_side(turn: dict[str, Any]) -> dict[str, str]:
    """A conversation turn as one side of a pair."""
    return {"speaker": str(turn.get("speaker") or "user"), "date": str(turn.get("time") or "")[:10], "text": str(turn["text"])}


def changes(conv: Conversation) -> Iterator[tuple[int, int, str]]:
    """``(target turn, changing turn, relation)`` for every annotation of ``conv``."""
    for i, turn in enumerate(conv.turns):
        for rel in turn.get("relations") or []:
            target = rel.get("target")
            if rel.get("relation") in CHANGE_RELATIONS and isinstance(target, int) and 0 <= target < i:
                yield target, i, str(rel["relation"])


def all_texts(corpus: Path = CORPUS) -> Iterator[str]:
    """Every text of the corpus (pairs' sides and conversation turns), for the overlap test."""
    for pair in read_pairs(corpus):
        yield pair.earlier["text"]
        yield pair.later["text"]
    for conv in read_conversations(corpus):
        for turn in conv.turns:
            yield str(turn["text"])
