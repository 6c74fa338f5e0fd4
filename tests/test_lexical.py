"""The lexical index (``memory_graph.store.lexical``): BM25 scores as ``bm25s`` computes them, an index kept with the
memories in the ledger (seen by the next search and by another process, one namespace only, emptied by a hard
delete, filled by an import and by the migration that creates it on an older store), and a bounded cost per
query term."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import bm25s
import numpy as np
import pytest
from fakes import StemBagEmbedder

from memory_graph import Memory
from memory_graph.store import lexical
from memory_graph.store.lexical import bm25_scores, lexical_terms

CORPUS = [
    "Our cat is called Zorblax and she sleeps on the sofa.",
    "We use Kafka for events and Redis for the cache.",
    "Zorblax has a vet visit on Friday at the clinic near the river.",
    "The river walk is nicer than the cache of old photos.",
    "Redis was upgraded to version 7.2 in production on Friday.",
    "A cat, a dog and a parrot live with my sister.",
]


def _postings(docs: list[str], query: str) -> dict[str, list[tuple[str, int, int]]]:
    terms = [lexical_terms(d) for d in docs]
    return {t: [(str(i), c[t], sum(c.values())) for i, c in enumerate(terms) if t in c] for t in lexical_terms(query)}


@pytest.mark.parametrize("query", ["zorblax friday", "redis cache", "river cat", "parrot sister dog", "the of a"])
def test_scores_are_bm25s_lucene_scores(query: str) -> None:
    retriever = bm25s.BM25()  # method "lucene", k1 1.5, b 0.75: the reference
    retriever.index(bm25s.tokenize(CORPUS, stopwords="en", show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)[0]
    expected = retriever.get_scores(tokens) if tokens else np.zeros(len(CORPUS))
    lengths = [sum(lexical_terms(d).values()) for d in CORPUS]
    ours = bm25_scores(_postings(CORPUS, query), len(CORPUS), sum(lengths) / len(CORPUS))
    got = np.array([ours.get(str(i), 0.0) for i in range(len(CORPUS))])
    assert np.allclose(got, expected, atol=1e-5), (got, expected)


def test_terms_are_the_bm25s_tokens() -> None:
    assert set(bm25s.stopwords.STOPWORDS_EN) == lexical.STOP_WORDS
    texts = [*CORPUS, "Dr. Lee's e-mail: lee@example.com, v7.2_beta; naïve café ÉCOLE 東京 タワー 42 x y",
             "it's the 2nd of May and we're in Zürich", "", "   ", "a the of", "\x00binary\x01 text\u200b here"]
    for text in texts:
        expected = bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)[0]
        assert sorted(lexical_terms(text).elements()) == sorted(expected), text


def test_terms_are_the_bm25s_tokens_with_counts() -> None:
    assert lexical_terms("The cat and the CAT sat.") == {"cat": 2, "sat": 1}
    assert lexical_terms("I went", "Caroline") == {"caroline": 1, "went": 1}  # a named speaker is searchable
    assert lexical_terms("") == {} and lexical_terms("a the of") == {}
    assert lexical_terms("x" * 5000 + " y" * 3) == {"x" * lexical.MAX_TERM_CHARS: 1}  # a key fits any index page


@pytest.fixture()
def mem(stem_memory: Callable[[str], Memory]) -> Memory:
    return stem_memory("ana")


def _texts(mem: Memory, ids: list[str]) -> list[str]:
    return [mem.inspect(m)["text"] for m in ids]


def test_index_follows_writes_namespaces_and_hard_deletes(mem: Memory, stem_memory: Callable[[str], Memory]) -> None:
    mem.observe("Our cat is called Zorblax.", time="2024-01-10T09:00:00")
    mem.observe("We use Kafka for events.", time="2024-01-11T09:00:00")
    store = mem.store
    assert _texts(mem, store.search_lexical("ana", "zorblax")) == ["Our cat is Zorblax."]  # the value is the name, not "called Zorblax"
    assert store.search_lexical("ana", "quantum chromodynamics") == []
    assert store.search_lexical("ana", "") == [] and store.search_lexical("ana", "the of") == []
    mem.observe("Zorblax has a vet visit on Friday.", time="2024-01-12T09:00:00")
    assert len(store.search_lexical("ana", "zorblax")) == 2  # the next search sees the new memory
    assert store.search_lexical("bob", "zorblax") == []  # another namespace holds none of it
    word = "Q" * 3000
    mem.observe(f"My password hint is {word}.", time="2024-01-12T10:00:00")  # PostgreSQL: a key under a page
    assert len(store.search_lexical("ana", word)) == 1
    bob = stem_memory("bob")  # another client of the same store
    bob.observe("Zorblax is the name of my boat.", time="2024-01-13T09:00:00")
    assert len(bob.store.search_lexical("bob", "zorblax")) == 1
    assert len(bob.store.search_lexical("ana", "zorblax")) == 2
    assert len(store.search_lexical("bob", "zorblax")) == 1
    before = store.ledger.lexical_stats("ana")
    vet = store.search_lexical("ana", "vet")
    mem.forget(vet[0], hard=True)
    assert store.search_lexical("ana", "vet") == []
    assert store.ledger.postings("ana", "vet", 10) == []  # no posting keeps an erased word
    docs, length = store.ledger.lexical_stats("ana")
    assert docs == before[0] - 1 and 0 < length < before[1]


def test_common_terms_are_skipped_not_scanned(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    mem.observe_many([{"text": f"My colleague number {i} likes tea.", "speaker": "user"} for i in range(6)])
    mem.observe("My colleague Zorblax likes coffee.", speaker="user")
    reads: dict[str, int] = {}
    real = mem.store.ledger.lexical_postings

    def counted(namespace: str, terms: list[str], limit: int) -> tuple[int, int, dict[str, list[tuple[str, int, int]]]]:
        docs, length, postings = real(namespace, terms, limit)
        reads.update({t: len(rows) for t, rows in postings.items()})
        return docs, length, postings

    monkeypatch.setattr(mem.store.ledger, "lexical_postings", counted)
    monkeypatch.setattr(lexical, "MAX_POSTINGS", 3)
    found = mem.store.search_lexical("ana", "colleague zorblax")
    assert [t for t in _texts(mem, found) if "Zorblax" in t] == _texts(mem, found) != []  # "colleague": skipped
    # a common term's postings are counted in the index, never read
    assert reads and max(reads.values()) <= 3 and "colleague" not in reads
    assert mem.store.search_lexical("ana", "colleague likes") == []  # nothing rare to match: no lexical candidates


def test_import_and_migration_fill_the_index(tmp_path: Path) -> None:
    from memory_graph.transfer import export_user, import_records

    with Memory(tmp_path / "a", user_id="ana") as source:
        source.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        source.observe("Our cat is called Zorblax.", time="2024-01-10T09:00:00")
        records = list(export_user(source.store, "ana"))
    with Memory(tmp_path / "b", user_id="ana") as target:
        target.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        import_records(target.store, records)
        assert len(target.store.search_lexical("ana", "zorblax")) == 1
        db = target.store.ledger.db
        with target.store.ledger.tx() as tx:  # a store written before the lexical index existed (schema 4)
            tx.execute("DROP TABLE memory_terms")
            tx.execute("DROP TABLE lexical_stats")
            tx.execute("ALTER TABLE observations DROP COLUMN chunk")  # nor what migrations 9-11 add
            tx.execute("DROP TABLE erased")
        db.script("PRAGMA user_version=4")
    with Memory(tmp_path / "b", user_id="ana") as reopened:
        assert len(reopened.store.search_lexical("ana", "zorblax")) == 1
        assert reopened.store.ledger.lexical_stats("ana")[0] == len(reopened.store.ledger.query(
            "SELECT id FROM memories WHERE namespace='ana'"))


def test_an_index_an_older_writer_left_behind_is_repaired_on_open(tmp_path: Path) -> None:
    """A process of a version before the index that kept the store open across its upgrade writes memories
    without postings, or erases memories and leaves theirs (breaker run): the next open re-indexes that
    namespace; and a process whose code is older than the store's schema can no longer write at all."""
    from memory_graph.errors import StoreError
    from memory_graph.store.ledger import SCHEMA_VERSION

    with Memory(tmp_path / "s", user_id="ana") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe("Our cat is called Zorblax.")
        mem.observe("We use Kafka for events.")
        with mem.store.ledger.tx() as tx:  # what the old writer did: a memory without postings, stats untouched
            tx.execute("DELETE FROM memory_terms WHERE namespace='ana' AND term='kafka'")
            tx.execute("UPDATE lexical_stats SET docs = docs - 1 WHERE namespace='ana'")
        assert mem.store.search_lexical("ana", "kafka") == []
    with Memory(tmp_path / "s", user_id="ana") as mem:
        assert len(mem.store.search_lexical("ana", "kafka")) == 1
        docs = mem.store.ledger.lexical_stats("ana")[0]
        assert docs == len(mem.store.ledger.query("SELECT id FROM memories WHERE namespace='ana'"))
        mem.store.ledger.db.script(f"PRAGMA user_version={SCHEMA_VERSION + 1}")  # a newer version migrated it
        with pytest.raises(StoreError, match="upgraded by a newer memory-graph"):
            mem.observe("I moved to Porto.")
        mem.store.ledger.db.script(f"PRAGMA user_version={SCHEMA_VERSION}")


def test_replaced_values_do_not_crowd_the_current_one_out_of_the_lexical_hits(mem: Memory) -> None:
    """Templated texts tie on BM25; the current value must be among the hits whatever the ids' order (the cut
    comes after the status filter; breaker run)."""
    from memory_graph.retrieval import _lexical_keep
    from memory_graph.store.lexical import LEXICAL_FETCH

    # the chain is written through the store (each price ends the one before), so the test is about BM25 ties, not
    # about which linker reads "We pay 410 ..." as replacing "We pay 400 ..." (the update model does not: a known limit,
    # tests/test_linking_behaviour.py::test_a_new_number_in_the_same_words_replaces_the_old_one)
    mem.observe_many([{"text": f"We pay {400 + 10 * i} dollars a month for the Kafka3 cluster.", "speaker": "user",
                       "time": f"2024-01-{i + 1:02d}T09:00:00Z"} for i in range(25)])
    chain = sorted(mem.store.ledger.query("SELECT id, valid_from FROM memories WHERE namespace='ana' AND text LIKE '%Kafka3%'"),
                   key=lambda r: r["valid_from"])
    with mem.store.write() as tx:
        for old, new in zip(chain[:-1], chain[1:], strict=True):
            tx.end_memory("ana", old["id"], new["id"], new["valid_from"], "superseded", "supersedes", "test chain")
    mem.store.sync_metadata([r["id"] for r in chain[:-1]])
    current = [r for r in mem.store.ledger.query("SELECT id, status, text FROM memories WHERE namespace='ana'")
               if r["status"] == "current" and "Kafka3" in r["text"]]
    assert len(current) == 1 and "640" in current[0]["text"]
    found = mem.store.search_lexical("ana", "Kafka3 cluster dollars", LEXICAL_FETCH)
    keep = _lexical_keep(found, mem.store.ledger.recall_candidates("ana", found), set(), None, False)
    assert keep == [current[0]["id"]]
