"""Work run side by side: a small pool of threads for the independent reads of one operation (the parts of a
namespace's index queried for one vector; a query's embedding and its lexical search) and for the update model's
pairs (``relations.RelationModel.probabilities``).

Why (issue 22): a recall made three Chroma queries and a BM25 read one after another, each waiting on native
code that releases the GIL. Measured on a 10k-turn store on 2 idle cores: the three part queries 4.3 ms in turn,
2.8 ms side by side; embedding the query beside its lexical search 4.5 ms, against 6.7 ms in turn. Only reads
that need nothing of each other are run so; the caller keeps holding the store (``Store.session``) while they
run, so they see one state of it. The update model's pairs are each one run of the model (its int8 activations
are quantised per input, so a pair is never batched with another); three pairs took 15.1 ms one after another
and 9.5 ms side by side on 2 idle cores, with the same probabilities.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

WORKERS = 3
"""Threads of the pool: enough for the three parts of an index beside the caller's own read."""

_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def _executor() -> ThreadPoolExecutor:
    """The process's pool, made on first use (and again in a forked child, whose copy has no threads)."""
    global _pool
    with _lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="memory-graph"))
        return _pool[1]


def side_by_side(calls: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run ``calls`` (no arguments each) side by side and return their results in order: the first in the calling
    thread, the others in the pool. Every call is waited for before any exception is raised again (the first
    call's first); a single call runs inline, with no thread involved."""
    if len(calls) <= 1:
        return [call() for call in calls]
    futures: list[Future[Any]] = [_executor().submit(call) for call in calls[1:]]
    try:
        first = calls[0]()
    finally:
        for future in futures:  # wait for every read, so none outlives the caller's hold of the store
            future.exception()
    return [first, *(future.result() for future in futures)]
