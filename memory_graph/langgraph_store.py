"""A LangGraph ``BaseStore`` over the memory: ``compile(store=MemoryStore(...))``, ``InjectedStore`` tools, and
``langgraph.json``'s ``"store": {"path": "./memory_graph/langgraph_store.py:generate_store"}``.

Namespaces are ``(user_id, *rest)``: the first label is the memory's namespace (every read and write is confined
to it, as in :class:`memory_graph.api.Memory`); the rest group items the way the app likes.

- ``put(ns, key, value)``: ``value`` is kept as given (``get`` returns it), and its text (``value["content"]``,
  else ``value["text"]``, else the JSON of ``value``) is *observed*: stored as an observation of ``ns[0]`` with the
  provenance ref ``item:<namespace path>:<key>``, and memories are formed from it and linked to what they
  supersede. A second ``put`` of the same key replaces the item; the memories of the first stay in history and are
  superseded only where the new text says so (the memory is a ledger, not a key-value map).
- ``get(ns, key)``: the item as put (``None`` when absent).
- ``search(prefix, query=...)``: goes through recall: the memories and raw turns of ``prefix[0]`` chosen under the
  token budget (``Context.budget_tokens``, or ``budget_tokens`` given to the store), best first, as
  ``SearchItem``\\ s whose key is the memory id and whose value is ``{"content", "kind", "status", "valid_from",
  "valid_to", "superseded_by", "scope", "source", "provenance", "recall_id"}``; ``score`` is the usefulness. A
  longer prefix keeps only memories formed from items under it. ``limit`` caps the items; ``filter`` matches value
  fields by equality. Without ``query``: the items under ``prefix``, newest first.
- ``delete(ns, key)``: the item, its observation and the memories formed from it are erased from every file
  (hard delete), and nothing else, as a ``BaseStore`` deletes one item: another item that repeats or quotes it is
  the app's own record and stays, and a memory another item also supports stays (``Store.erase(...,
  quotes=False)``; ``Memory.forget(hard=True)`` also takes what quotes the erased content).
- ``list_namespaces``: the item paths and ``(user_id,)`` of every namespace with observations.

TTLs are not supported (``supports_ttl = False``): retention is learned from outcomes instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memory_graph.config import Context
from memory_graph.errors import InvalidInputError
from memory_graph.store import Store
from memory_graph.store.items import ITEM_REF, check_key, check_value, item_ref, namespace_path

__all__ = ["ITEM_REF", "MemoryStore", "generate_store", "item_ref", "item_text", "namespace_path"]

MAX_PAGE = 1_000_000


def item_text(value: dict[str, Any]) -> str:
    """What of an item is observed: ``content``, else ``text``, else the whole value as JSON."""
    for field in ("content", "text"):
        if isinstance(value.get(field), str):
            return str(value[field])
    return json.dumps(value, ensure_ascii=False, default=str)


def _check_namespace(namespace: Any) -> tuple[str, ...]:
    if not isinstance(namespace, tuple) or not namespace or not all(isinstance(p, str) and p for p in namespace):
        raise InvalidNamespaceError(f"a namespace is a non-empty tuple of non-empty strings, got {namespace!r}")
    return namespace


def _time(iso: str) -> datetime:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def _check_filter(flt: Any) -> dict[str, Any] | None:
    """A search's ``filter``: None or a dict of value field -> wanted value; else ``InvalidInputError``."""
    if flt is not None and not (isinstance(flt, dict) and all(isinstance(k, str) for k in flt)):
        what = "a dict whose keys are not all strings" if isinstance(flt, dict) else type(flt).__name__
        raise InvalidInputError(f"filter must be a dict of value fields (strings) to match, got {what}")
    return flt


def _check_page(op: Any, names: tuple[str, ...] = ("limit", "offset")) -> None:
    """The paging numbers of ``op`` (``limit``, ``offset``; ``max_depth`` where given) are whole numbers from 0 to
    ``MAX_PAGE`` (``max_depth`` may be None); else ``InvalidInputError``."""
    for name in names:
        number = getattr(op, name)
        if name == "max_depth" and number is None:
            continue
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= MAX_PAGE:
            raise InvalidInputError(f"{name} must be a whole number from 0 to {MAX_PAGE}, got {number!r}")


def _ordered(compare: Any) -> Any:
    """An order operator as LangGraph's ``InMemoryStore`` applies it: both sides as numbers (``float``: "10" > 9, a
    boolean is 0 or 1) when both are numbers or numeric strings; else the values as they are (ISO dates as strings,
    as LangGraph's SQL stores compare them); values that do not compare raise ``TypeError`` (no match)."""

    def apply(have: Any, wanted: Any) -> bool:
        with contextlib.suppress(TypeError, ValueError, OverflowError):  # 10**400 is no float: compared as it is
            have, wanted = float(have), float(wanted)
        return bool(compare(have, wanted))

    return apply


FILTER_OPERATORS: dict[str, Any] = {
    "$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": _ordered(lambda a, b: a > b),
    "$gte": _ordered(lambda a, b: a >= b), "$lt": _ordered(lambda a, b: a < b), "$lte": _ordered(lambda a, b: a <= b),
}
"""The comparison operators of a search filter, as LangGraph's stores take them (``{"n": {"$gt": 2}}``); ``$eq``
and ``$ne`` compare as they are, as ``InMemoryStore`` does."""


def _matches(value: dict[str, Any], flt: dict[str, Any] | None) -> bool:
    """Whether an item's ``value`` passes ``flt``: each field equal to the wanted value, a nested dict matched
    field by field, or ``{"$op": wanted, ...}`` compared with :data:`FILTER_OPERATORS` (values that do not
    compare, such as a string against a number, do not match). An unknown ``$`` operator is ``InvalidInputError``."""
    return not flt or all(_matches_value(value.get(k), v) for k, v in flt.items())


def _matches_value(have: Any, want: Any) -> bool:
    if isinstance(want, dict) and any(isinstance(k, str) and k.startswith("$") for k in want):
        unknown = sorted(k for k in want if k not in FILTER_OPERATORS)
        if unknown:
            raise InvalidInputError(f"unknown filter operator {unknown[0]!r}; known: {', '.join(FILTER_OPERATORS)}")
        try:
            return all(FILTER_OPERATORS[op](have, wanted) for op, wanted in want.items())
        except TypeError:
            return False
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_matches_value(have.get(k), v) for k, v in want.items())
    return bool(have == want)


class MemoryStore(BaseStore):
    """LangGraph ``BaseStore`` over one memory-graph store (see the module docstring).

    Args:
        store: an open :class:`~memory_graph.store.Store` (borrowed: the caller keeps closing it), or a store folder
            path (opened here; :meth:`close` releases it). Default: ``Context().store_path``.
        **overrides: ``Context`` fields for the memories this store reads and writes (``budget_tokens``, ``model``,
            ``embedding_model``...); ``user_id`` comes from each call's namespace.

    Raises:
        InvalidInputError, StoreError: as :class:`memory_graph.api.Memory`.
    """

    supports_ttl = False

    def __init__(self, store: Store | str | Path | None = None, **overrides: Any) -> None:
        if "user_id" in overrides:
            raise InvalidInputError("a MemoryStore serves every user: the user id is each namespace's first label")
        self._overrides = overrides
        if isinstance(store, Store):
            self._store, self._owned = store, False
        else:
            ctx = Context().replace(**overrides)  # InvalidInputError / TypeError for a bad option
            self._store = Store.open(store if store is not None else ctx.store_path, ctx.embedding_model,
                                     chroma_url=ctx.chroma_url)
            self._owned = True
        self._memories: dict[str, Any] = {}
        self._lock = threading.Lock()  # abatch runs in worker threads: one Memory per user, whoever asks first

    @property
    def memory_graph_store(self) -> Store:
        """The storage the memory subgraph's nodes use when this store is injected (``Store.of``)."""
        return self._store

    def memory(self, user_id: str) -> Any:
        """The :class:`~memory_graph.api.Memory` of ``user_id`` on this store (one per user, kept open)."""
        from memory_graph.api import Memory

        with self._lock:
            mem = self._memories.get(user_id)
            if mem is None:
                mem = Memory(user_id=user_id, store=self._store, **self._overrides)
                self._memories[user_id] = mem
            return mem

    def close(self) -> None:
        """Close the per-user memories, and the store when this object opened it (idempotent)."""
        with self._lock:
            for mem in self._memories.values():
                mem.close()
            self._memories.clear()
        if self._owned:
            self._owned = False
            self._store.release()

    # ---- BaseStore ---------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order (GetOp, PutOp, SearchOp, ListNamespacesOp); one result per op (None for puts).

        Raises:
            InvalidNamespaceError: a namespace that is not a non-empty tuple of non-empty strings.
            InvalidInputError: a bad key or value (a value that is not a dict; text the memory refuses), a search
                ``filter`` that is not a dict, a paging number that is not a whole number in range.
            TypeError: an unknown operation.
        """
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (the storage calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # ---- operations --------------------------------------------------------------------------------------

    def _item(self, row: Any, namespace: tuple[str, ...]) -> Item:
        return Item(value=json.loads(row["value"]), key=row["key"], namespace=namespace,
                    created_at=_time(row["created_at"]), updated_at=_time(row["updated_at"]))

    def _get(self, op: GetOp) -> Item | None:
        namespace = _check_namespace(op.namespace)
        self.memory(namespace[0])  # checks the user id
        row = self._store.ledger.item(namespace_path(namespace), check_key(op.key))
        return self._item(row, namespace) if row is not None else None

    def _put(self, op: PutOp) -> None:
        namespace, key = _check_namespace(op.namespace), check_key(op.key)
        mem = self.memory(namespace[0])
        path = namespace_path(namespace)
        if op.value is None:
            self._delete(namespace, key)
            return
        value = check_value(op.value)  # all checks before anything is written
        ref, text = item_ref(namespace, key), item_text(value)
        mem.observe(text, ref=ref)
        # the message this put became: the newest of the ref with this text's last chunk. Not simply the newest of
        # the ref: a put of a text put before re-uses its message (the same ref and text), and an item put A, B, A
        # pointed at B's message (seventeenth breaker run)
        from memory_graph.nodes import split_long

        last = split_long({"text": text.strip()})[-1]["text"]
        of_ref = self._store.ledger.observations_of_ref(namespace[0], ref)
        observed = [o for o in of_ref if o["text"] == last] or of_ref
        with self._store.write() as tx:
            tx.put_item(namespace[0], path, key, value, observed[-1]["id"] if observed else None)

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        ref = item_ref(namespace, key)
        observations = [r["id"] for r in self._store.ledger.observations_of_ref(namespace[0], ref)]  # every chunk
        row = self._store.ledger.item(namespace_path(namespace), key)
        if row is not None and row["observation_id"] and row["observation_id"] not in observations:
            observations.append(row["observation_id"])  # stored under another ref (an older import): erased too
        if observations:
            self._store.erase(namespace[0], observation_ids=observations, quotes=False)
        with self._store.write() as tx:
            tx.delete_item(namespace_path(namespace), key)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = _check_namespace(op.namespace_prefix)
        _check_page(op)
        _check_filter(op.filter)
        if op.query is None:
            rows = self._store.ledger.items(namespace_path(prefix)[:-1])  # filtered here, then paged
            items = [self._item(r, tuple(json.loads(r["path"]))) for r in rows]
            kept = [i for i in items if _matches(i.value, op.filter)][op.offset : op.offset + op.limit]
            return [SearchItem(namespace=i.namespace, key=i.key, value=i.value, created_at=i.created_at,
                               updated_at=i.updated_at) for i in kept]
        mem = self.memory(prefix[0])
        recall = mem.recall(op.query)
        found = []
        for it in recall.items:
            refs = [p.get("ref", "") for p in it.provenance]
            if len(prefix) > 1 and not any(_under(r, prefix) for r in refs):
                continue
            value = {"content": it.text, "kind": it.kind, "status": it.status, "valid_from": it.valid_from,
                     "valid_to": it.valid_to, "superseded_by": it.superseded_by, "scope": it.scope,
                     "source": it.source, "provenance": it.provenance, "recall_id": recall.id}
            if _matches(value, op.filter):
                when = _time(it.valid_from) if len(it.valid_from) == 20 else datetime.now(timezone.utc)
                found.append(SearchItem(namespace=(prefix[0],), key=it.id, value=value, created_at=when,
                                        updated_at=when, score=it.score))
        return found[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        _check_page(op, ("limit", "offset", "max_depth"))
        for condition in op.match_conditions or ():
            if getattr(condition, "match_type", None) not in ("prefix", "suffix") or not isinstance(
                    getattr(condition, "path", None), (tuple, list)):
                raise InvalidInputError(f"a namespace match condition is a MatchCondition, got {condition!r}")
        paths = {tuple(json.loads(p)) for p in self._store.ledger.item_paths()}
        paths |= {(ns,) for ns in self._store.ledger.namespaces()}
        out = set()
        for path in paths:
            if not all(_condition(path, c) for c in op.match_conditions or ()):
                continue
            out.add(path[: op.max_depth] if op.max_depth is not None else path)
        return sorted(out)[op.offset : op.offset + op.limit]


def _under(ref: str, prefix: tuple[str, ...]) -> bool:
    """Whether provenance ``ref`` is an item's under namespace ``prefix``."""
    head = f"{ITEM_REF}{namespace_path(prefix)[:-1]}"
    return ref.startswith(head + "]:") or ref.startswith(head + ",")


def _condition(path: tuple[str, ...], condition: Any) -> bool:
    pattern = tuple(condition.path)
    if len(pattern) > len(path):
        return False
    part = path[: len(pattern)] if condition.match_type == "prefix" else path[len(path) - len(pattern) :]
    return all(p == "*" or p == q for p, q in zip(pattern, part, strict=True))


def generate_store() -> MemoryStore:
    """The store ``langgraph.json`` names for LangGraph Server / ``langgraph dev`` (the folder of
    ``MEMORY_GRAPH_STORE``, default ``./.memory-graph``)."""
    return MemoryStore()
