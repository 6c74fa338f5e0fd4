"""Hard delete: erase a memory, what it came from and what carries or quotes it, from every file; nothing else.

``Store.erase(namespace, memory_ids, observation_ids)`` removes, in one ledger transaction, within ``namespace`` only
(:func:`plan`, :func:`apply`):

1. **by identity**: the memories asked for, the messages (observations) they were formed from and the messages
   asked for, the memories formed from those messages (one that another, surviving message also supports is kept
   without the erased source: ``Plan.kept``), and every record formed from or carrying them: provenance, links,
   events, statistics, index records, the ``BaseStore`` items whose text became an erased message, the recall
   records whose query *is* an erased message (``Plan.same``, :func:`same_text`: each chat turn's recall record;
   fourth breaker run) with their feedback, and the messages of the user's own chat threads that are, or were
   observed as, an erased message;
2. **by quotation**, for a ``forget`` (a ``BaseStore`` delete goes by identity only, and by ``m:ID``): every other
   message, memory, item, recall record, link reason and event detail of the namespace that quotes identifying
   parts of what 1 erased (``needles_of`` of :mod:`memory_graph.store.quoting`): a long whole erased text; an
   identifier of any erased text (an e-mail address, a phone number, an IBAN or account number, an SSN, a personal
   code of letters and digits in any script, written with or without separators; not a period, range, amount,
   version or product term); the value of a secret or identifying slot whatever its shape ("4471", "hunter2");
   ``m:ID`` of an erased memory; a rare word of the forgotten memory's short slot value when the slot names
   someone ("Zorblax", not the employer "Northwind"), never of a whole sentence (a note);
3. **no cascade**: the needles come from 1 only, never from a text erased in 2 because it quoted them (erasing a
   locker code took the message naming it, then through that message's rare words two messages that did not).

Then a memory that only erased memories had superseded or retracted becomes current again (``_restore_heads``:
erasing "I moved to Porto" makes "I live in Lisbon" current again), unless a newer version survives above the
erased one (``chain_bridges``: erasing Porto in Lisbon -> Porto -> Berlin). The other versions of an erased
memory's chain are other statements and stay (forget each to erase it).

What is erased is remembered as salted digests of its ids and refs (``memory_graph.store.tombstones``, never the
text), so an import of an older export skips it.

Then the vectors: the index records are queued in ``index_drops`` inside the same transaction (so a crash
before they are dropped is finished by the next open) and dropped, Chroma's own log is purged of their vectors
(``Store._purge_index_files``), and both SQLite files are VACUUMed. Chat threads of the user in ``threads.sqlite3``
are rewritten without the messages that carry or quote erased content (``memory_graph.store.checkpoints``); a
thread of no known owner is left as it is (``Store.finish_erasures``).

What counts as quoting, and how a needle is matched: :mod:`memory_graph.store.quoting`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_graph.store import tombstones
from memory_graph.store.items import ITEM_REF, path_ref, value_strings
from memory_graph.store.ledger import Ledger
from memory_graph.store.quoting import (
    HASHED_MARK,
    IGNORE_MARK,
    NAME,
    VALUE_MARK,
    fold,
    identifies,
    identifying,
    is_word_needle,
    names_someone,
    needles_of,
    password_phrase,
    quotes,
    quotes_value,
    same_text,
    secret_slot_values,
    secret_values,
    shared_tokens,
    slot_value,
    text_digest,
)
from memory_graph.store.tx import Tx, now_iso


def _quoting(led: Ledger, ns: str, table: str, column: str, needles: Sequence[str]) -> set[str]:
    """Ids of rows of ``table`` in ``ns`` whose ``column`` quotes any needle (:func:`quotes`). Every row of the
    namespace is read and judged by :func:`quotes` itself: no SQL prefilter, so nothing :func:`quotes` would find
    is missed (a prefilter on a part of a needle missed ``7734 QK`` for ``7734QK``, and SQL's ``lower`` folds ASCII
    only; breaker run, issue 21). O(namespace), as the index compaction of every hard delete."""
    if not needles:
        return set()
    return {
        r["id"]
        for r in led.query(f"SELECT id, {column} AS text FROM {table} WHERE namespace=?", (ns,))
        if quotes(r["text"], needles)
    }


@dataclass
class Plan:
    """What one hard delete removes (:func:`plan`).

    memories       ids of the memories erased
    observations   ids of the observations (messages) erased
    needles        what marks a row as quoting erased content (:func:`quotes`)
    same           the erased messages' and memories' texts (:func:`same_text`): a row that carries one (a recall
                   whose query is an erased message, a chat message) goes by identity
    kept           memories formed from an erased message that another, surviving message also supports: kept,
                   without the erased source
    items          ``BaseStore`` items erased, ``(path, key, created_at)`` (:func:`_items_to_erase`)
    possible       messages kept that share a number or a code with an erased message (``quoting.shared_tokens``)
                   without being taken as quotes: shown to the user, who may erase them by id (at most
                   ``POSSIBLE_MAX``, those holding a secret's value first: :func:`_possible`)
    possible_total how many such messages there are in all
    shared         what those messages share with the erased content (``quoting.shared_tokens``): a recall record
                   (the system's own log) whose query or task holds any of it goes too (:func:`apply`)
    labels         kept messages whose ref or session id quotes erased content -> those fields (``LABELS``):
                   relabelled, not erased
    """

    memories: list[str]
    observations: list[str]
    needles: list[str]
    same: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    items: list[tuple[str, str, str]] = field(default_factory=list)
    possible: list[str] = field(default_factory=list)
    possible_total: int = 0
    shared: list[str] = field(default_factory=list)
    labels: dict[str, list[str]] = field(default_factory=dict)


POSSIBLE_MAX = 50


def plan(
    led: Ledger,
    ns: str,
    memory_ids: Sequence[str] = (),
    observation_ids: Sequence[str] = (),
    by_quotation: bool = True,
) -> Plan:
    """What erasing ``memory_ids`` and ``observation_ids`` of ``ns`` removes, all within ``ns``:

    1. by identity: the memories, the messages they were formed from (their provenance) and ``observation_ids``,
       and the memories formed from those messages;
    2. by quotation (``by_quotation``: a ``forget``): the other messages (and memories) of ``ns`` that quote the content
       erased in 1 (:func:`needles_of`: a long whole text, an identifier, a secret's value, a name a slot holds,
       ``m:ID``), and the memories formed from those messages. Without it (a ``BaseStore`` delete, which
       removes one item and what it formed, as LangGraph's stores do: an app's other items are its own records,
       eighth breaker run), only ``m:ID`` (a message citing an erased memory carries its text);
    3. no cascade: needles come only from what 1 erases, never from a text erased because it quoted it (erasing
       "My locker code is QX4471." took a message naming the code, then through its rare word "Przemek" another
       that did not, then through "Grafana" a third; fourth breaker run).

    A memory formed from an erased message that another message also supports (a corroboration) is kept without
    the erased source, unless it was asked for, quotes a needle or carries an erased text (``Plan.kept``): deleting
    one of two items that said the same thing keeps the other item's memory."""
    targets = set(memory_ids)
    obs_ids = set(observation_ids) | {
        r["observation_id"]
        for r in led.query_in(
            "SELECT observation_id FROM provenance WHERE namespace=? AND memory_id IN ({marks})",
            ns,
            sorted(targets),
        )
    }
    obs_rows = led.observations(ns, sorted(obs_ids))  # of this namespace only
    obs_ids = set(obs_rows)
    formed = _sources(led, ns, _formed_from(led, ns, obs_ids))
    only_erased = {m for m, src in formed.items() if src <= obs_ids}  # no other message supports them
    mems = led.memories(ns, sorted(targets | set(formed)))
    texts = [r["text"] for r in obs_rows.values()] + [m["text"] for m in mems.values()]
    own = [mems[m] for m in sorted((targets | only_erased) & set(mems)) if identifying(mems[m])]
    secrets = [v for m in own for v in secret_slot_values(m)]
    names = [v for m in own if NAME.search(str(m["attribute"] or "")) and (v := slot_value(m)) is not None]
    phrases = [v for m in own if (v := password_phrase(m)) is not None]
    slots = [
        v for m in targets if m in mems and names_someone(mems[m]) and (v := slot_value(mems[m])) is not None
    ]
    erased_ids = sorted((targets | only_erased) & set(mems))
    needles = needles_of(texts, slots, erased_ids, secrets, names, phrases) if by_quotation else [f"m:{m}" for m in erased_ids]
    if needles:
        needles.append(IGNORE_MARK + ns)  # the user's own id, wherever it is written, quotes nothing
    # a message quotes erased content in its text or another field ("ticket-QX4471" as its ref or session), or it
    # became an item that goes: one quoting it in its key, labels or any field, or one whose current text is an
    # erased message. An item goes with every message it became (fifteenth and sixteenth breaker runs)
    quoting, labels = _messages_quoting(led, ns, needles)
    quoting -= obs_ids
    items = _items_to_erase(led, ns, obs_ids | quoting, needles)
    quoting |= {o for item in items for o in item.messages} - obs_ids
    all_obs = obs_ids | quoting
    said = {
        same_text(r["text"]) for r in [*obs_rows.values(), *led.observations(ns, sorted(quoting)).values()]
    } - {""}
    candidates = (
        set(formed) | _formed_from(led, ns, quoting) | _quoting(led, ns, "memories", "text", needles)
    ) - targets
    kept = _supported_elsewhere(led, ns, candidates, all_obs, needles, said)
    erased = (targets & set(mems)) | (candidates - kept)
    same = {t for t in said | {same_text(mems[m]["text"]) for m in targets if m in mems} if identifies(t)}
    values = [*secrets, *phrases, *names, *(v for t in texts for v in secret_values(t))]
    shared = shared_tokens([r["text"] for r in obs_rows.values()], values) if by_quotation else []
    possible = _possible(led, ns, shared, all_obs)
    return Plan(sorted(erased), sorted(all_obs), needles, sorted(same), sorted(kept),
                [(i.path, i.key, i.created_at) for i in items], possible[:POSSIBLE_MAX], len(possible), shared,
                {o: f for o, f in labels.items() if o not in all_obs})


def _possible(led: Ledger, ns: str, shared: Sequence[str], erased: set[str]) -> list[str]:
    """The kept messages of ``ns`` that share a token or a value with the erased content (``Plan.possible``;
    ``shared``: :func:`memory_graph.store.quoting.shared_tokens`, whose values are marked ``VALUE_MARK``), those
    holding a secret's or slot's value first, then by how many of ``shared`` they hold, then oldest first: a message
    quoting the PIN is never cut from the list by 300 that mention the year (twelfth breaker run, N3)."""
    if not shared:
        return []
    ranked: list[tuple[bool, int, int, str]] = []
    for r in led.query("SELECT id, text, time FROM observations WHERE namespace=? ORDER BY time, id", (ns,)):
        hits = [t for t in shared if quotes(r["text"], [t])] if r["id"] not in erased else []
        if hits:
            ranked.append((not any(t.startswith(VALUE_MARK) for t in hits), -len(hits), len(ranked), r["id"]))
    return [i for *_, i in sorted(ranked)]


class Said:
    """Erased texts as identity compares them (``same_text(t) in said``), held as plain text (inside the hard
    delete) or as salted digests (a pending ``erase_jobs`` row, :func:`job_payload`)."""

    def __init__(self, plain: Iterable[str] = (), digests: Iterable[str] = (), salt: str = "") -> None:
        self.plain = {t for t in plain if t}
        self.digests = set(digests)
        self.salt = salt

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str) or not text:
            return False
        return text in self.plain or (bool(self.digests) and text_digest(self.salt, text) in self.digests)

    def __bool__(self) -> bool:
        return bool(self.plain or self.digests)


def job_payload(needles: Sequence[str], same: Sequence[str], salt: str) -> dict[str, Any]:
    """What an ``erase_jobs`` row keeps to scrub the chat threads later (``Tx.add_erase_job``): no whole erased text.
    A whole-text needle is kept as its length and salted digest (found again by digesting each window of that
    length, :func:`quotes`), the texts compared by identity as salted digests of their :func:`same_text`. Word
    needles (an identifier, a secret's value, a rare word of a name) and ``m:ID`` are kept as they are: they are
    what the scrub must find, with its separators optional, which no digest allows (fifth breaker run, F5)."""
    kept = []
    for needle in needles:
        if is_word_needle(needle) or needle.startswith(("m:", VALUE_MARK, IGNORE_MARK)):  # a value ("Sarah Miller") is no whole text
            kept.append(needle)
        else:
            low = fold(needle)
            kept.append(f"{HASHED_MARK}{salt}:{len(low)}:{text_digest(salt, low)}")
    return {"needles": kept, "same_digests": sorted({text_digest(salt, t) for t in same if t}), "salt": salt}


def erase_job_needles(column: str) -> tuple[list[str], Said]:
    """``(needles, same)`` of an ``erase_jobs`` row's ``needles`` column (:func:`job_payload`; a dict with plain
    ``same`` texts or a plain list of needles from an older version)."""
    value = json.loads(column)
    if isinstance(value, dict):
        return [str(n) for n in value.get("needles", [])], Said(
            plain=[str(t) for t in value.get("same", [])],
            digests=[str(d) for d in value.get("same_digests", [])],
            salt=str(value.get("salt", "")),
        )
    return [str(n) for n in value], Said()


def _formed_from(led: Ledger, ns: str, obs_ids: set[str]) -> set[str]:
    return {
        r["memory_id"]
        for r in led.query_in(
            "SELECT memory_id FROM provenance WHERE namespace=? AND observation_id IN ({marks})",
            ns,
            sorted(obs_ids),
        )
    }


def _sources(led: Ledger, ns: str, memory_ids: set[str]) -> dict[str, set[str]]:
    """``{memory id: ids of the observations it was formed from}``."""
    sources: dict[str, set[str]] = {m: set() for m in memory_ids}
    for r in led.query_in(
        "SELECT memory_id, observation_id FROM provenance WHERE namespace=? AND memory_id IN ({marks})",
        ns,
        sorted(memory_ids),
    ):
        sources[r["memory_id"]].add(r["observation_id"])
    return sources


def _supported_elsewhere(
    led: Ledger, ns: str, candidates: set[str], erased_obs: set[str], needles: list[str], said: set[str]
) -> set[str]:
    """The ``candidates`` that a message outside ``erased_obs`` also supports and whose text neither quotes a
    needle nor is the text of an erased message (``said``, :func:`same_text`)."""
    sources = _sources(led, ns, candidates)
    rows = led.memories(ns, sorted(candidates))
    return {
        m
        for m, row in rows.items()
        if sources.get(m, set()) - erased_obs
        and not quotes(row["text"], needles)
        and same_text(row["text"]) not in said
    }


def apply(cur: Tx, ns: str, planned: Plan) -> dict[str, int]:
    """Delete the planned rows inside the caller's transaction ``cur``; queue their index records for deletion.
    A recall record goes when its query quotes a needle or is an erased text (``Plan.same``: each chat turn's
    recall record's query is the user's message, which a short message without an identifier never quoted;
    fourth breaker run), and when its query or task holds what the kept messages are listed for sharing
    (``Plan.shared``: a plain PIN, a phone number's last digits, "is my PIN 4471 or 4417?"; fifteenth breaker run):
    a recall record is the system's log, which no user erases by id, so it is not listed but erased.
    Returns counts of what else was erased or restored."""
    mem_ids, obs_ids, needles = planned.memories, planned.observations, planned.needles
    logged = [*needles, *planned.shared]  # what takes a recall record or a task label (the user id counts in neither)
    same = set(planned.same)
    mset, oset = set(mem_ids), set(obs_ids)
    ended_by: dict[str, list[str]] = {}  # a surviving memory -> the erased memories that ended it
    replaced_by: dict[str, str] = {}  # an erased memory -> the memory that superseded it
    for start in range(0, len(mem_ids), 400):
        chunk = mem_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        for r in cur.execute(
            f"SELECT src_id, dst_id FROM links WHERE namespace=? AND type IN ('supersedes','retracts') "
            f"AND src_id IN ({marks})",
            (ns, *chunk),
        ).fetchall():
            ended_by.setdefault(r["dst_id"], []).append(r["src_id"])
        for r in cur.execute(
            f"SELECT src_id, dst_id FROM links WHERE namespace=? AND type='supersedes' AND dst_id IN "
            f"({marks})",
            (ns, *chunk),
        ).fetchall():
            replaced_by[r["dst_id"]] = r["src_id"]
    bridges = chain_bridges(ended_by, replaced_by, mset)
    _remember_erased(cur, ns, mem_ids, obs_ids)
    for start in range(0, max(len(mem_ids), 1), 400):
        chunk = mem_ids[start : start + 400]
        if not chunk:
            break
        marks = ",".join("?" * len(chunk))
        cur.execute(f"DELETE FROM provenance WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.execute(
            f"DELETE FROM links WHERE namespace=? AND (src_id IN ({marks}) OR dst_id IN ({marks}))",
            (ns, *chunk, *chunk),
        )
        cur.execute(f"DELETE FROM events WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.execute(f"DELETE FROM stats WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.unindex_terms(
            ns,
            cur.execute(
                f"SELECT id, text, source FROM memories WHERE namespace=? AND id IN ({marks})", (ns, *chunk)
            ).fetchall(),
        )
        cur.execute(f"DELETE FROM memories WHERE namespace=? AND id IN ({marks})", (ns, *chunk))
    erased_items = _erase_items(cur, ns, planned.items)
    for start in range(0, len(obs_ids), 400):
        chunk = obs_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        cur.execute(f"DELETE FROM provenance WHERE namespace=? AND observation_id IN ({marks})", (ns, *chunk))
        cur.execute(f"DELETE FROM observations WHERE namespace=? AND id IN ({marks})", (ns, *chunk))
    cur.executemany(
        "INSERT OR IGNORE INTO index_drops(namespace, id) VALUES (?, ?)",
        [(ns, i) for i in [*mem_ids, *obs_ids]],
    )
    for older, newer in sorted(
        bridges.items()
    ):  # the chain closes over the erased link: the old value stays replaced
        cur.add_link(ns, newer, older, "supersedes", "re-linked: the version between them was erased")
        # it held until the surviving version began (what the erased one said of its end is gone with it)
        cur.execute(
            "UPDATE memories SET valid_to=(SELECT valid_from FROM memories WHERE namespace=? AND id=?), "
            "updated_at=?, indexed=0 WHERE namespace=? AND id=?",
            (ns, newer, now_iso(), ns, older),
        )
        cur.add_event(
            ns, older, "relinked", reason="the version that replaced it was erased; superseded by the next"
        )
    restored = _restore_heads(cur, ns, sorted(set(ended_by) - mset - set(bridges)))
    erased_recalls = 0
    for rec in cur.execute(
        "SELECT id, query, task, candidates, chosen FROM recalls WHERE namespace=?", (ns,)
    ).fetchall():
        said = [rec["query"], *([rec["task"]] if rec["task"] else [])]
        if any(quotes(text, logged) for text in said) or same_text(rec["query"]) in same:
            tombstones.remember(
                cur,
                [tombstones.id_key(rec["id"])]
                + [
                    tombstones.id_key(f["id"])
                    for f in cur.execute(
                        "SELECT id FROM feedback WHERE namespace=? AND recall_id=?", (ns, rec["id"])
                    ).fetchall()
                ],
            )
            cur.execute("DELETE FROM feedback WHERE namespace=? AND recall_id=?", (ns, rec["id"]))
            cur.execute("DELETE FROM recalls WHERE namespace=? AND id=?", (ns, rec["id"]))
            erased_recalls += 1
            continue
        cands = [
            c for c in json.loads(rec["candidates"]) if c.get("id") not in mset and c.get("id") not in oset
        ]
        chosen = [c for c in json.loads(rec["chosen"]) if c not in mset]
        cur.execute(
            "UPDATE recalls SET candidates=?, chosen=? WHERE id=?",
            (json.dumps(cands), json.dumps(chosen), rec["id"]),
        )
    for row in cur.execute("SELECT DISTINCT task_class FROM stats WHERE namespace=?", (ns,)).fetchall():
        task = row["task_class"]  # a caller's task label, learned per memory: it goes as the recall's task does
        if task and quotes(task, logged):
            tombstones.remember(cur, [tombstones.task_key(ns, task)])
            cur.execute("DELETE FROM stats WHERE namespace=? AND task_class=?", (ns, task))
    for row in cur.execute("SELECT id, reason FROM links WHERE namespace=?", (ns,)).fetchall():
        if quotes(row["reason"], needles):
            cur.execute("UPDATE links SET reason='(erased)' WHERE id=?", (row["id"],))
    for row in cur.execute(
        "SELECT id, memory_id, type, detail, created_at FROM events WHERE namespace=?", (ns,)
    ).fetchall():
        try:  # JSON: matched on its strings, not on their escapes ("Zo\\u00eb")
            detail = json.loads(row["detail"] or "null")
        except ValueError:
            detail = row["detail"]
        if quotes_value(detail, needles):
            tombstones.remember(
                cur,
                [tombstones.event_key(ns, row["memory_id"], row["type"], row["detail"], row["created_at"])],
            )
            cur.execute("UPDATE events SET detail='{}' WHERE id=?", (row["id"],))
    relabelled = _relabel(cur, ns, planned.labels, oset)
    return {"recalls": erased_recalls, "restored": len(restored), "items": erased_items, "relabelled": relabelled}


def _remember_erased(cur: Tx, ns: str, mem_ids: list[str], obs_ids: list[str]) -> None:
    """Record what this erase removes (``tombstones``: salted digests, never the text) before it is deleted: the
    memory and observation ids, each observation's ref at its time, and the ids of the links that join an erased
    memory. An import then skips them (issue 21)."""
    keys = [tombstones.id_key(m) for m in mem_ids]
    for start in range(0, len(obs_ids), 400):
        chunk = obs_ids[start : start + 400]
        for row in cur.execute(
            f"SELECT id, ref, time FROM observations WHERE namespace=? AND id IN "
            f"({','.join('?' * len(chunk))})",
            (ns, *chunk),
        ).fetchall():
            keys += tombstones.observation_keys(ns, row)
    for start in range(0, len(mem_ids), 400):
        chunk = mem_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        keys += [
            tombstones.id_key(r["id"])
            for r in cur.execute(
                f"SELECT id FROM links WHERE namespace=? AND (src_id IN ({marks}) OR dst_id IN ({marks}))",
                (ns, *chunk, *chunk),
            ).fetchall()
        ]
    tombstones.remember(cur, keys)


LABELS = ("ref", "session_id")
"""The caller's labels of a message. One that quotes erased content ("ticket-QX4471", a session "case-QX4471") is
replaced by ``erased:`` and a salted digest of it (:func:`_relabel`), the message kept: a label is no part of what
was said, and one label names many messages (a file's name in every ingested line's ref, a session id), so
erasing the messages that carry it took a user's whole history (seventeenth breaker run). Who said a message
(speaker, source) is never judged: a party, as the user id is, not a quote."""


def _messages_quoting(led: Ledger, ns: str, needles: Sequence[str]) -> tuple[set[str], dict[str, list[str]]]:
    """``(ids of the messages of ns whose text quotes a needle, {id: its LABELS that quote one})``. An item's ref is
    the item's business (:func:`_items_to_erase`), never relabelled: it names the item. A ref only shaped like one
    (``item:...`` naming no item of ``ns``) is a caller's label like any other (eighteenth breaker run: it kept the
    code, neither relabelled nor listed)."""
    if not needles:
        return set(), {}
    quoting, labels = set(), {}
    items = {path_ref(r["path"], r["key"]) for r in led.query("SELECT path, key FROM items WHERE namespace=?", (ns,))}
    for row in led.query("SELECT id, text, ref, session_id FROM observations WHERE namespace=?", (ns,)):
        if row["text"] and quotes(row["text"], needles):
            quoting.add(row["id"])
        elif found := [f for f in LABELS if isinstance(row[f], str) and row[f] and quotes(row[f], needles)
                       and not (f == "ref" and row[f] in items)]:
            labels[row["id"]] = found
    return quoting, labels


def erased_label(salt: str, ns: str, label: str) -> str:
    """What a caller's label quoting erased content becomes: ``erased:`` and 16 hex digits of its salted digest
    (the store's ``tombstones.salt``). The same label of ``ns`` always becomes the same string, so a message's ref,
    its provenance and its chat thread copy's id stay equal (eighteenth breaker run: a thread message kept its
    ``note-QX4471`` id and was observed again beside its relabelled copy); none can be read back."""
    return tombstones.relabelled(salt, ns, label)


def _relabel(cur: Tx, ns: str, labels: dict[str, list[str]], erased: set[str]) -> int:
    """Replace the quoting labels of the kept messages (``Plan.labels``) by ``erased:`` and 16 hex digits of their
    salted digest (distinct labels stay distinct, none can be read back), in the message and in its provenance;
    returns how many messages were relabelled."""
    pepper = tombstones.salt(cur)
    done = 0
    for oid, fields in labels.items():
        if oid in erased:
            continue
        row = cur.execute(f"SELECT {', '.join(LABELS)} FROM observations WHERE namespace=? AND id=?", (ns, oid)).fetchone()
        if row is None:
            continue
        for name in fields:
            label = erased_label(pepper, ns, str(row[name]))
            tombstones.remember(cur, [tombstones.label_key(ns, str(row[name]))])  # said again: relabelled again
            cur.execute(f"UPDATE observations SET {name}=? WHERE namespace=? AND id=?", (label, ns, oid))
            if name == "ref":
                cur.execute("UPDATE provenance SET ref=? WHERE namespace=? AND observation_id=?", (label, ns, oid))
        done += 1
    return done


@dataclass
class _Item:
    """A ``BaseStore`` item a hard delete takes, with every message it became (each put's, each chunk's)."""

    path: str
    key: str
    created_at: str
    messages: set[str]


def _items_to_erase(led: Ledger, ns: str, erased: set[str], needles: Sequence[str]) -> list[_Item]:
    """The ``BaseStore`` items of ``ns`` that a hard delete erasing the messages ``erased`` takes: those whose
    current text (the messages of their latest put: :func:`_current_messages`) is erased, and those quoting a
    needle in their namespace labels (the user's own, the first, aside), key or any string of their value (the
    key "QX4471" of an item whose text never names the code). An item keeps its value as given, a copy of what is
    erased (issue 21). An item whose older put only was erased (it quoted) is kept, with its current text
    (sixteenth breaker run: it went, and its current message stayed without it). Listed in the plan, so that a
    preview shows them (ninth breaker run, F8)."""
    rows = led.query("SELECT path, key, value, observation_id, created_at FROM items WHERE namespace=?", (ns,))
    if not rows:
        return []
    refs: dict[str, list[Any]] = {}
    for obs in led.query("SELECT id, ref, chunk FROM observations WHERE namespace=? AND ref LIKE ? ORDER BY time, rowid",
                         (ns, ITEM_REF + "%")):
        refs.setdefault(obs["ref"], []).append(obs)
    out = []
    for row in rows:
        messages = refs.get(path_ref(row["path"], row["key"]), [])
        every = {m["id"] for m in messages} | ({row["observation_id"]} if row["observation_id"] else set())
        if _current_messages(messages, row["observation_id"]) & erased or _item_quotes(row, needles):
            out.append(_Item(row["path"], row["key"], row["created_at"], every))
    return out


def _current_messages(messages: Sequence[Any], last: str | None) -> set[str]:
    """Ids of the messages an item's latest put became: ``last`` (the item's recorded message, the last chunk of
    that put) and the chunks before it (a chunk's number counts them). Without a recorded message, all of them."""
    at = next((n for n, m in enumerate(messages) if m["id"] == last), None)
    if at is None:
        return {m["id"] for m in messages} | ({last} if last else set())
    return {m["id"] for m in messages[max(0, at - int(messages[at]["chunk"] or 1) + 1) : at + 1]}


def _item_quotes(row: Any, needles: Sequence[str]) -> bool:
    """Whether an item row quotes a needle in its namespace labels, its key or any string of its value."""
    if not needles:
        return False
    try:  # the first label is the user id, which ``IGNORE_MARK`` among the needles keeps from counting
        labels = json.loads(row["path"])
        labels = [str(p) for p in labels] if isinstance(labels, list) else [row["path"]]
    except ValueError:
        labels = [row["path"]]
    try:
        strings = list(value_strings(json.loads(row["value"])))
    except ValueError:
        strings = [row["value"]]
    return any(isinstance(text, str) and quotes(text, needles) for text in [*labels, row["key"], *strings])


def _erase_items(cur: Tx, ns: str, items: Sequence[tuple[str, str, str]]) -> int:
    """Delete the planned ``items`` (:func:`_items_to_erase`) and remember them as erased; returns how many."""
    tombstones.remember(cur, [tombstones.item_key(ns, path_ref(path, key), created) for path, key, created in items])
    cur.executemany("DELETE FROM items WHERE path=? AND key=?", [(path, key) for path, key, _ in items])
    return len(items)


def chain_bridges(
    ended_by: dict[str, list[str]], replaced_by: dict[str, str], erased: set[str]
) -> dict[str, str]:
    """Surviving memories that an erased memory had superseded while a newer version survives above it:
    ``{older id: newest surviving successor}``. Erasing the middle of Lisbon -> Porto -> Berlin must leave Lisbon
    superseded, now by Berlin, not make it current beside Berlin (breaker run, issue 14). Pure.

    Args:
        ended_by: surviving memory -> the erased memories that superseded or retracted it.
        replaced_by: erased memory -> the memory that superseded it (erased or not).
        erased: every erased memory id.
    """
    out: dict[str, str] = {}
    for older, enders in ended_by.items():
        if older in erased:
            continue
        for ender in enders:
            seen: set[str] = set()
            nxt = replaced_by.get(ender)
            while nxt is not None and nxt in erased and nxt not in seen:
                seen.add(nxt)
                nxt = replaced_by.get(nxt)
            if nxt is not None and nxt not in erased and nxt != older:
                out[older] = nxt
                break
    return out


def _restore_heads(cur: Tx, ns: str, ids: list[str]) -> list[str]:
    """Memories that only erased memories had superseded or retracted become current again (the statement that
    replaced them no longer exists, so nothing newer is known): status ``current``, no end, an event. One that
    something else still ends stays as it is."""
    restored = []
    for memory_id in ids:
        if cur.execute(
            "SELECT 1 FROM links WHERE namespace=? AND dst_id=? AND type IN ('supersedes','retracts') LIMIT 1",
            (ns, memory_id),
        ).fetchone():
            continue
        changed = cur.execute(
            "UPDATE memories SET status='current', valid_to=NULL, updated_at=?, indexed=0 WHERE "
            "namespace=? AND id=? AND status IN ('superseded','retracted')",
            (now_iso(), ns, memory_id),
        )
        if changed.rowcount:
            cur.add_event(ns, memory_id, "status:current", reason="what replaced it was erased")
            restored.append(memory_id)
    return restored
