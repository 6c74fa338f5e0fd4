"""A recall reads the ledger a fixed number of times, whatever its candidates (issue 22): the candidates' rows,
successors, statistics and chain heads in one read, the lexical postings of every query word in one, the keys'
newest memories in one, the raw messages with what was formed from them in one. Before, every step of every chain
walk, every query word (twice) and every key was its own query: about 47 per recall on the benchmark's store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memory_graph import Memory
from memory_graph.records import FORGET_REQUEST
from memory_graph.store.ledger import Ledger

READS = 10
"""Ledger reads of one recall at most: the index generation (the store's hold), the search's filter rows, the
lexical postings, the candidates, the keys' newest memories, the raw messages, the chosen ones' provenance (7);
a search left short by its fetch reads the filter rows of a wider one, and then of the whole namespace for the
exact search (its rare fallback, ``Store.search``: up to 3 more)."""


def _fill(mem: Memory, words: int) -> None:
    """Memories about a few keys, a supersession chain of 30 versions (written through the store, each ending the one
    before) and many memories sharing the query's words."""
    ns = mem.context.user_id
    mem.observe_many(
        [
            {
                "text": f"We run Kafka{words} cluster version {v} in production.",
                "speaker": "user",
                "time": f"2024-01-{v + 1:02d}T09:00:00Z",
            }
            for v in range(30)
        ]
    )
    chain = sorted(
        mem.store.ledger.query(
            f"SELECT id, valid_from FROM memories WHERE namespace=? AND text LIKE '%Kafka{words} cluster%'",
            (ns,),
        ),
        key=lambda r: r["valid_from"],
    )
    with mem.store.write() as tx:
        for old, new in zip(chain[:-1], chain[1:], strict=True):
            tx.end_memory(
                ns, old["id"], new["id"], new["valid_from"], "superseded", "supersedes", "test chain"
            )
    mem.store.sync_metadata([r["id"] for r in chain[:-1]])
    mem.observe_many(
        [
            {
                "text": f"My colleague Person{i} works on the Kafka{words} cluster team in Lisbon.",
                "speaker": "user",
                "time": f"2024-03-{1 + i % 28:02d}T09:00:00Z",
            }
            for i in range(words)
        ]
    )


def _counted(mem: Memory, monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]) -> list[str]:
    """The ledger reads (``Ledger.query``: every read of both backends) that ``run()`` makes."""
    seen: list[str] = []
    real = Ledger.query

    def spy(self: Ledger, sql: str, params: Any = ()) -> Any:
        seen.append(sql)
        return real(self, sql, params)

    monkeypatch.setattr(Ledger, "query", spy)
    try:
        run()
    finally:
        monkeypatch.setattr(Ledger, "query", real)
    return seen


def test_a_recall_reads_the_ledger_a_fixed_number_of_times(
    stem_memory: Callable[[str], Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    small, large = stem_memory("small"), stem_memory("large")
    _fill(small, 3)
    _fill(large, 60)
    query = (
        "Which version of the Kafka cluster runs in production for the colleague team in Lisbon, version 3?"
    )
    for name, mem in (("small", small), ("large", large)):
        for kwargs in ({}, {"include_history": True}, {"as_of": "2024-01-15T00:00:00Z"}, {"task": "ops"}):
            recall = mem.recall(query, **kwargs)  # warm: a first recall also opens the index
            reads = _counted(mem, monkeypatch, lambda m=mem, k=kwargs: m.recall(query, **k))
            assert len(reads) <= READS, (name, kwargs, reads)
            assert recall.candidates
        mem.feedback(recall.id, success=True, used_ids=[recall.items[0].id])  # statistics to read


def _walk(mem: Memory, start: str, max_steps: int = 50) -> str:
    """A chain's head as recall found it before (one ``Ledger.superseded_by`` query per step)."""
    position = start
    for _ in range(max_steps):
        nxt = mem.store.ledger.superseded_by(mem.context.user_id, [position]).get(position)
        if nxt is None or nxt == FORGET_REQUEST:
            break
        position = nxt
    return position


def test_the_chain_walk_is_one_read_and_ends_as_before(stem_memory: Callable[[str], Memory]) -> None:
    """``Ledger.recall_candidates`` follows each chain through the latest replacing link, stops before a forget
    request and after ``max_steps``, and leaves out a walk that did not move: where the walk of one query per step
    ended."""
    mem = stem_memory("u")
    _fill(mem, 3)
    ns = mem.context.user_id
    chain = [
        r["id"]
        for r in sorted(
            mem.store.ledger.query(
                "SELECT id, valid_from FROM memories WHERE namespace=? AND text LIKE '%Kafka3 cluster%'",
                (ns,),
            ),
            key=lambda r: r["valid_from"],
        )
    ]
    starts = [chain[0], chain[10], chain[-1]]

    def expected(max_steps: int = 50) -> dict[str, str]:
        return {s: h for s in starts if (h := _walk(mem, s, max_steps)) != s}

    found = mem.store.ledger.recall_candidates(ns, [chain[5]], starts)
    assert found.heads == expected() and set(found.heads) == {chain[0], chain[10]}
    assert set(found.heads.values()) <= set(found.rows) and chain[5] in found.rows
    assert found.superseded_by[chain[5]] == mem.store.ledger.superseded_by(ns, [chain[5]])[chain[5]]
    assert mem.store.ledger.recall_candidates(ns, [], starts, max_steps=3).heads == expected(3)
    head = found.heads[chain[0]]
    with mem.store.write() as tx:  # a forget request retracts the head: the walk stays before it
        tx.end_memory(ns, head, FORGET_REQUEST, "2024-05-01T00:00:00Z", "retracted", "retracts", "forget")
    assert mem.store.ledger.recall_candidates(ns, [], starts).heads == expected() != {}
