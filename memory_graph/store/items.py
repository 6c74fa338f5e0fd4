"""The stored form of LangGraph ``BaseStore`` items (``memory_graph.langgraph_store``): the one owner of how an
item's namespace path is serialised and of the provenance ref its observation carries. The store (hard delete,
import) and the ``BaseStore`` both use these, so an item written by one is found by the other.

- ``namespace_path(("alice", "notes"))`` -> ``["alice","notes"]`` (compact JSON, non-ASCII kept as is): the
  ``items.path`` column. JSON makes it unambiguous (``("a,b",)`` and ``("a", "b")`` differ).
- ``item_ref(namespace, key)`` -> ``item:["alice","notes"]:key``: the ref of the observation the item's text
  became. A JSON array ends where its parse ends, so the ref names one (namespace, key).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

ITEM_REF = "item:"


def namespace_path(namespace: Sequence[str]) -> str:
    """The stored form of a namespace path: compact JSON (``["alice","notes"]``)."""
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


def item_ref(namespace: Sequence[str], key: str) -> str:
    """The provenance ref of an item's observation."""
    return f"{ITEM_REF}{namespace_path(namespace)}:{key}"


def path_ref(path: str, key: str) -> str:
    """:func:`item_ref` of a stored row (its ``path`` column as written, re-serialised: a path stored in another
    JSON spacing by an older import still gives the ref its observation has)."""
    try:
        parts = json.loads(path)
    except ValueError:
        return f"{ITEM_REF}{path}:{key}"
    return item_ref([str(p) for p in parts] if isinstance(parts, list) else [path], key)


def value_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (keys included), depth first: what a hard delete searches for erased text."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from value_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from value_strings(v)
