"""The chat threads file (``<store>/threads.sqlite3``, LangGraph's ``SqliteSaver``) as a hard delete rewrites it.

Thread ownership and the message filter are :mod:`memory_graph.threads`; this module owns the file's SQL.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memory_graph.errors import StoreError
from memory_graph.store.erase import Said, erased_label
from memory_graph.store.quoting import quotes, quotes_value, same_text, strings_of
from memory_graph.threads import THREADS_FILE, kept_messages, owner_of, thread_key


def scrub_threads(folder: Path, user_id: str, needles: list[str], refs: set[str], same: Sequence[str] | Said = (),
                  owners: Mapping[str, str] | None = None, salt: str = "") -> tuple[int, int, dict[str, str]]:
    """Rewrite the chat threads of ``user_id`` in ``folder/THREADS_FILE`` so that no message quotes erased content
    or carries it: a message that quotes a needle (as the ledger's rows are judged,
    :func:`memory_graph.store.quoting.quotes_value`: a code or a rare word as a whole word, so erasing "LH714" keeps a
    message about "LH7140"), whose id is in ``refs`` (the erased observations' refs) or whose text is an erased
    text (``same``, :func:`memory_graph.store.quoting.same_text`) is dropped, any other channel value that quotes a
    needle is cleared, the thread's history is replaced by one checkpoint of what remains, subgraph checkpoints are
    dropped, and the file is VACUUMed.

    A thread is ``user_id``'s when ``owners`` (the ledger's ``thread_owners``: every thread the graphs ran on) says
    so, or, when it does not name the thread, when its id is a :func:`memory_graph.threads.thread_key` of
    ``user_id``. Threads of other users and threads of no known owner (an app's own checkpointer sharing the file)
    are never read or changed.

    Labels (``salt``: the store's, :func:`memory_graph.store.erase.erased_label`): a kept message whose id quotes a
    needle gets the id its ledger copy's ref got (``erased:<digest>``), so the next turn finds it observed already;
    a thread whose id quotes one moves to :func:`relabelled_thread` (eighteenth breaker run: a thread named
    "locker-QX4471" kept the code in both files). No ``salt``: labels are left as they are.

    Returns ``(threads rewritten, threads of no known owner, {old thread id: new} of the threads moved)``.

    Raises:
        StoreError: the file is not a readable SQLite database (it names the file)."""
    path = folder / THREADS_FILE
    if not path.exists():
        return 0, 0, {}

    needles = [n for n in needles if n]
    said = same if isinstance(same, Said) else Said(plain=[same_text(t) for t in same])
    owners = owners or {}
    try:
        return _scrub(path, user_id, needles, refs, said, owners, salt)
    except sqlite3.DatabaseError as exc:  # a garbage or foreign file: a project error that names it (F5)
        raise StoreError(
            f"the chat threads file {path} cannot be read ({exc}): its copies of the erased messages were not "
            f"scrubbed; the step is retried on every open of the store (repair the file, or remove it to drop "
            f"every chat thread)"
        ) from exc


def _scrub(path: Path, user_id: str, needles: list[str], refs: set[str], said: Said,
           owners: Mapping[str, str], salt: str) -> tuple[int, int, dict[str, str]]:
    from langchain_core.messages import BaseMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        thread_ids = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()]
        rewritten = unknown = 0
        renamed: dict[str, str] = {}
        for tid in thread_ids:
            owner = owners.get(tid) or owner_of(tid)
            if owner is None:
                unknown += 1
            if owner != user_id:
                continue
            config: Any = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
            latest = saver.get_tuple(config)
            nested = conn.execute("SELECT 1 FROM checkpoints WHERE thread_id=? AND checkpoint_ns != '' LIMIT 1", (tid,)).fetchone()
            history = conn.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id=?", (tid,)).fetchone()[0]
            if latest is None:
                continue
            values = dict(latest.checkpoint.get("channel_values") or {})
            changed = False
            for key, value in list(values.items()):
                if isinstance(value, list) and value and all(isinstance(m, BaseMessage) for m in value):
                    kept = _relabelled(kept_messages(value, refs, needles, said), user_id, needles, salt)
                    if len(kept) != len(value) or any(a is not b for a, b in zip(kept, value, strict=True)):
                        values[key], changed = kept, True
                elif quotes_value(value, needles):
                    values[key] = "" if isinstance(value, str) else None
                    changed = True
            moved = relabelled_thread(tid, user_id, salt) if salt and quotes(tid, needles) else tid
            if (not changed and not (history > 1 and _thread_quotes(conn, saver, tid, needles, said)) and not nested
                    and moved == tid):
                continue
            checkpoint: Any = {**latest.checkpoint, "channel_values": values}
            saver.delete_thread(tid)
            if moved != tid:
                renamed[tid] = moved
                config = {"configurable": {"thread_id": moved, "checkpoint_ns": ""}}
            saver.put(config, checkpoint, {"source": "update", "step": -1, "parents": {}},
                      dict(checkpoint.get("channel_versions") or {}))
            rewritten += 1
        if rewritten:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return rewritten, unknown, renamed
    finally:
        conn.close()


def relabelled_thread(thread_id: str, user_id: str, salt: str) -> str:
    """The id a thread of ``user_id`` whose id quotes erased content moves to: a
    :func:`memory_graph.threads.thread_key` of the user keeps its owner with its name relabelled
    (:func:`memory_graph.store.erase.erased_label`), any other id is relabelled whole."""
    if owner_of(thread_id) == user_id:
        return thread_key(user_id, erased_label(salt, user_id, json.loads(thread_id)[1]))
    return erased_label(salt, user_id, thread_id)


def _relabelled(messages: list[Any], user_id: str, needles: list[str], salt: str) -> list[Any]:
    """``messages`` with each id that quotes a needle replaced by its label (the ledger ref's; none without
    ``salt``); the others are the same objects."""
    if not salt:
        return messages
    return [m.model_copy(update={"id": erased_label(salt, user_id, m.id)})
            if isinstance(m.id, str) and m.id and quotes(m.id, needles) else m for m in messages]


def _thread_quotes(conn: sqlite3.Connection, saver: Any, tid: str, needles: list[str], said: Said) -> bool:
    """Whether any stored checkpoint (its values and metadata) or pending write of thread ``tid`` quotes a needle
    (:func:`memory_graph.store.quoting.quotes_value` on the decoded values: the older checkpoints, which the latest
    one no longer shows). A blob that cannot be decoded counts as quoting (the thread is rewritten)."""
    rows = conn.execute(
        "SELECT type, checkpoint, metadata FROM checkpoints WHERE thread_id=?", (tid,)
    ).fetchall()
    writes = conn.execute("SELECT type, value FROM writes WHERE thread_id=?", (tid,)).fetchall()
    for kind, blob, *metadata in [*rows, *writes]:
        try:
            value = saver.serde.loads_typed((kind, blob)) if blob is not None else None
            meta = [json.loads(m) if isinstance(m, (bytes, str)) else m for m in metadata]
        except Exception:  # noqa: BLE001 - any decoding failure: rewrite rather than keep a copy
            return True
        if quotes_value([value, meta], needles) or any(same_text(t) in said for t in strings_of([value, meta])):
            return True
    return False


def thread_saver(folder: Path) -> tuple[sqlite3.Connection, Any]:
    """A connection to ``folder/THREADS_FILE`` and LangGraph's ``SqliteSaver`` over it (the CLI chat's
    checkpointer); the caller closes the connection."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(folder / THREADS_FILE), check_same_thread=False)
    return conn, SqliteSaver(conn)
