"""Lexical candidates for the hybrid pool: BM25 (``bm25s``) over a namespace's memory texts.

The vector search finds what is *about* the query; BM25 finds memories that share its rare words (a name, a
product, a place) even when their embedding is not among the nearest. Retrieval adds the top ``LEXICAL_K``
BM25 hits that the vector search missed to the candidate pool, with their real cosine similarity, so they are
scored by the same usefulness model (BM25 widens the pool; it does not change the scores).

The index is built in memory per (store, namespace) and rebuilt when the namespace's memories change (their
count or newest row); status and validity are applied to the hits afterwards, as for vector hits. A
namespace with more than ``LEXICAL_MAX_MEMORIES`` memories gets no lexical candidates (a rebuild would cost
seconds per new memory; a persistent inverted index is the scale-out path).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import bm25s

from memory_graph.records import searchable_text

LEXICAL_K = 10
LEXICAL_MAX_MEMORIES = 20_000

_CACHE: weakref.WeakKeyDictionary[Any, dict[str, tuple[tuple[int, int], list[str], Any]]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _tokenize(texts: list[str]) -> Any:
    return bm25s.tokenize(texts, stopwords="en", show_progress=False)


def lexical_search(store: Any, namespace: str, query: str, k: int = LEXICAL_K) -> list[str]:
    """Ids of the ``k`` memories of ``namespace`` (any status) with the highest positive BM25 score for
    ``query``, best first; empty when nothing shares a word with it or the namespace is too large."""
    head = store.ledger.query("SELECT COUNT(*) AS n, COALESCE(MAX(rowid), 0) AS last FROM memories WHERE namespace=?",
                              (namespace,))[0]
    version = (int(head["n"]), int(head["last"]))
    if version[0] == 0 or version[0] > LEXICAL_MAX_MEMORIES:
        return []
    with _LOCK:
        cached = _CACHE.setdefault(store, {}).get(namespace)
    if cached is None or cached[0] != version:
        rows = store.ledger.query("SELECT id, text, source FROM memories WHERE namespace=? ORDER BY rowid", (namespace,))
        ids = [r["id"] for r in rows]
        retriever = bm25s.BM25()
        retriever.index(_tokenize([searchable_text(r["text"], r["source"]) for r in rows]), show_progress=False)
        cached = (version, ids, retriever)
        with _LOCK:
            _CACHE[store][namespace] = cached
    _, ids, retriever = cached
    query_tokens = _tokenize([query])
    if not any(len(t) for t in query_tokens.ids):
        return []
    docs, scores = retriever.retrieve(query_tokens, k=min(k, len(ids)), show_progress=False)
    return [ids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if float(s) > 0.0]
