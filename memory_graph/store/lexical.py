"""Lexical candidates for the hybrid pool: BM25 (``bm25s``) over a namespace's memory texts.

The vector search finds what is *about* the query; BM25 finds memories that share its rare words (a name, a
product, a place) even when their embedding is not among the nearest. Retrieval adds the top ``LEXICAL_K``
BM25 hits that the vector search missed to the candidate pool, with their real cosine similarity, so they are
scored by the same usefulness model (BM25 widens the pool; it does not change the scores).

Each :class:`~memory_graph.store.Store` owns one :class:`LexicalIndex` (``store.lexical``): built in memory per
namespace and rebuilt when the namespace's memories change (their count or newest row); status and validity are
applied to the hits afterwards, as for vector hits. A namespace with more than ``LEXICAL_MAX_MEMORIES`` memories
gets no lexical candidates (a rebuild would cost seconds per new memory; a persistent inverted index is the
scale-out path, issue 13).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

import bm25s

from memory_graph.records import searchable_text

if TYPE_CHECKING:
    from memory_graph.store.ledger import Ledger

log = logging.getLogger(__name__)

LEXICAL_K = 10
LEXICAL_MAX_MEMORIES = 20_000


def _tokenize(texts: list[str]) -> Any:
    return bm25s.tokenize(texts, stopwords="en", show_progress=False)


class LexicalIndex:
    """BM25 indexes of one store's namespaces, each rebuilt from the ledger when that namespace's memories change."""

    def __init__(self) -> None:
        self._built: dict[str, tuple[tuple[int, int], list[str], Any]] = {}
        self._too_large: set[str] = set()
        self._lock = threading.Lock()

    def search(self, ledger: Ledger, namespace: str, query: str, k: int = LEXICAL_K) -> list[str]:
        """Ids of the ``k`` memories of ``namespace`` (any status) with the highest positive BM25 score for
        ``query``, best first; empty when nothing shares a word with it or the namespace is too large."""
        version = ledger.memories_version(namespace)
        if version[0] > LEXICAL_MAX_MEMORIES and namespace not in self._too_large:
            self._too_large.add(namespace)  # said once per namespace and process, not per recall
            log.warning("namespace %r has %d memories (over %d): no BM25 candidates for it (issue 13: a persistent "
                        "inverted index is the way past this)", namespace, version[0], LEXICAL_MAX_MEMORIES)
        if version[0] == 0 or version[0] > LEXICAL_MAX_MEMORIES:
            return []
        with self._lock:
            cached = self._built.get(namespace)
        if cached is None or cached[0] != version:
            rows = ledger.memory_texts(namespace)
            ids = [r["id"] for r in rows]
            retriever = bm25s.BM25()
            retriever.index(_tokenize([searchable_text(r["text"], r["source"]) for r in rows]), show_progress=False)
            cached = (version, ids, retriever)
            with self._lock:
                self._built[namespace] = cached
        _, ids, retriever = cached
        query_tokens = _tokenize([query])
        if not any(len(t) for t in query_tokens.ids):
            return []
        docs, scores = retriever.retrieve(query_tokens, k=min(k, len(ids)), show_progress=False)
        return [ids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if float(s) > 0.0]
