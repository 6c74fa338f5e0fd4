"""Hard delete: erase a memory, everything it came from and everything that quotes it, from every file.

``erase(store, namespace, memory_id)`` removes, in one ledger transaction:

1. the memory, the observations it was formed from, and every memory formed from those observations;
2. every other observation of the namespace that *quotes* what is erased (it contains an erased observation's
   or memory's text of at least ``QUOTE_MIN_WORDS`` words, a distinctive value of an erased memory, or cites an erased memory as ``m:ID``; an
   assistant answer that listed the memory is such an observation), and what was formed from it, repeated until
   nothing new is found (at most ``MAX_ROUNDS`` rounds);
3. their provenance, links, events, statistics, the ``BaseStore`` items whose text became an erased observation
   or whose value quotes erased text, and the recall records whose query quoted them (with their feedback); erased ids are scrubbed from the candidate lists of the other recall records, and a remaining
   link or event whose reason quotes erased text loses that text.
4. a memory that only erased memories had superseded or retracted becomes current again (``_restore_heads``:
   what replaced it no longer exists, so nothing newer is known; erasing "I moved to Porto" makes "I live in
   Lisbon" current again), unless a newer version survives above the erased one: then the old one stays
   superseded, now by that version (``chain_bridges``: erasing Porto in Lisbon -> Porto -> Berlin).

What is erased is remembered as salted digests of its ids and refs (``memory_graph.store.tombstones``, never the
text), so an import of an older export skips it.

Then the vectors: the index records are queued in ``index_drops`` inside the same transaction (so a crash
before they are dropped is finished by the next open) and dropped, Chroma's own log is purged of their vectors
(``Store._purge_index_files``), and both SQLite files are VACUUMed. Chat threads of the namespace in
``threads.sqlite3`` are rewritten without the messages that quote erased text (``memory_graph.threads``).

A *distinctive* value is a word of at least 5 characters that is a code (letters and digits mixed, not a number
with a unit: "alpha247514q9", also inside "my token is alpha247514q9") or rare in English (wordfreq Zipf
frequency below 2.0); it is scrubbed wherever it is quoted. "Berlin", "10:30am" and "1,200" are not (erasing every
message that mentions a common word, a time or an amount would erase other facts). A whole text or ``m:ID`` is matched
as a case-insensitive substring, a word (a code, a rare word) as a whole word with its separators optional
(:func:`quotes`), over the namespace's rows: O(namespace) per hard delete, which is rare and never on a hot path.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from memory_graph.store import tombstones
from memory_graph.store.items import path_ref, value_strings
from memory_graph.store.ledger import Ledger
from memory_graph.store.tx import Tx, now_iso

MAX_ROUNDS = 5
DISTINCTIVE_ZIPF = 2.0
QUOTE_MIN_CHARS = 40
QUOTE_MIN_WORDS = 8
"""An erased text is searched for in other rows only when it is at least this long (characters and words): a
shorter one ("Thank you very much!", "the meeting is at noon") opens unrelated messages too often."""
_CODE = re.compile(r"(?=[a-z0-9]*[a-z])(?=[a-z0-9]*\d)[a-z0-9]{5,}")
"""A code: letters and digits mixed, 5 or more of them, no other character (``7734qk``, ``x12345678``)."""
_MEASURE = re.compile(r"\d+(?:am|pm|st|nd|rd|th|s|h|k|m|x|p|i|kgs?|kms?|mg|ml|mm|cm|gb|mb|kb|tb|g?hz|mins?|hrs?|hours?|"
                      r"days?|wks?|weeks?|yrs?|years?|lbs?|miles?|mph|kph|usd|eur|gbp|jpy|chf|cad|aud|inr|pts?)")
"""A number with a unit or an ordinal (``1030am``, ``10000steps`` is not: ``2nd``, ``500mg``, ``12th``)."""


def distinctive_values(values: list[str], codes_only: bool = False) -> list[str]:
    """The words of ``values`` that identify what is erased wherever they are quoted: codes (:func:`_is_code`) and,
    unless ``codes_only``, words rare in English (``wordfreq`` Zipf frequency below ``DISTINCTIVE_ZIPF``, letters
    only, at least 5 characters). A time, a date, an amount or a count ("10:30am", "2025-06-10", "1,200", "10000")
    is no identifier: deleting "call mom 10:30am" erased "My dentist appointment is at 10:30am on Friday."
    (breaker run, issue 21)."""
    from wordfreq import zipf_frequency

    out = []
    for value in values:  # each word of a value ("my token is zqxv9981kk": breaker run), not only one-word values
        for raw in value.split():
            word = raw.strip(".,;:!?\"'()[]{}<>")
            code = _is_code(re.sub(r"[-_/.]", "", word.lower()))
            rare = not codes_only and word.isalpha() and len(word) >= 5 and zipf_frequency(word, "en") < DISTINCTIVE_ZIPF
            if code or rare:
                out.append(word)
    return list(dict.fromkeys(out))


def _is_code(core: str) -> bool:
    """Whether ``core`` (a word, lower case, without ``-_/.``) is a code (:data:`_CODE`) and not a number with a
    unit (:data:`_MEASURE`), a common word with a number ("covid19", "iphone15") or a period ("fy2024", "q2025")."""
    if not _CODE.fullmatch(core) or _MEASURE.fullmatch(core) or re.fullmatch(r"[a-z]{1,3}(?:19|20)\d\d", core):
        return False
    from wordfreq import zipf_frequency

    letters = re.findall(r"[a-z]+", core)
    return not (len(letters) == 1 and len(letters[0]) >= 3 and zipf_frequency(letters[0], "en") >= 3.0)


def _quoting(led: Ledger, ns: str, table: str, column: str, needles: list[str]) -> set[str]:
    """Ids of rows of ``table`` in ``ns`` whose ``column`` quotes any needle (:func:`quotes`): found by SQL on a part
    of each needle (case-insensitive ``instr``), then checked by :func:`quotes` on the row's text."""
    found: set[str] = set()
    parts = list(dict.fromkeys(_search_part(n) for n in needles))
    for start in range(0, len(parts), 50):
        chunk = parts[start : start + 50]
        cond = " OR ".join("instr(lower(" + column + "), ?) > 0" for _ in chunk)
        found |= {r["id"] for r in led.query(f"SELECT id, {column} AS text FROM {table} WHERE namespace=? AND ({cond})",
                                              (ns, *chunk)) if quotes(r["text"], needles)}
    return found


def _search_part(needle: str) -> str:
    """What SQL looks for first: a word needle's longest run of letters or digits (``7734-QK`` -> ``7734``, so
    ``7734QK`` is found too), else the needle; lower case."""
    if _is_word(needle):
        return max(re.findall(r"\w+", needle.lower()), key=len, default=needle.lower())
    return needle.lower()


def _is_word(needle: str) -> bool:
    return not needle.startswith("m:") and not any(c.isspace() for c in needle)


@functools.lru_cache(maxsize=4096)
def _word_pattern(needle: str) -> re.Pattern[str]:
    """A word needle (a code or a rare word) as a whole word, its separators optional: ``LH714`` is not found in
    ``LH7140``, ``Ameli`` not in ``Amelie``, ``7734-QK`` is found as ``7734QK`` (second breaker run, issue 21)."""
    chars = [re.escape(c) for c in needle.lower() if c.isalnum()]
    return re.compile(r"(?<!\w)" + r"[-_/. ]?".join(chars) + r"(?!\w)")


def quotes(text: str | None, needles: Sequence[str]) -> bool:
    """Whether ``text`` quotes a needle: a whole erased text or ``m:ID`` as a case-insensitive substring, a word
    needle as a whole word (:func:`_word_pattern`)."""
    low = (text or "").lower()
    return any(_word_pattern(n).search(low) if _is_word(n) else n.lower() in low for n in needles if n)


def strings_of(value: Any) -> Iterator[str]:
    """Every string a value holds, depth first: a JSON value's strings (keys included), a chat message's content,
    tool calls, extra fields and artifact, the fields of any other object (a dataclass, a Pydantic model), else its
    ``repr``. What :func:`quotes_value` reads: each string is matched as it is, never through an encoding that
    escapes it (a quoted text with a newline is ``\\n`` in JSON)."""
    if isinstance(value, str):
        yield value
    elif value is None or isinstance(value, (bool, int, float)):
        return
    elif isinstance(value, bytes):
        yield value.decode("utf-8", errors="replace")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_of(key)
            yield from strings_of(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from strings_of(item)
    elif hasattr(value, "content") and hasattr(value, "additional_kwargs"):  # a LangChain message
        for field in ("content", "tool_calls", "additional_kwargs", "artifact"):
            yield from strings_of(getattr(value, field, None))
    elif hasattr(value, "model_dump"):
        yield from strings_of(value.model_dump())
    elif hasattr(value, "__dict__"):
        yield from strings_of(vars(value))
    else:
        yield repr(value)


def quotes_value(value: Any, needles: Sequence[str]) -> bool:
    """Whether any string of ``value`` (:func:`strings_of`) quotes a needle (:func:`quotes`): how a chat thread's
    messages and checkpoints are judged, the same matching as the ledger's rows."""
    return any(quotes(text, needles) for text in strings_of(value))


def needles_of(texts: list[str], values: list[str], memory_ids: list[str]) -> list[str]:
    """The strings whose presence marks a row as quoting erased content: whole texts of at least
    ``QUOTE_MIN_CHARS`` characters and ``QUOTE_MIN_WORDS`` words, distinctive values, ``m:ID``. A shorter text
    ("no", "e", "ok thanks") is no evidence of quoting: as a substring it is found in unrelated messages
    ("Northwind" holds "no"), and erasing those lost other facts (breaker run, issue 21). The short text's own
    rows are erased by id all the same; its distinctive values ("pin 7734qk") still mark the rows quoting it."""
    quotable = [t.strip() for t in texts if len(t.strip()) >= QUOTE_MIN_CHARS and len(t.split()) >= QUOTE_MIN_WORDS]
    short = [t for t in texts if t.strip() and t.strip() not in quotable]
    # a short text marks what quotes its codes only ("pin 7734qk"), not its rare words: erasing "Zorblax has a vet
    # visit" must not erase every message naming the cat
    out = quotable + distinctive_values(values) + distinctive_values(short, codes_only=True) + [f"m:{m}" for m in memory_ids]
    return sorted(set(out), key=lambda s: (len(s), s))


def plan(led: Ledger, ns: str, memory_ids: Sequence[str] = (),
         observation_ids: Sequence[str] = ()) -> tuple[list[str], list[str], list[str]]:
    """``(memory ids, observation ids, needles)`` that erasing ``memory_ids`` and ``observation_ids`` removes (the
    closure above)."""
    mem_ids = set(memory_ids)
    obs_ids: set[str] = set(observation_ids)
    needles: list[str] = []
    for _ in range(MAX_ROUNDS):
        obs_ids |= {r["observation_id"] for r in led.query_in(
            "SELECT observation_id FROM provenance WHERE namespace=? AND memory_id IN ({marks})", ns, sorted(mem_ids))}
        mem_ids |= {r["memory_id"] for r in led.query_in(
            "SELECT memory_id FROM provenance WHERE namespace=? AND observation_id IN ({marks})", ns, sorted(obs_ids))}
        mems = list(led.memories(ns, sorted(mem_ids)).values())
        obs = led.query_in("SELECT text FROM observations WHERE namespace=? AND id IN ({marks})", ns, sorted(obs_ids))
        needles = needles_of([r["text"] for r in obs] + [m["text"] for m in mems], [m["value"] for m in mems],
                             sorted(mem_ids))
        quoting = _quoting(led, ns, "observations", "text", needles) - obs_ids
        if not quoting:
            break
        obs_ids |= quoting
    return sorted(mem_ids), sorted(obs_ids), needles


def apply(cur: Tx, ns: str, mem_ids: list[str], obs_ids: list[str], needles: list[str]) -> dict[str, int]:
    """Delete the planned rows inside the caller's transaction ``cur``; queue their index records for deletion.
    Returns counts of recall records erased."""

    mset, oset = set(mem_ids), set(obs_ids)
    ended_by: dict[str, list[str]] = {}  # a surviving memory -> the erased memories that ended it
    replaced_by: dict[str, str] = {}  # an erased memory -> the memory that superseded it
    for start in range(0, len(mem_ids), 400):
        chunk = mem_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        for r in cur.execute(f"SELECT src_id, dst_id FROM links WHERE namespace=? AND type IN ('supersedes','retracts') "
                             f"AND src_id IN ({marks})", (ns, *chunk)).fetchall():
            ended_by.setdefault(r["dst_id"], []).append(r["src_id"])
        for r in cur.execute(f"SELECT src_id, dst_id FROM links WHERE namespace=? AND type='supersedes' AND dst_id IN "
                             f"({marks})", (ns, *chunk)).fetchall():
            replaced_by[r["dst_id"]] = r["src_id"]
    bridges = chain_bridges(ended_by, replaced_by, mset)
    _remember_erased(cur, ns, mem_ids, obs_ids)
    for start in range(0, max(len(mem_ids), 1), 400):
        chunk = mem_ids[start : start + 400]
        if not chunk:
            break
        marks = ",".join("?" * len(chunk))
        cur.execute(f"DELETE FROM provenance WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.execute(f"DELETE FROM links WHERE namespace=? AND (src_id IN ({marks}) OR dst_id IN ({marks}))", (ns, *chunk, *chunk))
        cur.execute(f"DELETE FROM events WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.execute(f"DELETE FROM stats WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.unindex_terms(ns, cur.execute(f"SELECT id, text, source FROM memories WHERE namespace=? AND id IN ({marks})",
                                          (ns, *chunk)).fetchall())
        cur.execute(f"DELETE FROM memories WHERE namespace=? AND id IN ({marks})", (ns, *chunk))
    erased_items = _erase_items(cur, ns, oset, needles)
    for start in range(0, len(obs_ids), 400):
        chunk = obs_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        cur.execute(f"DELETE FROM provenance WHERE namespace=? AND observation_id IN ({marks})", (ns, *chunk))
        cur.execute(f"DELETE FROM observations WHERE namespace=? AND id IN ({marks})", (ns, *chunk))
    cur.executemany("INSERT OR IGNORE INTO index_drops(namespace, id) VALUES (?, ?)", [(ns, i) for i in [*mem_ids, *obs_ids]])
    for older, newer in sorted(bridges.items()):  # the chain closes over the erased link: the old value stays replaced
        cur.add_link(ns, newer, older, "supersedes", "re-linked: the version between them was erased")
        # it held until the surviving version began (what the erased one said of its end is gone with it)
        cur.execute("UPDATE memories SET valid_to=(SELECT valid_from FROM memories WHERE namespace=? AND id=?), "
                    "updated_at=?, indexed=0 WHERE namespace=? AND id=?", (ns, newer, now_iso(), ns, older))
        cur.add_event(ns, older, "relinked", reason="the version that replaced it was erased; superseded by the next")
    restored = _restore_heads(cur, ns, sorted(set(ended_by) - mset - set(bridges)))
    erased_recalls = 0
    for rec in cur.execute("SELECT id, query, candidates, chosen FROM recalls WHERE namespace=?", (ns,)).fetchall():
        if quotes(rec["query"], needles):
            tombstones.remember(cur, [tombstones.id_key(rec["id"])] + [tombstones.id_key(f["id"]) for f in cur.execute(
                "SELECT id FROM feedback WHERE namespace=? AND recall_id=?", (ns, rec["id"])).fetchall()])
            cur.execute("DELETE FROM feedback WHERE namespace=? AND recall_id=?", (ns, rec["id"]))
            cur.execute("DELETE FROM recalls WHERE namespace=? AND id=?", (ns, rec["id"]))
            erased_recalls += 1
            continue
        cands = [c for c in json.loads(rec["candidates"]) if c.get("id") not in mset and c.get("id") not in oset]
        chosen = [c for c in json.loads(rec["chosen"]) if c not in mset]
        cur.execute("UPDATE recalls SET candidates=?, chosen=? WHERE id=?", (json.dumps(cands), json.dumps(chosen), rec["id"]))
    for row in cur.execute("SELECT id, reason FROM links WHERE namespace=?", (ns,)).fetchall():
        if quotes(row["reason"], needles):
            cur.execute("UPDATE links SET reason='(erased)' WHERE id=?", (row["id"],))
    for row in cur.execute("SELECT id, memory_id, type, detail, created_at FROM events WHERE namespace=?", (ns,)).fetchall():
        try:  # JSON: matched on its strings, not on their escapes ("Zo\\u00eb")
            detail = json.loads(row["detail"] or "null")
        except ValueError:
            detail = row["detail"]
        if quotes_value(detail, needles):
            tombstones.remember(cur, [tombstones.event_key(ns, row["memory_id"], row["type"], row["detail"],
                                                           row["created_at"])])
            cur.execute("UPDATE events SET detail='{}' WHERE id=?", (row["id"],))
    return {"recalls": erased_recalls, "restored": len(restored), "items": erased_items}


def _remember_erased(cur: Tx, ns: str, mem_ids: list[str], obs_ids: list[str]) -> None:
    """Record what this erase removes (``tombstones``: salted digests, never the text) before it is deleted: the
    memory and observation ids, each observation's ref at its time, and the ids of the links that join an erased
    memory. An import then skips them (issue 21)."""
    keys = [tombstones.id_key(m) for m in mem_ids]
    for start in range(0, len(obs_ids), 400):
        chunk = obs_ids[start : start + 400]
        for row in cur.execute(f"SELECT id, ref, time FROM observations WHERE namespace=? AND id IN "
                               f"({','.join('?' * len(chunk))})", (ns, *chunk)).fetchall():
            keys += tombstones.observation_keys(ns, row)
    for start in range(0, len(mem_ids), 400):
        chunk = mem_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        keys += [tombstones.id_key(r["id"]) for r in cur.execute(
            f"SELECT id FROM links WHERE namespace=? AND (src_id IN ({marks}) OR dst_id IN ({marks}))",
            (ns, *chunk, *chunk)).fetchall()]
    tombstones.remember(cur, keys)


def _erase_items(cur: Tx, ns: str, obs_ids: set[str], needles: Sequence[str]) -> int:
    """Delete the ``BaseStore`` items of ``ns`` whose text became an erased observation (by its ref or its recorded
    observation id) or whose value quotes erased text anywhere (any string of it, keys included): the item keeps
    its value as given, a copy of what is erased (issue 21). Runs before the observations are deleted (it reads
    their refs). Returns how many items were deleted."""
    refs: set[str] = set()
    ordered = sorted(obs_ids)
    for start in range(0, len(ordered), 400):
        chunk = ordered[start : start + 400]
        refs |= {r["ref"] for r in cur.execute(f"SELECT ref FROM observations WHERE namespace=? AND id IN "
                                               f"({','.join('?' * len(chunk))})", (ns, *chunk)).fetchall() if r["ref"]}
    doomed = []
    for row in cur.execute("SELECT path, key, value, observation_id, created_at FROM items WHERE namespace=?",
                           (ns,)).fetchall():
        try:
            strings = list(value_strings(json.loads(row["value"])))
        except ValueError:
            strings = [row["value"]]
        if row["observation_id"] in obs_ids or path_ref(row["path"], row["key"]) in refs \
                or any(quotes(text, needles) for text in [row["key"], *strings]):
            doomed.append((row["path"], row["key"]))
            tombstones.remember(cur, [tombstones.item_key(ns, path_ref(row["path"], row["key"]), row["created_at"])])
    cur.executemany("DELETE FROM items WHERE path=? AND key=?", doomed)
    return len(doomed)


def chain_bridges(ended_by: dict[str, list[str]], replaced_by: dict[str, str], erased: set[str]) -> dict[str, str]:
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
        if cur.execute("SELECT 1 FROM links WHERE namespace=? AND dst_id=? AND type IN ('supersedes','retracts') LIMIT 1",
                       (ns, memory_id)).fetchone():
            continue
        changed = cur.execute("UPDATE memories SET status='current', valid_to=NULL, updated_at=?, indexed=0 WHERE "
                              "namespace=? AND id=? AND status IN ('superseded','retracted')", (now_iso(), ns, memory_id))
        if changed.rowcount:
            cur.add_event(ns, memory_id, "status:current", reason="what replaced it was erased")
            restored.append(memory_id)
    return restored
