"""Deterministic judges: pure functions from a recalled context and the generator's (or dataset's) truth to a
verdict. Each one can fail, and ``tests/test_evals_judges.py`` shows it failing on hand-made contexts.

Protocols (our own implementations of published definitions, never their code):

- ODR / VDR (EvoMem-MCP): ODR = share of questions whose recalled context presents a replaced decision as
  current; VDR = valid decisions missing from the recalled context (or marked replaced).
- Link precision / recall: supersession links a system made against the generator's truth.
- Evidence recall (LoCoMo, Maharana et al., 2024, "Evaluating Very Long-Term Conversational Memory of LLM
  Agents"): share of a question's evidence turns (``dia_id``) found in the provenance of the recalled items.
- Simulated reader (ReMem outcome worlds): a position-biased or timestamp-aware reader that succeeds when it
  picks the gold fact, distracted by look-alikes and by irrelevant context.

How an item is tied to the truth: by its refs (the provenance the system reports), which is exact; an item
with no known ref falls back to its text: it stands for a version whose value it names (the newest such
version when it names several, as in "we replaced X with Y").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evals.common import epoch
from evals.systems import RecalledItem

# ---------------------------------------------------------------------------------------------------------
# Decision histories (ODR / VDR / as_of)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """One version of a decision: the statement's ref, the value it sets, and when it was stated (ISO UTC)."""

    ref: str
    value: str
    time: str


@dataclass(frozen=True)
class Chain:
    """The versions of one decision key (topic within a scope), oldest first. Each version replaces the
    previous one; the last is current."""

    key: str
    versions: tuple[Version, ...]

    def held_at(self, as_of: str | None) -> int | None:
        """Index of the version held at ``as_of`` (the latest stated at or before it); None before the first.
        ``as_of=None`` means now (the last version)."""
        if as_of is None:
            return len(self.versions) - 1
        limit = epoch(as_of)
        held = None
        for i, v in enumerate(self.versions):
            if epoch(v.time) <= limit:
                held = i
        return held


def presented_current(item: RecalledItem, as_of: str | None = None) -> bool:
    """Whether the context presents ``item`` as held true (now, or at ``as_of``).

    Now: any status but ``superseded``/``retracted`` (an unmarked item, as every baseline shows, is presented
    as current; ``contested`` is not a denial). At ``as_of``: not retracted, not marked superseded without an
    end date, dated at or before ``as_of``, and not ended (``valid_to``) at or before ``as_of``.
    """
    if item.status == "retracted":
        return False
    if as_of is None:
        return item.status != "superseded"
    if item.status == "superseded" and not item.valid_to:
        return False
    limit = epoch(as_of)
    if item.time and epoch(item.time) > limit:
        return False
    return not (item.valid_to and epoch(item.valid_to) <= limit)


def marked_doubtful(item: RecalledItem, as_of: str | None = None) -> bool:
    """Whether the context casts any doubt on ``item`` holding (now, or at ``as_of``): not presented current,
    or marked ``contested``, or given an end date (``valid_to``) at or before the question's time. The VDR
    judge counts a still-valid decision marked this way as hidden (issue 11: honest uncertainty must not buy
    ODR with hidden decisions)."""
    if not presented_current(item, as_of) or item.status == "contested":
        return True
    if not item.valid_to:
        return False
    return as_of is None or epoch(item.valid_to) <= epoch(as_of)


def _mentions(text: str, value: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(value.lower()) + r"(?![\w-])", text.lower()) is not None


def version_of(item: RecalledItem, chain: Chain, known_refs: set[str]) -> int | None:
    """Which version of ``chain`` the item stands for, or None.

    By refs when the item has a ref the scenario knows (when refs name several versions, the one whose value
    the text names, else the newest); otherwise by the newest version whose value the text names.
    """
    by_ref = [i for i, v in enumerate(chain.versions) if v.ref in item.refs]
    if by_ref:
        named = [i for i in by_ref if _mentions(item.text, chain.versions[i].value)]
        return max(named) if len(named) == 1 else max(by_ref)
    if any(r in known_refs for r in item.refs):
        return None  # a known statement of something else
    named = [i for i, v in enumerate(chain.versions) if _mentions(item.text, v.value)]
    return max(named) if named else None


@dataclass(frozen=True)
class DecisionVerdict:
    """Verdict of one question about ``chain`` at ``as_of`` (None = now).

    Attributes:
        stale: a replaced version is presented as current (the ODR event, strict reading).
        stale_dated: the newest-dated version presented as current is a replaced one (what a reader who
            trusts dates concludes); equals ``stale`` when the context shows no dates.
        current_found: the version held at ``as_of`` is in the context, presented as current.
        hidden: the held version is missing or marked replaced (the VDR event) = not ``current_found``.
        future_leak: a version stated after ``as_of`` is presented as current at ``as_of``.
    """

    stale: bool
    stale_dated: bool
    current_found: bool
    hidden: bool
    future_leak: bool


def judge_decision(
    items: Sequence[RecalledItem],
    chain: Chain,
    *,
    as_of: str | None = None,
    shows_dates: bool = False,
    known_refs: Iterable[str] = (),
    strict: bool = False,
) -> DecisionVerdict:
    """Judge a recalled context against one decision chain (ODR, VDR and as_of questions).

    Args:
        items: the recalled items in the order shown.
        chain: the truth for the asked key.
        as_of: the question's time (None = now).
        shows_dates: the context shows each item's date (enables the date-reading interpretation).
        known_refs: every ref of the scenario (an item citing one that is not in ``chain`` is about something
            else, whatever its text says).
        strict: the held version counts as found only when shown with no doubt at all (``marked_doubtful``);
            the VDR questions use it.
    Raises:
        ValueError: ``as_of`` precedes the chain's first version (nothing held: not a valid question).
    """
    held = chain.held_at(as_of)
    if held is None:
        raise ValueError(f"nothing of {chain.key!r} is held at {as_of}")
    known = set(known_refs) | {v.ref for v in chain.versions}
    shown: list[tuple[int, RecalledItem]] = []
    for it in items:
        idx = version_of(it, chain, known)
        if idx is not None and presented_current(it, as_of):
            shown.append((idx, it))
    stale = any(i < held for i, _ in shown)
    current_found = any(i == held and not (strict and marked_doubtful(it, as_of)) for i, it in shown)
    future_leak = any(i > held for i, _ in shown)
    if shows_dates and shown:

        def date_of(entry: tuple[int, RecalledItem]) -> tuple[int, int]:
            i, it = entry
            return (epoch(it.time) if it.time else epoch(chain.versions[i].time), i)

        newest = max(shown, key=date_of)[0]
        stale_dated = newest < held
    else:
        stale_dated = stale
    return DecisionVerdict(stale, stale_dated, current_found, not current_found, future_leak)


@dataclass(frozen=True)
class LinkScores:
    """Supersession links against the truth. ``precision`` is None when no link was made."""

    precision: float | None
    recall: float
    true_positives: int
    predicted: int
    replaced: int


def link_scores(predicted: set[tuple[str, str]], chains: Sequence[Chain]) -> LinkScores:
    """Precision and recall of supersession links.

    A predicted link ``(new_ref, old_ref)`` is right when both refs are versions of the same chain and the old
    one was stated earlier (a true replacement, not necessarily the immediate predecessor). Recall is the share
    of replaced versions (all but the last of each chain) that some right link marks as replaced. Links that
    touch refs outside every chain (fillers, other scopes) are wrong.
    """
    where: dict[str, tuple[int, int]] = {}
    for c, chain in enumerate(chains):
        for i, v in enumerate(chain.versions):
            where[v.ref] = (c, i)
    right = {(n, o) for n, o in predicted if n in where and o in where and where[n][0] == where[o][0] and where[o][1] < where[n][1]}
    replaced = sum(len(ch.versions) - 1 for ch in chains)
    covered = {o for _, o in right}
    precision = len(right) / len(predicted) if predicted else None
    recall = len(covered) / replaced if replaced else 1.0
    return LinkScores(precision, recall, len(right), len(predicted), replaced)


# ---------------------------------------------------------------------------------------------------------
# LoCoMo evidence recall
# ---------------------------------------------------------------------------------------------------------

_DIA = re.compile(r"D:?(\d+):(\d+)")


def normalize_evidence(evidence: Iterable[str]) -> list[str]:
    """LoCoMo evidence ids as ``D<session>:<turn>``; splits ``"D8:6; D9:17"``, mends ``"D:11:26"``; drops
    anything without a session and turn number (e.g. a bare ``"D"``)."""
    out: list[str] = []
    for raw in evidence:
        for m in _DIA.finditer(str(raw)):
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class EvidenceVerdict:
    """``found`` of ``total`` evidence turns appear in the provenance of the recalled items."""

    found: int
    total: int

    @property
    def recall(self) -> float:
        return self.found / self.total if self.total else 0.0

    @property
    def all_found(self) -> bool:
        return self.total > 0 and self.found == self.total


def judge_evidence(items: Sequence[RecalledItem], evidence: Sequence[str]) -> EvidenceVerdict:
    """Evidence recall of one LoCoMo question: which of its ``dia_id``s the recalled items cite as refs."""
    wanted = normalize_evidence(evidence)
    cited = {r for it in items for r in it.refs}
    return EvidenceVerdict(sum(1 for e in wanted if e in cited), len(wanted))


# ---------------------------------------------------------------------------------------------------------
# Simulated reader (ReMem outcome worlds)
# ---------------------------------------------------------------------------------------------------------

ATTEND_FIRST = 0.95  # chance the reader attends to the first item
ATTEND_DECAY = 0.8  # each later position is attended with this factor less
ATTEND_FLOOR = 0.1  # no position is attended with less than this
LOOKALIKE_CONFUSION = 0.5  # chance an attended look-alike is taken for the answer
IRRELEVANT_PENALTY = 0.04  # chance per attended irrelevant item that the reader gets lost
IRRELEVANT_CAP = 0.4

ROLES = ("gold", "stale", "future", "lookalike", "irrelevant")
READERS = ("position", "timestamp")


@dataclass(frozen=True)
class ReaderItem:
    """What the reader sees of one item: its role in the truth (hidden from a real reader; it drives the
    simulation), the date shown (None when the context shows no dates), and whether it is presented as current."""

    role: str
    time: str | None
    current: bool = True


@dataclass(frozen=True)
class ReaderDraws:
    """Uniform draws of one episode, shared by all systems (common random numbers for paired comparisons):
    ``attend[i]`` and ``pick[i]`` for position i, and ``lost`` for the irrelevant-context failure."""

    attend: tuple[float, ...]
    pick: tuple[float, ...]
    lost: float


@dataclass(frozen=True)
class ReaderVerdict:
    """The reader's choice (index into the items, or None) and whether it is the gold fact."""

    picked: int | None
    success: bool
    reason: str


def attention(position: int) -> float:
    """Probability the reader attends to the item at ``position`` (0-based)."""
    return max(ATTEND_FLOOR, ATTEND_FIRST * ATTEND_DECAY**position)


def simulated_reader(
    items: Sequence[ReaderItem], mode: str, draws: ReaderDraws, as_of: str | None = None
) -> ReaderVerdict:
    """Read a context and answer.

    Both modes attend to item ``i`` when ``draws.attend[i] < attention(i)``, skip items marked as not current,
    and take an attended look-alike for a match when ``draws.pick[i] < LOOKALIKE_CONFUSION``.

    - ``position``: answers with the first attended match (gold, stale, future or confused look-alike).
    - ``timestamp``: among attended matches, answers with the newest shown date (at or before ``as_of`` when
      asked about the past); without dates it falls back to the first match.

    Then, with probability ``min(IRRELEVANT_CAP, IRRELEVANT_PENALTY * attended irrelevant items)``, the reader
    gets lost in irrelevant context and fails. Success = the answer is the gold fact.

    Raises:
        ValueError: unknown mode or role, or fewer draws than items.
    """
    if mode not in READERS:
        raise ValueError(f"unknown reader mode {mode!r}")
    if len(draws.attend) < len(items) or len(draws.pick) < len(items):
        raise ValueError("fewer draws than items")
    matches: list[int] = []
    irrelevant = 0
    for i, it in enumerate(items):
        if it.role not in ROLES:
            raise ValueError(f"unknown role {it.role!r}")
        if draws.attend[i] >= attention(i):
            continue
        if it.role == "irrelevant":
            irrelevant += 1
            continue
        if not it.current:
            continue
        if it.role == "lookalike" and draws.pick[i] >= LOOKALIKE_CONFUSION:
            continue
        matches.append(i)
    if not matches:
        return ReaderVerdict(None, False, "nothing attended")
    picked = matches[0]
    if mode == "timestamp" and all(items[i].time for i in matches):
        limit = epoch(as_of) if as_of else None
        dated = [i for i in matches if limit is None or epoch(items[i].time or "") <= limit] or matches
        picked = max(dated, key=lambda i: (epoch(items[i].time or ""), -i))
    if items[picked].role != "gold":
        return ReaderVerdict(picked, False, f"picked {items[picked].role}")
    if draws.lost < min(IRRELEVANT_CAP, IRRELEVANT_PENALTY * irrelevant):
        return ReaderVerdict(picked, False, "lost in irrelevant context")
    return ReaderVerdict(picked, True, "gold")
