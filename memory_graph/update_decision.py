"""The learned linking decision: which earlier statements a new one outdates, read by the update model.

Pure: no store, no index. The link node gathers the candidates (``memory_graph.linking.model_candidates``:
the live memories of the record's party and scope nearest by meaning) and passes them here with the model
(``memory_graph.relations.RelationModel``, injected so tests and ablations can pass another). The invariants
(same user, never a third party over the user's own facts, same scope) are applied by the gatherer
(``linking.may_link``); this module decides only what the model read.

Rule: a candidate is outdated when the model's probability that the later statement outdates it (the sum over
``relations.OUTDATES``) is at least ``THRESHOLD``; how it is outdated is the most probable of those relations:
``replaces``/``corrects`` supersede it, ``ends`` retracts it, ``forget`` retracts it as a forget request (held at
no time). A new statement supersedes, ends or forgets **one** candidate, the most probable of each (a new value
takes one slot; "I no longer have a cat" ends the cat, not the dog beside it; "strike that from the record" reads
as a forget request beside every candidate, and forgetting them all lost 8 of 11 memories in the breaker run);
copies of the chosen candidate restated word for word go with it (one claim). A statement made only of a forget
request forms no memory of its own (``Verdict.request_only``).

Why one: on the held-out writers' conversations (``training/MODEL_CARD.md``, candidate search, before ``shortlist``: 8 nearest earlier
user turns), superseding every candidate above the threshold found 0.71 of the annotated changes at precision
0.48; only the most probable one, 0.64 at precision 0.64 (the model reads each pair alone, so a look-alike slot,
"box 5's code" beside "box 3's new code", scores like the real one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memory_graph.relations import OUTDATES, Relation

THRESHOLD = 0.5
"""Outdates probability from which a candidate is taken as outdated. 0.5 is the model's own decision boundary
(its card reports the calibration); not tuned on any evaluation set."""
SUPERSEDING = ("replaces", "corrects")
READS = 4
"""Most candidates the model reads beside one new statement (see ``shortlist``)."""
MIN_SIMILARITY = 0.25
"""Cosine (packaged MiniLM) from which a candidate other than the nearest is read (see ``shortlist``)."""

Relate = Callable[[Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]], list[Relation]]
"""The injected model: ``(earlier, later)`` pairs -> one ``Relation`` each (``RelationModel.relate``)."""


@dataclass(frozen=True)
class Candidate:
    """An earlier statement the new one may outdate: its memory ``id``, ``text``, ``speaker`` (source) and
    ``date`` (its ``valid_from``, ISO-8601 UTC); ``multi``: one value of a multi-valued slot (pets, likes), which a
    new value joins and never supersedes (it may still be ended or forgotten)."""

    id: str
    text: str
    speaker: str
    date: str
    multi: bool = False


@dataclass
class Verdict:
    """What the model decided for one new statement: the ids it ``supersedes`` (replaces or corrects), ``ends``
    and ``forgets``, with each outdated candidate's ``Relation`` (``evidence``) for the link's reason."""

    supersedes: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    forgets: list[str] = field(default_factory=list)
    evidence: dict[str, Relation] = field(default_factory=dict)

    @property
    def request_only(self) -> bool:
        """Whether the statement only asked to forget (it outdated something, and only by ``forget``)."""
        return bool(self.forgets) and not self.supersedes and not self.ends

    def reason(self, memory_id: str) -> str:
        """The link reason of an outdated candidate: ``"update model: replaces (p=0.93)"``."""
        rel = self.evidence[memory_id]
        return f"update model: {_how(rel)} (p={rel.outdates:.2f})"


def _how(rel: Relation) -> str:
    """The most probable outdating relation of ``rel``."""
    return max(OUTDATES, key=rel.p)


T = TypeVar("T")


def shortlist(scored: Sequence[tuple[T, float]], reads: int = READS, min_similarity: float = MIN_SIMILARITY) -> list[T]:
    """The candidates the model reads, from ``(candidate, cosine)`` pairs nearest first: the nearest always, then
    up to ``reads - 1`` more whose cosine with the new statement is at least ``min_similarity``. Pure.

    Why: each pair read costs one run of the model (about 5 ms on one core), which made the model most of an
    ``observe`` (issue 22). On the **training** writers' annotated conversations (``training.train.candidate_search``,
    earlier user turns as candidates), reading the 8 nearest found 0.776 of the changes at precision 0.826
    (F1 0.800); this shortlist (4, 0.25) 0.762 at 0.866 (F1 0.811) and reads 38% of those pairs (annotated changes
    sit at the nearest candidate 74% of the time; a far look-alike read is mostly a false update). Chosen among
    (3, 4, 5, 8) x (none, 0.2, 0.25) and (1, 2, 3, 4) x (0.25, 0.3, 0.35, 0.4) by F1 on those writers only, then
    fewer reads; the held-out writers' figures are in ``training/MODEL_CARD.md``."""
    out: list[T] = []
    for n, (cand, similarity) in enumerate(scored):
        if len(out) >= reads:
            break
        if n == 0 or similarity >= min_similarity:
            out.append(cand)
    return out


def decide(later: Mapping[str, Any], candidates: Sequence[Candidate], relate: Relate, threshold: float = THRESHOLD,
           may_forget: bool = True) -> Verdict:
    """Read each ``(candidate, later)`` pair with ``relate`` (one call) and sort the outdated candidates
    by how they are outdated (see the module docstring). ``later``: ``{"speaker", "date", "text"}``;
    ``may_forget=False`` (a reminder: "don't forget my appointment") drops what the model read as forget requests."""
    verdict = Verdict()
    if not candidates:
        return verdict
    relations = relate([({"speaker": c.speaker, "date": c.date, "text": c.text}, later) for c in candidates])
    best: dict[str, tuple[float, int]] = {}  # supersedes / ends / forgets -> the most probable candidate of each
    for n, (cand, rel) in enumerate(zip(candidates, relations, strict=True)):
        if rel.outdates < threshold:
            continue
        how = _how(rel)
        if how == "forget" and not may_forget or how in SUPERSEDING and cand.multi:
            continue
        kind = "supersedes" if how in SUPERSEDING else "ends" if how == "ends" else "forgets"
        if kind not in best or rel.outdates > best[kind][0]:  # a tie goes to the candidate offered first (the nearest)
            best[kind] = (rel.outdates, n)
    for kind, (_, n) in best.items():
        said = _words(candidates[n].text)
        for m, cand in enumerate(candidates):  # a statement restated word for word is one claim: every copy goes
            if cand.id not in verdict.evidence and (m == n or _words(cand.text) == said and not (kind == "supersedes" and cand.multi)):
                getattr(verdict, kind).append(cand.id)
                verdict.evidence[cand.id] = relations[n]
    return verdict


def _words(text: str) -> tuple[str, ...]:
    """The words of ``text``, case-folded (punctuation and spacing ignored): what "word for word" compares."""
    return tuple(re.findall(r"\w+", text.casefold()))
