"""Lexical candidates for the hybrid pool: BM25 over a namespace's memory texts, from an inverted index kept in
the ledger.

The vector search finds what is *about* the query; BM25 finds memories that share its rare words (a name, a
product, a place) even when their embedding is not among the nearest. Retrieval adds the top ``LEXICAL_K``
BM25 hits that the vector search missed to the candidate pool, with their real cosine similarity, so they are
scored by the same usefulness model (BM25 widens the pool; it does not change the scores).

The index is two ledger tables, written in the same transaction as the memories (so it is never stale, survives
restarts, is shared by every process, and is the same on SQLite and PostgreSQL):

- ``memory_terms(namespace, term, memory_id, tf, dl)``: one posting per distinct term of a memory (``tf``: times
  the term occurs in it, ``dl``: its length in terms), keyed ``(namespace, term, memory_id)`` so one term's
  postings in one namespace are one index range;
- ``lexical_stats(namespace, docs, length)``: memories indexed and their total length, for BM25's ``N`` and mean
  length (no ``COUNT(*)`` per query).

Terms are ``bm25s``'s tokens with its English stop words (:func:`lexical_terms`); the scores are Okapi BM25 with
Lucene's idf, ``bm25s``'s default method (:func:`bm25_scores`; ``tests/test_lexical.py`` checks both against
``bm25s`` on one corpus). A search reads the postings of the query's terms only, so its cost follows how
many memories share a query word, not the namespace's size; a term held by more than ``MAX_POSTINGS`` memories of
the namespace is skipped (its idf is at most ``ln(1 + N / MAX_POSTINGS)``: it cannot single out a memory, and
reading it would make the search O(namespace) again). Status and validity are applied to the hits afterwards,
as for vector hits. A memory is indexed when it is added (``Tx.add_memory``, imports) and unindexed when it is
hard-deleted (``memory_graph.store.erase``); statuses do not touch the index.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from memory_graph.records import searchable_text

if TYPE_CHECKING:
    from memory_graph.store.ledger import Ledger

LEXICAL_K = 10
LEXICAL_FETCH = 4 * LEXICAL_K
"""BM25 hits a caller reads before its own status/validity filter, of which it keeps the best ``LEXICAL_K`` that
pass (templated texts tie on BM25; cutting before the filter let replaced values crowd out the current one)."""
MAX_POSTINGS = 2048
"""Postings read per query term at most; a term held by more memories of the namespace is left out of the query
(found by a count in the index, without reading its postings)."""
MAX_QUERY_TERMS = 32
"""Distinct query terms looked up at most (the first ones of the query)."""
MAX_TERM_CHARS = 64
"""A longer word is indexed and looked up by its first 64 characters (a key must fit PostgreSQL's btree pages)."""
K1 = 1.5
B = 0.75
"""Okapi BM25's term-frequency saturation and length normalisation (``bm25s``'s defaults)."""


TOKEN = re.compile(r"(?u)\b\w\w+\b")
"""A term: a word of two or more word characters (``bm25s``'s and scikit-learn's default token pattern)."""
STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
    "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
))
"""Lucene's English stop set, the one ``bm25s`` uses for ``stopwords="en"``."""


def lexical_terms(text: str, source: str = "") -> Counter[str]:
    """The terms of a memory (its ``searchable_text``) or a query, with their counts: lowercase words of two or
    more word characters without stop words, each cut to MAX_TERM_CHARS. The same tokens as
    ``bm25s.tokenize(..., stopwords="en")`` (tested); written out so that a recall does not import bm25s and
    scipy (0.3 s of every CLI call)."""
    return Counter(t[:MAX_TERM_CHARS] for t in TOKEN.findall(searchable_text(text, source).lower()) if t not in STOP_WORDS)


def bm25_scores(postings: Mapping[str, Sequence[tuple[str, int, int]]], docs: int, mean_length: float,
                k1: float = K1, b: float = B) -> dict[str, float]:
    """Okapi BM25 with Lucene's idf (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
    Beyond"; the variant ``bm25s`` calls ``lucene``) of every memory in ``postings``.

    Args:
        postings: query term -> ``(memory_id, tf, dl)`` of every memory holding it (``tf``: the term's count in
            the memory, ``dl``: the memory's length in terms); its length is the term's document frequency.
        docs: memories in the collection (``N``); ``mean_length``: their mean length in terms.

    Returns: memory id -> score (> 0 for every memory that shares a term with the query).
    """
    scores: dict[str, float] = {}
    mean = mean_length if mean_length > 0 else 1.0
    for rows in postings.values():
        df = len(rows)
        if not df:
            continue
        idf = math.log(1.0 + (max(docs, df) - df + 0.5) / (df + 0.5))
        for memory_id, tf, dl in rows:
            weight = tf / (tf + k1 * (1.0 - b + b * dl / mean))  # Lucene >= 8 drops the constant (k1 + 1)
            scores[memory_id] = scores.get(memory_id, 0.0) + idf * weight
    return scores


def postings_rows(namespace: str, memory_id: str, terms: Counter[str]) -> list[tuple[str, str, str, int, int]]:
    """The ``memory_terms`` rows of one memory: ``(namespace, term, memory_id, tf, dl)``."""
    length = sum(terms.values())
    return [(namespace, term, memory_id, count, length) for term, count in sorted(terms.items())]


def search(ledger: Ledger, namespace: str, query: str, k: int = LEXICAL_K) -> list[str]:
    """Ids of the ``k`` memories of ``namespace`` (any status) with the highest BM25 score for ``query``, best
    first (ties by id); empty when no memory shares a (not too common) word with it."""
    terms = list(lexical_terms(query))[:MAX_QUERY_TERMS]
    if not terms or k <= 0:
        return []
    docs, length, postings = ledger.lexical_postings(namespace, terms, MAX_POSTINGS)  # one read
    if not docs:
        return []
    scores = bm25_scores(postings, docs, length / docs)
    return [m for m, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def indexed_terms(rows: Iterable[Mapping[str, str]]) -> dict[str, Counter[str]]:
    """Memory id -> its terms, for rows with ``id``, ``text`` and ``source`` (what indexing and unindexing need)."""
    return {r["id"]: lexical_terms(r["text"], r["source"]) for r in rows}
