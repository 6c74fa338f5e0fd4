"""Linking: decide for each new memory record whether it is new, a duplicate, an update (supersedes),
a retraction, or a contested claim, and write the result to the ledger in one transaction.

Rules (measured on the supersession suite of evals/):
- same subject + attribute + scope, single-valued attribute (``cardinality``: declared by the rule
  extractor, or learned from confirmed replacements), different value -> the newer supersedes the
  older (old: ``valid_to`` = new ``valid_from``, status ``superseded``, link with the reason). Records that
  arrive out of time order are linked the other way round.
- same subject + attribute + scope + value -> duplicate: provenance merged (corroboration), nothing dropped.
- free-text statements: the update model (``memory_graph.relations``, trained in ``training/``) reads the new
  message beside the nearest live memories of its party and scope (``model_verdict``) and decides what it
  replaces, corrects, ends or asks to forget (``memory_graph.update_decision``), where the rules below link nothing.
- multi-valued attributes (pets, likes, languages, hobbies, or "also"/"too") never supersede each other.
- with a chat model, the LLM linker's proposals (``memory_graph.llm_linker``) are used where these rules
  find no predecessor, under the same scope, subject and cardinality rules.
- negation ("I no longer eat fish", "we stopped using Kafka") retracts the matching current memories.
- "forget my X" retracts the current memories about X (a soft forget; hard erase is ``forget(hard=True)``).
- events (things that happened) are never superseded.
- ``trust="source"``: a conflicting claim from another source marks both ``contested``.

Invariants (property-tested in tests/test_link_invariants.py and tests/test_determinism.py):
- a link never crosses parties or scopes: ``may_link``, enforced in ``link_targets``, the one place that
  hands rows to the writers (a third party such as "Ana" never supersedes the user's or the group's facts);
- the same turns give the same links: candidates are ranked by similarity, then time, then text
  (``ranked``), never by the random ids or the index's insertion order, and memories written earlier in the
  same batch are scored like indexed ones, so batch boundaries do not change the result.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

import snowballstemmer
from wordfreq import zipf_frequency

from memory_graph.config import Context
from memory_graph.extract.rules import (
    FORGET_TOPIC,
    WE,
    is_forget_request,
    is_reminder,
    mask_frame,
    speaker_subject,
    split_sentences,
)
from memory_graph.records import FORGET_REQUEST, LIVE_STATUSES, MemoryRecord
from memory_graph.stopwords import english_stop_words
from memory_graph.store import Store, Tx
from memory_graph.store.lexical import LEXICAL_FETCH, LEXICAL_K
from memory_graph.tokens import count_tokens
from memory_graph.update_decision import Candidate, Relate, Verdict, decide, shortlist

MULTI_VALUED = {"pets", "likes", "dislikes", "languages", "hobbies", "children", "friends", "siblings", "skills"}




def normalise_value(value: str) -> str:
    """Lower-case value without articles and punctuation, for duplicate detection."""
    v = re.sub(r"[^\w\s.+#]", " ", value.lower())  # "C++" and "C#" stay apart from "C"
    v = re.sub(r"\b(?:the|a|an|my|our|now|still)\b", " ", v)
    return re.sub(r"\s+", " ", v).strip(" .") or value.strip().lower()  # emoji-only values compare as given


Cardinality = Literal["single", "multi", "unknown"]
LEARN_SINGLE_AFTER = 2
"""Confirmed replacements (update wording, an LLM linker's proposal, a correction after a failed answer)
after which an attribute of unknown cardinality is taken as single-valued, if nothing contradicts it."""


def cardinality(store: Store, namespace: str, record: MemoryRecord) -> Cardinality:
    """How many values the record's attribute holds at once, in this namespace.

    - ``multi``: a known multi-valued attribute (``MULTI_VALUED``), the record's own cue ("also", "too",
      "are"), or counter-evidence: a value was added beside a live one with such a cue (``coexist`` votes) at
      least as often as one was replaced;
    - ``single``: the rule extractor's attributes (each of its patterns declares its cardinality: where one
      lives, works, "the tool for X", "my X is ..."; votes never change a declared attribute), or learned: at
      least ``LEARN_SINGLE_AFTER`` confirmed replacements and no counter-evidence;
    - ``unknown``: anything else (an LLM extractor's open attribute names); such a value replaces the old
      one only with update wording or an LLM linker's proposal, otherwise both stay current.
    """
    if record.multi or record.attribute in MULTI_VALUED:
        return "multi"
    if record.extractor.startswith("rules"):
        return "single"
    return learned_cardinality(store, namespace, record.attribute)


def learned_cardinality(store: Store, namespace: str, attribute: str) -> Cardinality:
    """What the namespace's schema votes say about an undeclared ``attribute`` (see ``cardinality``)."""
    replacements, coexist = store.ledger.schema_votes(namespace, attribute)
    if coexist and coexist >= replacements:
        return "multi"
    return "single" if replacements >= LEARN_SINGLE_AFTER and not coexist else "unknown"


RETRACT_SIMILARITY = 0.55
RETRACT_NEIGHBOURS = 50
"""Candidates a retraction looks at by meaning: more than the memories it could end."""


def compatible_subjects(record: MemoryRecord) -> list[str]:
    """Subjects whose memories this record may update (a pre-filter for queries): the group ("we") and its
    speaker's own facts update each other; a third party's facts ("Leo") only their own. ``may_link`` is the
    rule itself (it also asks that a "we" row paired with a person's own fact was said by that person)."""
    own = speaker_subject(record.source)
    if record.subject in (WE, own):
        return sorted({WE, own})
    return [record.subject]


def same_party(subject: str, source: str, other_subject: str, other_source: str) -> bool:
    """Whether two statements' subjects belong to one party: the same subject (a person, or the group "we"
    of the namespace, whoever says it), or a speaker's own subject and the group "we" *said by that speaker*
    ("I moved to Porto" / "We live in Berlin", both from the user). A third party ("Ana", "user's sister")
    is its own party: never the user's, never the group's."""
    if subject == other_subject:
        return True
    if subject == WE:
        return other_subject == speaker_subject(source)
    if other_subject == WE:
        return subject == speaker_subject(other_source)
    return False


def may_link(record: MemoryRecord, row: Mapping[str, Any] | Any) -> bool:
    """THE linking invariant, checked for every memory a record would supersede, retract, contest or merge
    into (``link_targets`` is the one place that hands rows to the writers): the row is of the record's
    party (``same_party``) and of the same scope. Two exceptions, a user's commands rather than claims: a
    "forget my X" request that names no scope covers X in every scope of its party, and a "forget what I said
    about X" request covers what its speaker said on X, whoever it was about (and only that)."""
    if record.forget and record.attribute == FORGET_TOPIC:
        return bool(row["source"] == record.source)
    if not same_party(record.subject, record.source, row["subject"], row["source"]):
        return False
    return row["scope"] == record.scope or (record.forget and not record.scope)


NEIGHBOURS = 12
INDEX_MARGIN = 8
"""Extra index hits asked for beyond NEIGHBOURS: memories ended earlier in the same batch still look live to
the index until the batch's end (and ties at the cut), so the cut is made after the ledger has its say."""
SIM_DECIMALS = 5
"""Similarities are compared at this precision: a vector scored by the index and the same vector scored from
the batch's cache (float32 arithmetic of two kinds) then rank alike, and exact ties are seen as ties."""


def ranked(scored: Sequence[tuple[Any, float]]) -> list[tuple[Any, float]]:
    """``(row, similarity)`` pairs, most similar first; ties (equal at SIM_DECIMALS) go to the newest
    statement, then by text and value. The order depends on the rows alone: never on ids (drawn at random),
    on the order the index received its records, or on where a batch began."""
    out = sorted(scored, key=lambda p: (p[0]["text"], p[0]["value"]))
    out.sort(key=lambda p: p[0]["valid_from"], reverse=True)  # stable: text order kept within one time
    out.sort(key=lambda p: -round(p[1], SIM_DECIMALS))
    return out


def nearest_live(store: Store, ns: str, vector: Any, k: int, scope: str | None = None, pending: Sequence[str] = ()) -> list[tuple[Any, float]]:
    """The ``k`` live (current or contested) memories nearest to ``vector`` (of ``scope`` when given), as
    ``(row, cosine)`` in ``ranked`` order. ``pending``: ids written earlier in the same batch (not yet in the
    vector index), scored like indexed ones, so a batch's boundaries do not change the answer."""
    where: dict[str, Any] = {"status": {"$in": list(LIVE_STATUSES)}}
    if scope is not None:
        where["scope"] = scope
    scores = dict(store.search_memories(vector, ns, k + INDEX_MARGIN, where))
    rows = store.ledger.memories(ns, list(dict.fromkeys([*scores, *pending])))
    fresh = [rows[mid] for mid in dict.fromkeys(pending) if mid in rows and mid not in scores]
    if fresh:
        scores.update(zip([r["id"] for r in fresh], (store.embed([r["text"] for r in fresh]) @ vector).tolist(), strict=True))
    live = [(r, scores[r["id"]]) for r in rows.values() if r["status"] in LIVE_STATUSES and (scope is None or r["scope"] == scope)]
    return ranked(live)[:k]


def live_neighbours(store: Store, ns: str, record: MemoryRecord, pending: Sequence[str] = (), k: int = NEIGHBOURS) -> list[Any]:
    """The memories ``record`` could replace, nearest first: among the ``k`` nearest live memories of the
    record's scope by text (``nearest_live``), the asserted, non-event, single-valued ones it may link to
    (``may_link``), dated at or before it."""
    nearest = nearest_live(store, ns, store.embed([record.text])[0], k, record.scope, pending)
    return [r for r, _ in nearest if r["kind"] != "event" and not r["multi"] and r["polarity"] > 0
            and r["valid_from"] <= record.valid_from and may_link(record, r)]


STOPWORDS = {"the", "and", "any", "more", "anymore", "longer", "about", "with", "that", "this", "have", "from", "user"}


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return snowballstemmer.stemmer("english")


def _content_stems(text: str) -> set[str]:
    """Snowball (Porter 2) stems of the content words, short ones included ("smoking" and "smoke" share
    "smoke"; "AWS", "Go" and "C" count); empty for a value with no word (an emoji)."""
    words = [w for w in re.findall(r"[a-z0-9+#]+", text.lower()) if w not in STOPWORDS and w not in english_stop_words()]
    return set(_stemmer().stemWords(words))


def _names(text: str) -> set[str]:
    """The capitalised or numbered tokens of ``text`` wherever they stand ("Rex", "Civic", "3B"), lower-cased,
    without "I" and stop words. Matching names on both sides, both capitalised, is what makes "Rex died" name
    the pet "dog named Rex" (a sentence-initial common word is rarely capitalised in a stored value)."""
    tokens = re.findall(r"(?<![\w'-])(?:[A-Z][\w.+#-]*|[\w-]*\d[\w.-]*)", text)
    return {t.rstrip(".").lower() for t in tokens if t != "I" and t.rstrip(".").lower() not in english_stop_words()}


def _same_value(retracted: str, value: str) -> bool:
    """Whether a retraction's value names ``value``: shared content stems, or equal values when it has none."""
    stems = _content_stems(retracted)
    return bool(stems & _content_stems(value)) if stems else normalise_value(retracted) == normalise_value(value)


def _retraction_targets(store: Store, namespace: str, record: MemoryRecord, pending: Sequence[str] = ()) -> list[Any]:
    """Current memories of the record's party that a retraction ("I stopped drinking coffee") ends, in the
    retraction's own scope ("... in staging" ends staging's; an unscoped one ends unscoped ones: a link never
    crosses scopes, ``may_link``). A "forget my X" request that names no scope looks in every scope.

    A memory is a target when it is not an event and either (a) the record names a structured attribute
    (not a free-text frame) and the memory has that attribute with an overlapping value, or (b) the record is
    an ending event (``ends``) whose thing names a value (a name or product: ``_names``) the memory's value names too ("I sold the Civic" ends
    "The user's car is a Honda Civic"; "Kiki passed away" ends the pet Kiki, not the other pets), or (c) the
    memory is semantically close to what is retracted (cosine >= RETRACT_SIMILARITY between the retracted
    clause and the memory text) and shares a content word stem with it.
    """
    subjects = compatible_subjects(record)
    scope = record.scope if record.scope or not record.forget else None
    structured = bool(record.attribute) and record.attribute != record.frame
    stems = _content_stems(record.value)
    named = _names(record.value) if record.ends else set()  # "I sold the Civic", "Rex died": the named thing ends
    # candidates, not a Python pass over the namespace (issue 13: stemming every live memory cost 22 of 33 s per 100
    # turns at 15.8k memories): the slot's memories (an indexed query), the nearest by meaning, and for an ending
    # event the memories whose text names the thing (SQL substring match; no BM25 here: a BM25 index is rebuilt
    # whenever the namespace changed, which inside a batch is every record)
    rows = store.ledger.memories_of_attribute(namespace, subjects, record.attribute, LIVE_STATUSES) if structured else []
    near = nearest_live(store, namespace, store.embed([record.value])[0], RETRACT_NEIGHBOURS, scope, pending)
    similarity = {r["id"]: sim for r, sim in near}
    rows = [*rows, *(r for r, _ in near)]
    for name in sorted(named):
        rows += store.ledger.live_memories_quoting(namespace, subjects, name)
    out: dict[str, Any] = {}
    for row in rows:
        if row["id"] in out or row["status"] not in LIVE_STATUSES or row["subject"] not in subjects \
                or row["kind"] == "event" or row["polarity"] <= 0 or (scope is not None and row["scope"] != scope):
            continue
        if (structured and row["attribute"] == record.attribute and _same_value(record.value, row["value"])) or (
            named and named & _names(row["value"])
        ) or (row["id"] in similarity and similarity[row["id"]] >= RETRACT_SIMILARITY
              and stems & _content_stems(f"{row['value']} {row['text']}")):
            out[row["id"]] = row
    return sorted(out.values(), key=lambda r: r["valid_from"])


FORGET_SIMILARITY = 0.5
FORGET_NEIGHBOURS = 20
PAST_QUALIFIER = re.compile(r"(?:old|former|previous|past)\s+\w", re.I)


TOPIC_SIMILARITY = 0.42
"""Cosine (MiniLM) from which a sentence is about a forget request's topic, given a shared content word. Measured
on the unseen sets' forget requests (set 3, dev): the sentences they name score 0.45-0.62 ("Paddy Doyle's having a
hip replacement" to "Paddy's hip": 0.453); the other sentences of the same conversations that share a word with
the topic score below 0.35."""


def topic_sentences(store: Store, text: str, topic: str) -> list[bool]:
    """For each sentence of ``text`` (``split_sentences``): whether it is about ``topic``: it shares a content
    word stem with the topic, and its cosine to the topic is at least TOPIC_SIMILARITY. When the topic says
    something besides names, the shared word must be one of those ("Paddy's hip" is not "Paddy's birthday",
    "the Berlin office" is not "I was born in Berlin": breaker run)."""
    sentences = split_sentences(text) or [text]
    stems = {w for w in _content_stems(topic) if len(w) > 1}  # not the "s" of "Paddy's"
    stems = (stems - _content_stems(" ".join(_names(topic)))) or stems
    vectors = store.embed([topic, *sentences])
    sims = vectors[1:] @ vectors[0]
    return [bool(stems & _content_stems(s)) and float(sim) >= TOPIC_SIMILARITY for s, sim in zip(sentences, sims, strict=True)]


def _topic_targets(store: Store, namespace: str, record: MemoryRecord, pending: Sequence[str] = ()) -> list[Any]:
    """The live memories a "forget what I said about X" request covers: stated by the request's speaker, with a
    sentence about X (``topic_sentences``); candidates are the nearest by meaning and the BM25 hits for X (a long
    note that mentions X once is far from X as a whole)."""
    vector = store.embed([record.value])[0]
    rows = [r for r, _ in nearest_live(store, namespace, vector, FORGET_NEIGHBOURS, pending=pending)]
    hits = store.search_lexical(namespace, record.value, LEXICAL_FETCH)
    lexical = store.ledger.memories(namespace, hits)
    rows += [lexical[m] for m in hits if m in lexical and lexical[m]["status"] in LIVE_STATUSES][:LEXICAL_K]
    out: dict[str, Any] = {}
    for row in rows:
        if row["id"] in out or row["source"] != record.source or is_forget_request(row["text"]):
            continue
        if any(topic_sentences(store, row["text"], record.value)):
            out[row["id"]] = row
    return list(out.values())


def _forget_targets(store: Store, namespace: str, record: MemoryRecord, pending: Sequence[str] = ()) -> list[Any]:
    """Memories a "forget my X" request covers: the retraction targets, every live value of a named attribute
    X, and current memories of the same subject whose text is semantically about X (cosine >=
    FORGET_SIMILARITY to "<subject>'s X"). "forget my old/former/previous X" covers only X's superseded values.
    "forget what I said about X": ``_topic_targets``."""
    if record.attribute == FORGET_TOPIC:
        return _topic_targets(store, namespace, record, pending)
    subjects = compatible_subjects(record)
    if PAST_QUALIFIER.match(record.value):  # "forget my old address": the replaced values only
        return store.ledger.memories_of_attribute(namespace, subjects, record.attribute, ("superseded",))
    targets = {row["id"]: row for row in _retraction_targets(store, namespace, record, pending)}
    if record.attribute != record.frame:  # "forget my address": every value of the named attribute
        for row in store.ledger.memories_of_attribute(namespace, subjects, record.attribute, LIVE_STATUSES):
            targets[row["id"]] = row
    owner = "The user's" if record.subject == "user" else f"{record.subject}'s"
    vector = store.embed([f"{owner} {record.value}"])[0]
    for row, sim in nearest_live(store, namespace, vector, FORGET_NEIGHBOURS, pending=pending):
        if sim >= FORGET_SIMILARITY and row["id"] not in targets and row["subject"] in subjects:
            targets[row["id"]] = row
    if record.subject == speaker_subject(record.source) and record.value.strip():
        # the speaker's own notes keep their words: "forget my ex" covers "My ex lives in Paris." by the phrase
        phrase = re.compile(rf"\bmy {re.escape(record.value.strip())}\b", re.IGNORECASE)
        for row in store.ledger.live_memories_quoting(namespace, subjects, f"my {record.value.strip()}"):
            if phrase.search(row["text"]) and not is_forget_request(row["text"]):  # not an earlier forget request
                targets.setdefault(row["id"], row)
    return list(targets.values())


COMMON_WORD_ZIPF = 3.8


_HEAD_END = re.compile(r"\s(?:is|are|was|were)\s|:", re.IGNORECASE)
_NUMBERED = re.compile(r"\b([A-Za-z]{3,})\s+#?(\d+)\b")


def numbered_keys(text: str) -> set[str]:
    """The numbered things a statement is about, read from its head (the words before its first ``is``/``are``/
    ``was``/``were`` or colon; a statement with neither has no head): a common noun and a number ("box 17", "Note 3", "room 4"), lower-cased. Two
    statements whose heads name different numbered things are about different things, however alike their
    frames ("the locker code for box 17 is K34623" does not replace box 18's: the fresh-install helper's 1,100
    locker notes were 1,054 wrongly superseded by the topic-frame linker, and the update model read "the code for
    locker 7 is now 9876" as replacing locker 5's in the breaker run: ``model_candidates`` guards it). A capitalised name with a number ("PostgreSQL 16") is a value,
    not a key: only common English words (Zipf >= COMMON_WORD_ZIPF) count as nouns. Pure."""
    parts = _HEAD_END.split(text, maxsplit=1)
    if len(parts) < 2:  # no copula: "We moved the standup to room 4" names its value, not its key
        return set()
    return {f"{w.lower()} {n}" for w, n in _NUMBERED.findall(parts[0]) if zipf_frequency(w.lower(), "en") >= COMMON_WORD_ZIPF}


MODEL_NEIGHBOURS = 8
"""Live memories searched per new statement for the update model: the nearest of its party and scope, of which
``update_decision.shortlist`` keeps those it reads."""
LATER_CHARS = 600
"""A message up to this long that formed one record is what the model reads as the later statement (its context:
"sorry, I meant", "not Sam"); a longer one, or one of several records, is read through the record's own clause."""


def model_candidates(store: Store, ns: str, record: MemoryRecord, pending: Sequence[str] = (),
                     exclude: frozenset[str] = frozenset()) -> list[Any]:
    """The live memories the update model reads beside ``record``: of the ``MODEL_NEIGHBOURS`` nearest by meaning
    of its scope (``nearest_live``), those asserted, not events, dated at or before it, that it may link to
    (``may_link``: same party, same scope), about the same numbered thing when both name one (``numbered_keys``:
    box 3 is not box 5), other than ``exclude`` (memories formed from the same message); of those, the ones
    ``update_decision.shortlist`` keeps (the nearest, and a few more that are close)."""
    nearest = nearest_live(store, ns, store.embed([record.text])[0], MODEL_NEIGHBOURS, record.scope, pending)
    keys = numbered_keys(record.text)
    return shortlist([(r, s) for r, s in nearest if r["kind"] != "event" and r["polarity"] > 0
                      and r["valid_from"] <= record.valid_from and r["id"] not in exclude and may_link(record, r)
                      and not (keys and (other := numbered_keys(r["text"])) and not keys & other)])


def model_verdict(store: Store, ns: str, record: MemoryRecord, message: str, relate: Relate,
                  pending: Sequence[str] = (), exclude: frozenset[str] = frozenset()) -> Verdict:
    """What the update model decides for ``record`` (``update_decision.decide``) over ``model_candidates``;
    ``message``: the text of the record's observation when it formed this record alone ("" otherwise: each clause
    of a compound message is read on its own, or "I moved to Berlin" would lend its update to "my locker 2 code
    is 2222" beside it: breaker run)."""
    text = message if message.strip() and len(message) <= LATER_CHARS else record.text
    later = {"speaker": record.source, "date": record.valid_from, "text": text}
    rows = model_candidates(store, ns, record, pending, exclude)
    cands = [Candidate(r["id"], r["text"], r["source"], r["valid_from"], bool(r["multi"]) or r["attribute"] in MULTI_VALUED)
             for r in rows]
    return decide(later, cands, relate, may_forget=not is_reminder(text))


def link_records(
    store: Store, ctx: Context, records: Sequence[MemoryRecord], processed: Sequence[str] = (),
    proposals: Mapping[int, tuple[list[str], str]] | None = None, relate: Relate | None = None,
) -> list[dict[str, Any]]:
    """Write ``records`` (in time order) with their links in one transaction, marking the observations
    ``processed`` in it too; records of an observation already marked processed are skipped (a no-op). ``proposals``: the LLM linker's ``{index in records: (ids, reason)}``
    (``memory_graph.llm_linker.propose_all``), used where the rules find no predecessor. ``relate``: the update
    model (``memory_graph.relations.RelationModel.relate``; None for the rules alone): it reads each record's
    message beside the nearest live memories and decides which it outdates (``model_verdict``). Returns one action
    dict per record, in time order:
    ``{"action": "new"|"duplicate"|"supersede"|"retract"|"contest"|"forget", "id", "targets", "reason", "record"}``.
    """
    namespace = ctx.user_id
    actions: list[dict[str, Any]] = []
    touched: list[str] = []
    created: list[str] = []
    proposals = proposals or {}
    voted: set[tuple[str, str]] = set()  # (observation, attribute) pairs that already voted in this batch
    use_model = relate is not None and ctx.linking
    per_message = Counter(r.observation_id for r in records)
    messages = {oid: row["text"] for oid, row in store.ledger.observations(
        namespace, sorted(o for o, n in per_message.items() if n == 1)).items()} if use_model else {}
    formed: dict[str, set[str]] = {}  # observation id -> memories formed from it in this call
    # one hold for the turn's writes and its index write: no other process finds its messages linked but not
    # indexed (its reconcile would embed them again: breaker run, issue 21)
    with store.session():
        with store.write() as tx:
            # idempotent: an observation another run (or process) already linked forms nothing again; this run
            # and a run that picked up the same crash-interrupted observation cannot both write its memories
            done = tx.processed_among(namespace, [r.observation_id for r in records])
            for i, record in sorted(enumerate(records), key=lambda ir: ir[1].valid_from):
                if record.observation_id in done:  # report what the other run formed from it (the caller's result)
                    if (earlier := _formed_elsewhere(tx, namespace, record)) is not None:
                        actions.append(earlier)
                    continue
                verdict = None
                if use_model and relate is not None and not record.forget:
                    verdict = model_verdict(store, namespace, record, messages.get(record.observation_id, ""), relate, created,
                                            frozenset(formed.get(record.observation_id, ())))
                action = _link_one(tx, store, ctx, namespace, record, created, proposals.get(i), voted, verdict)
                if action.get("id"):
                    formed.setdefault(record.observation_id, set()).add(action["id"])
                action["record"] = record
                actions.append(action)
                touched.extend(action["targets"])
                created.extend(action.get("kept", []))  # what a forget request left of a note (``_redacted``)
                if action["action"] != "duplicate" and action["action"] != "forget":
                    created.append(action["id"])
                elif action["action"] == "duplicate":
                    touched.append(action["id"])
            tx.mark_processed(namespace, processed)
        store.index_turn(namespace, processed, created)  # one write: the turn's observations and memories
    store.sync_metadata(sorted(set(touched) - set(created)))
    return actions


def _formed_elsewhere(tx: Tx, ns: str, record: MemoryRecord) -> dict[str, Any] | None:
    """The memory another run formed for ``record`` from the same observation (provenance, same slot and value),
    as a ``"duplicate"`` action; None when it formed none for this record."""
    memory_id = tx.formed_from(ns, record.observation_id, record.subject, record.attribute, record.value)
    if memory_id is None:
        return None
    return {"action": "duplicate", "id": memory_id, "targets": [], "reason": "formed by a concurrent run", "record": record}


def _proposed(tx: Tx, store: Store, ns: str, proposal: tuple[list[str], str] | None, record: MemoryRecord) -> list[Any]:
    """The LLM linker's proposed targets that are still live, single-valued and linkable (``may_link``), marked
    with its reason; when it names memories of several attributes, only those of the first (one fact
    replaces one slot)."""
    if not proposal:
        return []
    ids, reason = proposal
    got = tx.live_by_ids(ns, ids)
    single = [r for r in got if may_link(record, r) and not r["multi"] and r["attribute"] not in MULTI_VALUED
              and (r["attribute"] == r["frame"] or learned_cardinality(store, ns, r["attribute"]) != "multi")]
    return [{**dict(r), "llm_reason": reason} for r in single if r["attribute"] == single[0]["attribute"]]


def link_targets(
    tx: Tx, store: Store, ns: str, record: MemoryRecord, card: Cardinality, pending: Sequence[str] = (),
    proposal: tuple[list[str], str] | None = None,
) -> tuple[list[Any], list[Any]]:
    """What ``record`` may link to, as ``(predecessors, ended)``: the one place where rows reach the writers
    of ``_link_one``, so the invariant is enforced here and only here: every row returned satisfies
    ``may_link(record, row)`` (same party, same scope), whichever path found it.

    - ``predecessors``: the live memories the record duplicates, supersedes or contests: same key (subject,
      attribute, scope), else the LLM linker's proposal (``_proposed``); the first path that finds a row the record
      may link to wins. Free text is the update model's (``model_verdict``), applied after these.
    - ``ended``: what a retraction ("no longer ...") or a "forget my X" request ends.
    """
    def gate(rows: Sequence[Any]) -> list[Any]:
        return [r for r in rows if may_link(record, r)]

    if record.forget:
        return [], gate(_forget_targets(store, ns, record, pending))
    subjects = compatible_subjects(record)
    free_text = record.attribute == record.frame
    asserted = record.kind != "event" and record.polarity > 0 and card != "multi"
    paths: list[Callable[[], Sequence[Any]]] = []
    if not free_text:
        paths.append(lambda: tx.live_in_slot(ns, subjects, record.attribute, record.scope))
    if asserted:
        paths.append(lambda: _proposed(tx, store, ns, proposal, record))
    predecessors: list[Any] = []
    for path in paths:
        predecessors = gate(path())
        if predecessors:
            break
    ended: list[Any] = []
    if record.polarity < 0:
        ended = gate([t for t in _retraction_targets(store, ns, record, pending) if t["valid_from"] <= record.valid_from])
    return predecessors, ended


def _redacted(store: Store, tx: Tx, ns: str, old: Any, record: MemoryRecord, encoding: str) -> str | None:
    """What a note says besides the forgotten topic, as a new memory ("the grant came through. also Paddy's having
    a hip replacement" after "forget what I told you about Paddy's hip" keeps "the grant came through."), with
    the note's provenance and dates; None when nothing is left or the memory is not a free-text note."""
    if old["attribute"] != old["frame"]:
        return None
    sentences = split_sentences(old["text"]) or [old["text"]]
    about = topic_sentences(store, old["text"], record.value)
    rest = " ".join(s for s, hit in zip(sentences, about, strict=True) if not hit).strip()
    if not rest or all(about) or len(about) != len(sentences):
        return None
    sources = store.ledger.provenance(ns, [old["id"]])[old["id"]]
    if not sources:
        return None
    kept = MemoryRecord(text=rest, kind=old["kind"], subject=old["subject"], attribute=mask_frame(rest, ""),
                        frame=mask_frame(rest, ""), value=rest, scope=old["scope"], source=old["source"],
                        valid_from=old["valid_from"], confidence=old["confidence"],
                        observation_id=sources[0]["observation_id"], ref=sources[0]["ref"] or None, extractor="redaction")
    new = tx.add_memory(ns, kept, count_tokens(rest, encoding))
    tx.add_link(ns, new, old["id"], "redacts", f"what remains after a forget request ({record.ref or record.observation_id})")
    return new


def _link_one(
    tx: Tx, store: Store, ctx: Context, ns: str, record: MemoryRecord, pending: Sequence[str] = (),
    proposal: tuple[list[str], str] | None = None, voted: set[tuple[str, str]] | None = None,
    verdict: Verdict | None = None,
) -> dict[str, Any]:
    """Link one record: the rules (``_link_rules``), then, where they linked nothing, what the update model decided
    (``verdict``; None for the rules alone). A message that only asks to forget forms no memory
    (``Verdict.request_only``)."""
    if verdict is not None and verdict.request_only and record.polarity > 0:
        live = tx.live_by_ids(ns, verdict.forgets)
        for old in live:  # held at no time, like a rule-read forget request
            tx.end_memory(ns, old["id"], FORGET_REQUEST, old["valid_from"], "retracted", "retracts",
                          f"{verdict.reason(old['id'])}: forget request ({record.ref or record.observation_id})")
        return {"action": "forget", "id": None, "targets": [r["id"] for r in live], "reason": "forget request (update model)"}
    action = _link_rules(tx, store, ctx, ns, record, pending, proposal, voted)
    if verdict is not None and action["id"] and action["action"] == "new" and action["reason"] != "out of order":
        _apply_verdict(tx, ns, record, action, verdict)  # only where the rules linked nothing: where they fire, they are exact
    return action


def _apply_verdict(tx: Tx, ns: str, record: MemoryRecord, action: dict[str, Any], verdict: Verdict) -> None:
    """End what the update model found outdated by the new memory ``action["id"]`` and the rules left live:
    superseded (replaces, corrects), retracted (ends), or retracted and held at no time (forget). Updates
    ``action`` (its targets, its action and reason when the rules had found nothing)."""
    live = {r["id"]: r for r in tx.live_by_ids(ns, [*verdict.supersedes, *verdict.ends, *verdict.forgets])}
    done = set(action["targets"]) | {action["id"]}
    ended: list[str] = []
    for ids, status, type_ in ((verdict.supersedes, "superseded", "supersedes"), (verdict.ends, "retracted", "retracts"),
                               (verdict.forgets, "retracted", "retracts")):
        for mid in ids:
            if mid not in live or mid in done:
                continue
            valid_to = live[mid]["valid_from"] if ids is verdict.forgets else record.valid_from
            tx.end_memory(ns, mid, action["id"], valid_to, status, type_, verdict.reason(mid))
            done.add(mid)
            ended.append(mid)
    if ended:
        action["targets"] = [*action["targets"], *ended]
        if action["action"] == "new":
            action["action"] = "supersede" if any(m in verdict.supersedes for m in ended) else "retract"
            action["reason"] = verdict.reason(ended[0])


def _link_rules(
    tx: Tx, store: Store, ctx: Context, ns: str, record: MemoryRecord, pending: Sequence[str] = (),
    proposal: tuple[list[str], str] | None = None, voted: set[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    voted = set() if voted is None else voted
    if record.forget:
        targets = link_targets(tx, store, ns, record, "single", pending)[1] if ctx.linking else []
        kept: list[str] = []
        for old in targets:
            # valid_to = valid_from: a forgotten memory is held at no time, so as_of recall never shows it again
            tx.end_memory(ns, old["id"], FORGET_REQUEST, old["valid_from"], "retracted", "retracts", f"forget request ({record.ref or record.observation_id})")
            if record.attribute == FORGET_TOPIC and (rest := _redacted(store, tx, ns, old, record, ctx.encoding)) is not None:
                kept.append(rest)
        return {"action": "forget", "id": None, "targets": [t["id"] for t in targets], "reason": "forget request",
                "kept": kept}

    if not ctx.linking:
        return {"action": "new", "id": tx.add_memory(ns, record, count_tokens(record.text, ctx.encoding)), "targets": [], "reason": ""}

    free_text = record.attribute == record.frame
    card: Cardinality = ("multi" if record.multi else "single") if free_text else cardinality(store, ns, record)
    same_key, retracted = link_targets(tx, store, ns, record, card, pending, proposal)
    norm = normalise_value(record.value)
    for old in same_key:
        if normalise_value(old["value"]) == norm and old["polarity"] == record.polarity:
            tx.corroborate(ns, old["id"], record.observation_id, record.ref)
            return {"action": "duplicate", "id": old["id"], "targets": [], "reason": "same key and value"}

    if record.polarity < 0:
        new = tx.add_memory(ns, record, count_tokens(record.text, ctx.encoding))
        targets = retracted
        for old in targets:
            tx.end_memory(ns, old["id"], new, record.valid_from, "retracted", "retracts", "negation / retraction wording")
        return {"action": "retract" if targets else "new", "id": new, "targets": [t["id"] for t in targets],
                "reason": "negation"}

    llm = "llm_reason" in same_key[0] if same_key else False
    if record.kind == "event" or not same_key or card == "multi" or (card == "unknown" and not record.update_cue and not llm):
        if same_key and record.kind != "event" and card == "multi" and not free_text:
            tx.vote(ns, record.attribute, "coexist")  # counter-evidence against a single-valued attribute
        return {"action": "new", "id": tx.add_memory(ns, record, count_tokens(record.text, ctx.encoding)), "targets": [], "reason": ""}

    if llm:
        reason = f"LLM linker: {same_key[0]['llm_reason'] or 'no reason given'}"
    else:
        reason = "same key, update wording" if record.update_cue else "same key, newer value"
    if ctx.trust == "source":
        conflicting = [o for o in same_key if o["source"] != record.source]
        if conflicting:
            new = tx.add_memory(ns, record, count_tokens(record.text, ctx.encoding), status="contested")
            for old in conflicting:
                tx.contest(ns, new, old["id"], f"conflicting sources {record.source} vs {old['source']}")
            same_source = [o for o in same_key if o["source"] == record.source]
            for old in same_source:
                tx.end_memory(ns, old["id"], new, record.valid_from, "superseded", "supersedes", reason + ", same source")
            return {"action": "contest", "id": new, "targets": [o["id"] for o in same_key], "reason": "conflicting sources"}

    newer = [o for o in same_key if o["valid_from"] > record.valid_from]
    if newer:  # arrived out of order: the record is already replaced by a later one
        new = tx.add_memory(ns, record, count_tokens(record.text, ctx.encoding))
        head = newer[0]
        tx.end_memory(ns, new, head["id"], head["valid_from"], "superseded", "supersedes", "same key, later value already known")
        return {"action": "new", "id": new, "targets": [], "reason": "out of order"}
    new = tx.add_memory(ns, record, count_tokens(record.text, ctx.encoding))
    for old in same_key:
        tx.end_memory(ns, old["id"], new, record.valid_from, "superseded", "supersedes", reason)
    if not free_text and (record.update_cue or llm) and (record.observation_id, record.attribute) not in voted:
        voted.add((record.observation_id, record.attribute))  # one message is one piece of evidence
        tx.vote(ns, record.attribute, "replacements")  # a confirmed replacement: evidence of a single value
    return {"action": "supersede", "id": new, "targets": [o["id"] for o in same_key], "reason": reason}
