"""The systems compared by every suite, behind one small interface.

All systems in one run see the same turns, get the same queries and the same token budget, and embed with the
same model (``memory_graph.embeddings.get_embedder()``, all-MiniLM-L6-v2). Tokens are counted with
``memory_graph.tokens.count_tokens`` (o200k_base).

- ``flat``: plain similarity memory. Every observation is one Chroma record (``"speaker: text"``); recall takes
  the nearest records and fills the budget in similarity order (a record that does not fit is skipped, the next
  one tried). What mem0 OSS or a LangGraph store search gives a user.
- ``flat_dates``: the same retrieval; the chosen records are shown with their dates, newest first (the fair
  baseline of the EvoMem-MCP ODR protocol).
- ``recency``: the nearest records re-ranked by ``0.6 * similarity + 0.25 * recency + 0.15 * frequency`` (the
  weights of the REM service), recency = ``0.5 ** (age_days / 30)`` against the newest stored time (or
  ``as_of``), frequency = ``min(1, log1p(times retrieved) / log1p(10))``; then filled to the budget.
- ``memory_graph``: this project through its public API (``from memory_graph import Memory``); the ablations
  ``memory_graph-nolink`` (``linking=False``), ``memory_graph-nolearn`` (``learning=False``) and
  ``memory_graph-topk`` (``selection="topk"``).

Each baseline owns a temporary Chroma ``PersistentClient`` (telemetry off, embeddings passed in, never Chroma's
default embedding function). ``as_of`` is honoured by every baseline as a date filter inside the Chroma query
(records observed after ``as_of`` are not candidates), which is what a user of a plain store would do.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evals.common import Turn, epoch

CANDIDATES = 100  # nearest records considered by the baselines before filling the budget
RECENCY_WEIGHTS = (0.6, 0.25, 0.15)  # similarity, recency, frequency (REM service)
RECENCY_HALF_LIFE_DAYS = 30.0
FREQUENCY_CAP = 10


@dataclass
class RecalledItem:
    """One item of a recalled context, in the order shown.

    Attributes:
        id: the system's id for the item (observation or memory id).
        text: the item's text as the system stores it.
        refs: caller refs of the observations the item came from (its provenance).
        time: the date the item carries (observation time, or ``valid_from``), ISO-8601 UTC; None if unknown.
        status: ``current`` unless the system marks it (``superseded``, ``contested``, ``retracted``).
        valid_to: end of validity (ISO) when the system says it ended, else None.
        tokens: tokens the item was charged against the budget.
        score: the system's ranking score (informational).
    """

    id: str
    text: str
    refs: tuple[str, ...] = ()
    time: str | None = None
    status: str = "current"
    valid_to: str | None = None
    tokens: int = 0
    score: float = 0.0


@dataclass
class RecallResult:
    """What one recall gave: the recall id (for feedback), the items best first, and its cost.

    ``tokens`` is the sum of item tokens charged against the budget; ``context_tokens`` counts the whole
    context string an LLM would read (fences, ids and dates included); ``latency_s`` is wall time of the call.
    ``shows_dates`` says whether the context shows each item's date to the reader.
    """

    id: str | None
    items: list[RecalledItem]
    context: str
    tokens: int
    context_tokens: int
    latency_s: float
    shows_dates: bool


class System(Protocol):
    """A memory under test. ``reset`` starts an empty memory (a new scenario)."""

    name: str
    shows_dates: bool

    def reset(self) -> None: ...

    def ingest(self, turns: Sequence[Turn]) -> None: ...

    def recall(self, query: str, budget: int, as_of: str | None = None, task: str | None = None) -> RecallResult: ...

    def feedback(self, recall_id: str | None, success: bool, used_ids: Sequence[str]) -> None: ...

    def links(self) -> set[tuple[str, str]] | None: ...

    def close(self) -> None: ...


def shared_embedder(model: str = "") -> Any:
    """The process-wide embedder (``memory_graph.embeddings.get_embedder``): ``embed(list[str])`` -> unit-norm
    float32 array ``(n, 384)``. No cache: every system pays for its own embeddings, so timings compare."""
    from memory_graph.embeddings import get_embedder

    return get_embedder(model)


def count(text: str) -> int:
    """o200k_base tokens of ``text``."""
    from memory_graph.tokens import count_tokens

    return count_tokens(text)


def fill_budget(ranked: Sequence[tuple[str, float]], tokens: dict[str, int], budget: int) -> list[tuple[str, float]]:
    """Take items in rank order while they fit in ``budget`` tokens; an item that does not fit is skipped.

    Args:
        ranked: ``(id, score)`` best first.
        tokens: id -> token cost.
        budget: token budget (> 0).
    Returns:
        the chosen ``(id, score)`` in rank order.
    """
    left = budget
    chosen = []
    for item_id, score in ranked:
        cost = tokens[item_id]
        if cost <= left:
            chosen.append((item_id, score))
            left -= cost
    return chosen


@dataclass
class _Row:
    turn: Turn
    line: str
    tokens: int
    epoch: int
    order: int


class SimilarityMemory:
    """``flat``: nearest observations by cosine similarity, filled to the budget in similarity order."""

    name = "flat"
    shows_dates = False

    def __init__(self, workdir: Path | str, embedder: Any = None) -> None:
        import chromadb
        from chromadb.config import Settings

        self._dir = Path(workdir) / self.name
        self._dir.mkdir(parents=True, exist_ok=True)
        self._client = chromadb.PersistentClient(
            path=str(self._dir), settings=Settings(anonymized_telemetry=False, allow_reset=True)
        )
        self._embedder = embedder or shared_embedder()
        self._generation = 0
        # one collection for the system's life; each scenario is a namespace (``ns``) filtered inside the query
        # (creating and deleting a collection per scenario leaks file handles in Chroma)
        self._col: Any = self._client.create_collection(
            "observations", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
        )
        self._rows: dict[str, _Row] = {}
        self._retrieved: Counter[str] = Counter()
        self._latest = 0
        self.reset()

    # -- what the reader sees -------------------------------------------------------------------------
    @staticmethod
    def document(turn: Turn) -> str:
        """The text embedded for a turn."""
        return f"{turn.speaker}: {turn.text}"

    def render(self, turn: Turn) -> str:
        """The line shown for a turn in the context."""
        return self.document(turn)

    def order(self, chosen: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """Display order of the chosen items (rank order here)."""
        return chosen

    def rank(self, candidates: list[tuple[str, float]], as_of: str | None) -> list[tuple[str, float]]:
        """Rank candidates ``(id, cosine)`` best first (by similarity here; ties by insertion order)."""
        return sorted(candidates, key=lambda c: (-c[1], self._rows[c[0]].order))

    # -- System interface ----------------------------------------------------------------------------
    def reset(self) -> None:
        self._generation += 1
        self._rows = {}
        self._retrieved = Counter()
        self._latest = 0

    def ingest(self, turns: Sequence[Turn]) -> None:
        turns = list(turns)
        if not turns:
            return
        start = len(self._rows)
        ids = [f"g{self._generation}-o{start + i}" for i in range(len(turns))]
        vectors = self._embedder.embed([self.document(t) for t in turns])
        epochs = [epoch(t.time) for t in turns]
        for lo in range(0, len(ids), 2000):
            hi = lo + 2000
            self._col.add(ids=ids[lo:hi], embeddings=vectors[lo:hi], metadatas=[{"t": e, "ns": self._generation} for e in epochs[lo:hi]])
        for item_id, turn, ep in zip(ids, turns, epochs, strict=True):
            line = self.render(turn)
            self._rows[item_id] = _Row(turn, line, count(line), ep, len(self._rows))
        self._latest = max(self._latest, max(epochs))

    def _search(self, query: str, as_of: str | None) -> list[tuple[str, float]]:
        if not self._rows:
            return []
        ns: dict[str, Any] = {"ns": self._generation}
        where = {"$and": [ns, {"t": {"$lte": epoch(as_of)}}]} if as_of else ns
        got = self._col.query(
            query_embeddings=self._embedder.embed([query]),
            n_results=min(CANDIDATES, len(self._rows)),
            where=where,
            include=["distances"],
        )
        return [(i, 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]

    def recall(self, query: str, budget: int, as_of: str | None = None, task: str | None = None) -> RecallResult:
        started = time.perf_counter()
        ranked = self.rank(self._search(query, as_of), as_of)
        chosen = fill_budget(ranked, {i: r.tokens for i, r in self._rows.items()}, budget)
        self._retrieved.update(i for i, _ in chosen)
        shown = self.order(chosen)
        items = [
            RecalledItem(
                id=i,
                text=self._rows[i].turn.text,
                refs=(self._rows[i].turn.ref,),
                time=self._rows[i].turn.time,
                tokens=self._rows[i].tokens,
                score=s,
            )
            for i, s in shown
        ]
        context = "\n".join(self._rows[i].line for i, _ in shown)
        latency = time.perf_counter() - started
        return RecallResult(
            id=None,
            items=items,
            context=context,
            tokens=sum(it.tokens for it in items),
            context_tokens=count(context) if context else 0,
            latency_s=latency,
            shows_dates=self.shows_dates,
        )

    def feedback(self, recall_id: str | None, success: bool, used_ids: Sequence[str]) -> None:
        """Plain similarity memory learns nothing from outcomes."""

    def links(self) -> set[tuple[str, str]] | None:
        """Plain similarity memory keeps no links."""
        return None

    def close(self) -> None:
        if self._col is not None:
            with contextlib.suppress(Exception):  # best effort on a temp store
                self._client.delete_collection(self._col.name)
            self._col = None
        self._rows = {}


class DatedSimilarityMemory(SimilarityMemory):
    """``flat_dates``: the flat retrieval, each line prefixed with its date, shown newest first."""

    name = "flat_dates"
    shows_dates = True

    def render(self, turn: Turn) -> str:
        return f"[{turn.time[:10]}] {self.document(turn)}"

    def order(self, chosen: list[tuple[str, float]]) -> list[tuple[str, float]]:
        return sorted(chosen, key=lambda c: (-self._rows[c[0]].epoch, -self._rows[c[0]].order))


class RecencyMemory(SimilarityMemory):
    """``recency``: similarity re-ranked with recency and retrieval frequency (REM service weights)."""

    name = "recency"

    def rank(self, candidates: list[tuple[str, float]], as_of: str | None) -> list[tuple[str, float]]:
        now = epoch(as_of) if as_of else self._latest
        w_sim, w_rec, w_freq = RECENCY_WEIGHTS
        scored = []
        for item_id, sim in candidates:
            age_days = max(0.0, (now - self._rows[item_id].epoch) / 86400.0)
            recency = 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
            frequency = min(1.0, math.log1p(self._retrieved[item_id]) / math.log1p(FREQUENCY_CAP))
            scored.append((item_id, w_sim * sim + w_rec * recency + w_freq * frequency))
        return sorted(scored, key=lambda c: (-c[1], self._rows[c[0]].order))


def memory_graph_available() -> tuple[bool, str]:
    """Whether ``from memory_graph import Memory`` works here; the reason when it does not."""
    try:
        from memory_graph import Memory  # noqa: F401
    except Exception as exc:  # ImportError or a half-written package
        return False, f"{type(exc).__name__}: {exc}"
    return True, ""


def _ids(value: Any) -> list[str]:
    """Memory ids of an ``inspect`` field: ``supersedes`` is a list of ids, ``superseded_by`` an id or None."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _refs(provenance: Any) -> tuple[str, ...]:
    """Caller refs of a provenance list (dicts with ``observation_id``, ``ref``, ``time``), in order, once."""
    return tuple(dict.fromkeys(str(p["ref"]) for p in provenance or [] if p.get("ref")))


@dataclass
class MemoryGraphSystem:
    """``memory_graph`` through the public API; ``overrides`` are ``Memory`` keyword overrides (ablations).

    Every scenario (``reset``) gets a fresh namespace (``user_id``) in one store folder; feedback goes through
    ``Memory.feedback``.
    """

    workdir: Path | str
    name: str = "memory_graph"
    overrides: dict[str, Any] = field(default_factory=dict)
    shows_dates: bool = True

    def __post_init__(self) -> None:
        self._root = Path(self.workdir) / self.name
        self._root.mkdir(parents=True, exist_ok=True)
        self._generation = 0
        self._mem: Any = None
        self._formed: set[str] = set()
        self.last_recall: Any = None
        self.reset()

    def reset(self) -> None:
        from memory_graph import Memory

        self.close()
        self._generation += 1
        # one store, a fresh namespace per scenario (opening a new store folder per scenario leaks file handles)
        self._mem = Memory(str(self._root / "store"), user_id=f"scenario-{self._generation}", **self.overrides)
        self._formed = set()

    def ingest(self, turns: Sequence[Turn]) -> None:
        rows = [{"text": t.text, "speaker": t.speaker, "time": t.time, "ref": t.ref, "session_id": t.session_id}
                for t in turns]
        if hasattr(self._mem, "observe_many"):  # batched ingest
            formed = self._mem.observe_many(rows)
        else:
            formed = [f for row in rows for f in self._mem.observe(row.pop("text"), **row)]
        self._formed.update(str(f["id"]) for f in formed if f.get("id"))

    def recall(self, query: str, budget: int, as_of: str | None = None, task: str | None = None) -> RecallResult:
        started = time.perf_counter()
        r = self._mem.recall(query, budget_tokens=budget, as_of=as_of, task=task)
        latency = time.perf_counter() - started
        self.last_recall = r  # the full Recall (candidates, similarities) for trace studies
        items = [
            RecalledItem(
                id=str(it.id),
                text=str(it.text),
                refs=_refs(it.provenance),
                time=it.valid_from,
                status=str(it.status),
                valid_to=it.valid_to,
                tokens=int(it.tokens),
                score=float(it.score or 0.0),
            )
            for it in r.items
        ]
        return RecallResult(
            id=str(r.id),
            items=items,
            context=r.context,
            tokens=sum(it.tokens for it in items),
            context_tokens=count(r.context) if r.context else 0,
            latency_s=latency,
            shows_dates=self.shows_dates,
        )

    @property
    def memory(self) -> Any:
        """The ``memory_graph.Memory`` of the current scenario."""
        return self._mem

    def feedback(self, recall_id: str | None, success: bool, used_ids: Sequence[str]) -> None:
        if recall_id is not None:
            self._mem.feedback(recall_id, success=success, used_ids=list(used_ids))

    def links(self) -> set[tuple[str, str]] | None:
        """Supersession links as ``(new_ref, old_ref)`` pairs, read through ``Memory.inspect``."""
        refs: dict[str, tuple[str, ...]] = {}
        supersedes: dict[str, list[str]] = {}
        pending = list(self._formed)
        seen: set[str] = set()
        while pending:
            mid = pending.pop()
            if mid in seen:
                continue
            seen.add(mid)
            try:
                info = self._mem.inspect(mid)
            except KeyError:  # a memory hard-deleted since
                continue
            refs[mid] = _refs(info.get("provenance"))
            supersedes[mid] = _ids(info.get("supersedes"))
            pending.extend(i for i in supersedes[mid] + _ids(info.get("superseded_by")) if i not in seen)
        pairs: set[tuple[str, str]] = set()
        for new, olds in supersedes.items():
            for old in olds:
                pairs.update((a, b) for a in refs.get(new, ()) for b in refs.get(old, ()) if a != b)
        return pairs

    def close(self) -> None:
        if self._mem is not None:
            self._mem.close()
            self._mem = None


BASELINES = ("flat", "flat_dates", "recency")
MEMORY_GRAPH_VARIANTS: dict[str, dict[str, Any]] = {
    "memory_graph": {},
    "memory_graph-nolink": {"linking": False},
    "memory_graph-rules": {"linker": "rules"},
    "memory_graph-nolearn": {"learning": False},
    "memory_graph-topk": {"selection": "topk"},
    "memory_graph-logistic": {"usefulness": "logistic"},
}
ALL_SYSTEMS = BASELINES + tuple(MEMORY_GRAPH_VARIANTS)
QUICK_SYSTEMS = (*BASELINES, "memory_graph")


def fresh_ingest(system: System, turns: Sequence[Turn]) -> float:
    """Reset ``system``, ingest ``turns`` and return the ingest wall time in seconds."""
    system.reset()
    t0 = time.perf_counter()
    system.ingest(turns)
    return time.perf_counter() - t0


def warm_up(system: System) -> System:
    """Load models and indexes once (one throwaway message and query) so latencies exclude start-up."""
    system.reset()
    system.ingest([Turn("Warm-up message about nothing.", "user", "2020-01-01T00:00:00Z", "warm-up")])
    system.recall("warm-up", 50)
    system.reset()
    return system


def make_system(name: str, workdir: Path | str) -> System:
    """A fresh system by name (see ``ALL_SYSTEMS``).

    Raises:
        ValueError: unknown name.
        ImportError: a memory_graph variant while ``memory_graph.Memory`` is not importable.
    """
    if name == "flat":
        return SimilarityMemory(workdir)
    if name == "flat_dates":
        return DatedSimilarityMemory(workdir)
    if name == "recency":
        return RecencyMemory(workdir)
    if name in MEMORY_GRAPH_VARIANTS:
        return MemoryGraphSystem(workdir, name=name, overrides=dict(MEMORY_GRAPH_VARIANTS[name]))
    raise ValueError(f"unknown system {name!r}; choose from {', '.join(ALL_SYSTEMS)}")
