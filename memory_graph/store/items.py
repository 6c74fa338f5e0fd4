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

from memory_graph.errors import InvalidInputError

ITEM_REF = "item:"
MAX_KEY_CHARS = 256
MAX_VALUE_CHARS = 1_000_000


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


def parse_item_ref(ref: str | None) -> tuple[list[str], str] | None:
    """``(namespace labels, key)`` of an :func:`item_ref`, or None for any other ref."""
    if not ref or not ref.startswith(ITEM_REF):
        return None
    try:
        parts, end = json.JSONDecoder().raw_decode(ref, len(ITEM_REF))
    except ValueError:
        return None
    if not (isinstance(parts, list) and parts and ref[end : end + 1] == ":"):
        return None
    return [str(p) for p in parts], ref[end + 1 :]


def rehomed_ref(ref: str | None, source_user: str, target_user: str) -> str | None:
    """``ref`` with its item namespace moved from ``source_user`` to ``target_user`` when it is the
    :func:`item_ref` of an item of ``source_user`` (an export imported under another user id: the item's message
    must name the item where it now lives, or ``delete`` of the item cannot find its text); any other ref as
    given."""
    parsed = parse_item_ref(ref) if source_user != target_user else None
    if parsed is None or parsed[0][0] != source_user:
        return ref
    return item_ref([target_user, *parsed[0][1:]], parsed[1])


MAX_VALUE_DEPTH = 100
"""Deepest nesting of lists and dicts in an item value: a value nested 490 deep was stored, but the export could
not read it back (Python's JSON decoder recursion; sixteenth breaker run of issue 21)."""


def _depth(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (a string or number: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list) and level > deepest:
            deepest = level
            if level > MAX_VALUE_DEPTH:
                break
        if isinstance(node, dict):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, level + 1) for v in node)
    return deepest


def check_value(value: Any) -> dict[str, Any]:
    """A put's value as it will be stored: a dict of JSON values (no NaN, no bytes, string keys), nested at most
    ``MAX_VALUE_DEPTH`` deep, storable as UTF-8, at most ``MAX_VALUE_CHARS`` as JSON; else ``InvalidInputError``
    (nothing is written)."""
    if not isinstance(value, dict):
        raise InvalidInputError(f"an item value is a dict, got {type(value).__name__}")
    if _depth(value) > MAX_VALUE_DEPTH:
        raise InvalidInputError(f"an item value may nest lists and dicts at most {MAX_VALUE_DEPTH} deep")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:  # bytes, sets, NaN, lone surrogates, absurd nesting
        raise InvalidInputError(f"an item value must be JSON (strings, numbers, lists, dicts): {type(exc).__name__}") from None
    if any("\x00" in part for part in value_strings(value)):  # put observes the content, which refuses NUL
        raise InvalidInputError("an item value must not hold NUL characters")
    if len(text) > MAX_VALUE_CHARS:
        raise InvalidInputError(f"an item value is {len(text)} characters as JSON; the limit is {MAX_VALUE_CHARS}")
    return dict(json.loads(text))


def check_key(key: Any) -> str:
    """An item key: a printable string of 1 to ``MAX_KEY_CHARS`` characters; else ``InvalidInputError``."""
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise InvalidInputError(f"an item key is a printable string of 1 to {MAX_KEY_CHARS} characters, got {key!r}")
    return key


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
