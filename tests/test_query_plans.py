"""The hot paths' ledger queries are served by indexes on both backends (issue 13): no statement run by a
recall, an ingest batch or feedback scans a whole table. SQLite: ``EXPLAIN QUERY PLAN`` has no ``SCAN <table>``;
PostgreSQL: ``EXPLAIN`` with sequential scans discouraged has no ``Seq Scan`` (so an index can serve it).

The tables here are tiny and have no planner statistics, so the planners judge by the indexes alone (a tiny
table with statistics is cheaper to scan, which says nothing about 100k rows)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from fakes import StemBagEmbedder

from memory_graph import Memory
from memory_graph.store.ledger import Ledger

TABLES = "memories|observations|links|provenance|events|stats|recalls|feedback|items|memory_terms|lexical_stats"
FULL_SCAN = {
    "sqlite": re.compile(rf"^SCAN ({TABLES})\b"),
    "postgresql": re.compile(rf"Seq Scan on ({TABLES})\b"),
}


@pytest.fixture()
def mem(stem_memory: Callable[[str], Memory]) -> Memory:
    return stem_memory("u")


def test_hot_queries_use_indexes(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [{"role": "user", "text": t, "time": f"2026-0{1 + i % 9}-10T09:00:00Z", "ref": f"m{i}"} for i, t in enumerate([
        "I live in Lisbon.", "My sister Ana works at Acme.", "We upgraded Redis to version 7.2 in production.",
        "I moved to Porto last month.", "Our standup moved to Tuesday at 10am.", "Ana now works at Globex.",
    ])]
    mem.observe_many(turns[:3])
    seen: dict[str, tuple[Any, ...]] = {}
    original = Ledger.query

    def spy(self: Ledger, sql: str, params: Any = ()) -> Any:
        seen.setdefault(sql, tuple(params))
        return original(self, sql, params)

    monkeypatch.setattr(Ledger, "query", spy)
    mem.observe_many(turns[3:])
    recall = mem.recall("Where does Ana work?")
    mem.recall("Where did I live?", as_of="2026-02-01T00:00:00Z")
    mem.recall("Redis version", include_history=True)
    mem.feedback(recall.id, True, used_ids=[it.id for it in recall.items[:1]])
    monkeypatch.setattr(Ledger, "query", original)
    assert len(seen) > 10, "the spy should see the hot paths' reads"
    kind = mem.store.ledger.db.kind
    scans = {}
    for sql, params in seen.items():
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):  # reads (a recall's chain walk is a WITH)
            continue
        plan = mem.store.ledger.explain(sql, params)
        bad = [line for line in plan if FULL_SCAN[kind].search(line.strip())]
        if bad:
            scans[sql] = bad
    assert not scans, f"{kind}: full scans on a hot path: {scans}"


def test_a_migration_refreshes_the_planner_statistics(tmp_path: Any) -> None:
    """A migration that adds an index to a store with statistics leaves that index without any: SQLite then chose
    it over the primary key for id lookups (100 ms per read at 100k memories). The open after a migration
    analyzes again."""
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe("I live in Lisbon.")
        ledger = mem.store.ledger
        ledger.db.analyze()
        assert ledger.query("SELECT 1 FROM sqlite_stat1 WHERE idx='mem_key_time'")
        with ledger.tx() as tx:  # the store as schema 6 left it: no mem_key_time index, statistics for the rest
            tx.execute("DROP INDEX mem_key_time")
            tx.execute("DELETE FROM sqlite_stat1 WHERE idx='mem_key_time'")
            # nor what migrations 8-11 add (8 and 10 are CREATE ... IF NOT EXISTS; 9 adds a column, 11 a table)
            tx.execute("ALTER TABLE observations DROP COLUMN chunk")
            tx.execute("DROP TABLE erased")
        ledger.db.script("PRAGMA user_version=6")
    with Memory(tmp_path / "s", user_id="u") as mem:
        stats = mem.store.ledger.query("SELECT idx FROM sqlite_stat1 WHERE tbl='memories'")
        assert "mem_key_time" in {r["idx"] for r in stats}


def test_a_turns_unlinked_observations_are_one_index_range(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every turn reads the namespace's unlinked observations, oldest first. With an index on (namespace,
    processed) SQLite took the (namespace, time) index for the order and read every observation of the namespace
    (1.7 ms a turn at 10k, issue 22): the read's equalities must both be in the index condition."""
    mem.observe_many([{"text": f"I moved to city number {i}.", "ref": f"m{i}"} for i in range(3)])
    seen: list[tuple[str, tuple[Any, ...]]] = []
    original = Ledger.query

    def spy(self: Ledger, sql: str, params: Any = ()) -> Any:
        seen.append((sql, tuple(params)))
        return original(self, sql, params)

    monkeypatch.setattr(Ledger, "query", spy)
    assert mem.store.ledger.unprocessed_observations("u") == []
    monkeypatch.setattr(Ledger, "query", original)
    plan = " | ".join(mem.store.ledger.explain(*seen[-1]))
    condition = {"sqlite": r"INDEX \w+ \(namespace=\? AND processed=\?", "postgresql": r"Index Cond: .*processed"}
    assert re.search(condition[mem.store.ledger.db.kind], plan), plan
