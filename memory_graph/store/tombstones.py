"""What hard deletes erased, remembered without the content: salted SHA-256 digests in the ``erased`` table.

A hard delete (``store.erase``, ``MemoryStore.delete``) records one digest per erased thing; an import
(``memory_graph.transfer``) skips every record whose digest is there, so importing an export written before the
erase does not bring the erased text back (issue 21). The salt is drawn once per store (``meta.erase_salt``, 32
random hex digits) so a digest cannot be looked up against another store's or a list of guesses made elsewhere.

What is recorded (one owner of these keys: :func:`keys_of_observation` and friends):

- ``("id", ID)``: every erased memory, observation, recall, feedback and link id (ids are store-wide);
- ``("ref", NAMESPACE, REF, TIME)``: every erased observation's message ref with its time (the same message
  ingested into another store has other ids, but the same ref and time);
- ``("item", NAMESPACE, ITEM REF, CREATED_AT)``: every erased ``BaseStore`` item (a later ``put`` of the same key
  is another item: it has another ``created_at``);
- ``("event", NAMESPACE, MEMORY ID, TYPE, DETAIL, CREATED_AT)``: an event whose detail quoted erased text (the
  event stays, its detail scrubbed; the old detail must not come back);
- ``("task", NAMESPACE, TASK CLASS)``: a caller's task label whose learned statistics went because it quoted erased
  content (sixteenth breaker run: an import brought them back).

The text is never hashed alone, and no digest can be turned back into what it names without the salt and a guess
of the whole key.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any

Key = tuple[str, ...]
SALT_KEY = "erase_salt"


def digest(salt: str, key: Key) -> str:
    """The stored form of ``key``: SHA-256 of the salt and the key's parts, NUL-separated (hex)."""
    return hashlib.sha256("\x00".join((salt, *key)).encode("utf-8", "surrogatepass")).hexdigest()


def id_key(record_id: str) -> Key:
    return ("id", record_id)


def observation_keys(ns: str, row: Any) -> list[Key]:
    """The keys of an observation row (``id``, ``ref``, ``time``): its id, and its message ref at its time."""
    keys = [id_key(row["id"])]
    if row["ref"]:
        keys.append(("ref", ns, str(row["ref"]), str(row["time"])))
    return keys


def item_key(ns: str, ref: str, created_at: str) -> Key:
    return ("item", ns, ref, created_at)


def task_key(ns: str, task_class: str) -> Key:
    return ("task", ns, task_class)


def event_key(ns: str, memory_id: str | None, type_: str, detail: str, created_at: str) -> Key:
    return ("event", ns, memory_id or "", type_, detail, created_at)


def label_key(ns: str, label: str) -> Key:
    """A caller's label (a message's ref or session id) a hard delete relabelled."""
    return ("label", ns, label)


def relabelled(salt: str, ns: str, label: str) -> str:
    """What ``label`` of ``ns`` becomes once it quoted erased content: ``erased:`` and the first 16 hex digits of
    the digest of its :func:`label_key`, so a label remembered as relabelled (:func:`relabelled_among`) maps to the
    same string the hard delete wrote."""
    return "erased:" + digest(salt, label_key(ns, label))[:16]


def relabelled_among(query: Callable[[str, Sequence[Any]], list[Any]], ns: str, labels: Iterable[str | None]) -> dict[str, str]:
    """``{label: its relabelled form}`` of the ``labels`` of ``ns`` a hard delete relabelled (a read: ``query`` is
    ``Ledger.query``; a store that never erased anything has no salt and answers ``{}``). A message said again
    (re-ingested, in a chat thread, imported from another store) under a relabelled label takes the relabelled
    one, so the erased content does not come back in its labels (eighteenth breaker run)."""
    wanted = sorted({label for label in labels if label})
    rows = query("SELECT value FROM meta WHERE key=?", (SALT_KEY,)) if wanted else []
    if not rows:
        return {}
    pepper = str(rows[0]["value"])
    by_digest = {digest(pepper, label_key(ns, label)): label for label in wanted}
    found: dict[str, str] = {}
    digests = sorted(by_digest)
    for start in range(0, len(digests), 500):
        chunk = digests[start : start + 500]
        for r in query(f"SELECT digest FROM erased WHERE digest IN ({','.join('?' * len(chunk))})", tuple(chunk)):
            found[by_digest[r["digest"]]] = "erased:" + str(r["digest"])[:16]
    return found


def salt(cur: Any) -> str:
    """This store's salt, drawn and kept in ``meta`` on first use (inside the caller's transaction ``cur``)."""
    cur.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (SALT_KEY, secrets.token_hex(16)))
    return str(cur.execute("SELECT value FROM meta WHERE key=?", (SALT_KEY,)).fetchone()["value"])


def remember(cur: Any, keys: Iterable[Key]) -> int:
    """Record ``keys`` as erased (inside the hard delete's transaction ``cur``); returns how many were given."""
    pepper = salt(cur)
    rows = sorted({(digest(pepper, k),) for k in keys})
    cur.executemany("INSERT OR IGNORE INTO erased(digest) VALUES (?)", rows)
    return len(rows)


def erased_among(cur: Any, keys: Sequence[Key]) -> set[Key]:
    """The ``keys`` a hard delete of this store erased (read inside ``cur``)."""
    if not keys:
        return set()
    pepper = salt(cur)
    by_digest = {digest(pepper, k): k for k in keys}
    found: set[Key] = set()
    digests = sorted(by_digest)
    for start in range(0, len(digests), 500):
        chunk = digests[start : start + 500]
        found |= {by_digest[r["digest"]] for r in cur.execute(
            f"SELECT digest FROM erased WHERE digest IN ({','.join('?' * len(chunk))})", tuple(chunk)).fetchall()}
    return found
