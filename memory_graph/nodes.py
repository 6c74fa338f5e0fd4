"""The memory subgraph's nodes: route, credit, extract, link, retrieve.

Each node reads its configuration from ``Runtime[Context]`` and its storage from the process-wide
``Store`` of ``context.store_path``.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from memory_graph import credit as credit_mod
from memory_graph import deadline as deadline_mod
from memory_graph import linking, llm_linker, relations, retrieval
from memory_graph.chat_model import make_chat_model
from memory_graph.config import Context, as_context, check_task, check_unicode
from memory_graph.errors import InvalidInputError
from memory_graph.extract import llm as llm_extractor
from memory_graph.extract import rules
from memory_graph.messages import message_text as _message_text
from memory_graph.records import MemoryRecord, Observation
from memory_graph.state import MemoryState
from memory_graph.store import Store
from memory_graph.store.tombstones import relabelled_among
from memory_graph.timeutil import parse_time, to_iso

MAX_OBSERVATION_CHARS = 1_000_000
"""Longest message accepted (characters); a longer one is refused with ``InvalidInputError``."""
CHUNK_CHARS = 2_000
"""A message longer than this is stored as several observations (chunks) of at most this many characters."""


def get_store(ctx: Context, runtime: Runtime[Context] | None = None) -> Store:
    """The storage of this run: the one injected as the graph's store (``compile(store=MemoryStore(...))``, a
    LangGraph Server's configured store, ``runtime.store``) when it is a memory-graph store, else the store folder
    of the context (``Context.store_path``, opened once per process; it holds no lock between operations)."""
    return Store.of(runtime.store if runtime is not None else None, ctx.store_path, ctx.embedding_model, ctx.chroma_url)


def _ctx(runtime: Runtime[Context] | None) -> Context:
    return as_context(runtime.context if runtime is not None else None)


def _speaker(msg: AnyMessage) -> str | None:
    if isinstance(msg, HumanMessage):
        return msg.name or "user"
    if isinstance(msg, AIMessage):
        return "assistant"
    if isinstance(msg, ToolMessage):
        return "tool"
    return None


def _pending_messages(store: Store, ns: str, messages: list[AnyMessage]) -> list[dict[str, Any]]:
    """Messages not yet stored as observations (matched by message id = observation ref)."""
    out = []
    labels = relabelled_among(store.ledger.query, ns, [m.id for m in messages])
    refs = [labels.get(m.id, m.id) for m in messages if m.id]
    seen = {r["ref"] for r in store.ledger.observations_by_ref(ns, refs)}
    for m in messages:
        speaker = _speaker(m)
        text = _message_text(m).strip()
        if speaker is None or not text or (m.id and labels.get(m.id, m.id) in seen):
            continue
        time = (m.additional_kwargs or {}).get("time")
        out.append({"text": text, "speaker": speaker, "time": time, "ref": m.id, "source": speaker})
    return out


def validate_observation(obs: dict[str, Any]) -> dict[str, Any]:
    """Normalise one observation dict; raises ``InvalidInputError`` (a ValueError) on empty/binary/huge text, a
    text, speaker, source, ref or session id that is not a string, holds a NUL byte or cannot be stored as UTF-8
    (lone surrogates), a bad time, or a ``chunk`` (default 1) that is not a whole number from 1."""
    text = obs.get("text")
    if not isinstance(text, str):
        raise InvalidInputError("observation text must be a string")
    if "\x00" in text:
        raise InvalidInputError("observation text contains NUL bytes (binary data is not accepted)")
    text = text.strip()
    if not text:
        raise InvalidInputError("observation text is empty")
    check_unicode("observation text", text)
    for name in ("speaker", "source", "ref", "session_id"):
        if obs.get(name) is not None:
            if not isinstance(obs[name], str):
                raise InvalidInputError(f"observation {name} must be a string, got {type(obs[name]).__name__}")
            if len(obs[name]) > 1000:
                raise InvalidInputError(f"observation {name} is {len(obs[name])} characters; the limit is 1000")
            check_unicode(f"observation {name}", obs[name])
            if "\x00" in obs[name]:  # no backend stores it alike (PostgreSQL refuses it): refused everywhere
                raise InvalidInputError(f"observation {name} contains NUL bytes")
    if len(text) > MAX_OBSERVATION_CHARS:
        raise InvalidInputError(f"observation text is {len(text)} characters; the limit is {MAX_OBSERVATION_CHARS}")
    chunk = obs.get("chunk", 1)  # which part of its message (split_long); 1 for a whole message
    if isinstance(chunk, bool) or not isinstance(chunk, int) or not 1 <= chunk <= MAX_OBSERVATION_CHARS:
        raise InvalidInputError(f"observation chunk must be a whole number from 1, got {chunk!r}")
    speaker = str(obs.get("speaker") or "user").strip() or "user"
    time = to_iso(parse_time(obs.get("time")))
    return {
        "text": text, "speaker": speaker, "time": time, "ref": obs.get("ref"),
        "source": str(obs.get("source") or speaker), "session_id": obs.get("session_id"), "chunk": chunk,
    }


def split_long(obs: dict[str, Any], size: int = CHUNK_CHARS) -> list[dict[str, Any]]:
    """A validated observation as one or more chunks of at most ``size`` characters, cut at a sentence end or a
    line break (else at a space, else anywhere) in the second half of a chunk. Every chunk keeps the message's
    speaker, source, time, session and ``ref`` (as given: a chunk is never named by editing the caller's ref) and
    has its number ``chunk`` (1, 2, ...), so memories formed from a long message keep provenance to the part they
    came from, the message is recognised as already observed by its ref, and each chunk is embedded and recalled
    on its own (the embedder reads only the first 256 tokens of a text)."""
    text = obs["text"]
    if len(text) <= size:
        return [obs]
    chunks: list[str] = []
    while len(text) > size:
        window = text[:size]
        cut = max((m.end() for m in re.finditer(r"[.!?](?:\s|$)|\n", window) if m.end() > size // 2), default=0)
        if not cut:
            space = window.rfind(" ")
            cut = space + 1 if space > size // 2 else size
        chunks.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        chunks.append(text)
    return [{**obs, "text": chunk, "chunk": k} for k, chunk in enumerate((c for c in chunks if c), start=1)]


def check_input(state: MemoryState) -> None:
    """Raise ``InvalidInputError`` for an input key of the wrong type (a ``langgraph dev`` run sends JSON
    straight in): ``query``/``task``/``as_of``/``last_recall_id`` strings, ``observations`` a list of dicts,
    ``feedback`` ``{recall_id: str, success: bool, ...}``, ``budget_tokens`` a token count."""
    for name in ("query", "task", "as_of", "last_recall_id"):
        value = getattr(state, name)
        if value is not None and not isinstance(value, str):
            raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
        if isinstance(value, str):
            check_unicode(name, value)
    if state.task:  # a label, as ``Memory.recall`` takes one
        check_task(state.task)
    if not isinstance(state.observations, list) or not all(isinstance(o, dict) for o in state.observations):
        raise InvalidInputError("observations must be a list of {text, speaker, time, ...} objects")
    fb = state.feedback
    if fb is not None and not (isinstance(fb, dict) and isinstance(fb.get("recall_id"), str) and isinstance(fb.get("success"), bool)):
        raise InvalidInputError("feedback must be {recall_id: string, success: true|false, ...}")
    if state.budget_tokens is not None:
        retrieval.check_budget(state.budget_tokens)


def route(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Plan this turn: which of credit, extract(+link), retrieve run (after ``check_input``)."""
    check_input(state)
    plan: list[str] = []
    newest_human = next((m for m in reversed(state.messages) if isinstance(m, HumanMessage)), None)
    if state.feedback or (state.last_recall_id and newest_human is not None):
        plan.append("credit")
    if state.observations or state.messages or state.resume:
        plan.append("extract")
    if state.query.strip() or newest_human is not None:
        plan.append("retrieve")
    # one deadline for every model call of this run (extraction, LLM linker); a caller's is used as given. A batch
    # of messages (observe_many, ingest) gets the budget once per message: one budget for 32 messages made a slow
    # local model fall back to the rules for most of a batch (breaker run)
    ctx = _ctx(runtime)
    seconds = ctx.model_deadline_s * max(1, len(state.observations))
    return {"plan": plan, "turn_deadline": deadline_mod.resolve(state.deadline, seconds), "deadline": None,
            "model_fallbacks": []}


def credit(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Apply the explicit feedback, or infer the previous answer's outcome from the next user turn."""
    ctx = _ctx(runtime)
    store = get_store(ctx, runtime)
    fb = state.feedback
    if fb:
        result = credit_mod.apply_feedback(
            store, ctx, fb["recall_id"], bool(fb["success"]), used_ids=fb.get("used_ids"), answer=fb.get("answer"),
            tool_args=fb.get("tool_args", ""), origin="explicit",
        )
        return {"credit": result, "feedback": None}
    recall_id = state.last_recall_id
    recall = store.ledger.recall(ctx.user_id, recall_id) if recall_id else None
    humans = [i for i, m in enumerate(state.messages) if isinstance(m, HumanMessage)]
    if recall is None or recall["outcome"] is not None or len(humans) < 2:
        return {"credit": None}
    last_h, prev_h = humans[-1], humans[-2]
    newest_id = state.messages[last_h].id
    if newest_id and store.ledger.has_observation_ref(ctx.user_id, newest_id):
        return {"credit": None}  # not a new user turn (e.g. a second call within the same turn)
    answer = next((_message_text(m) for m in reversed(state.messages[prev_h:last_h]) if isinstance(m, AIMessage) and _message_text(m)), "")
    tool_args = " ".join(str(tc.get("args")) for m in state.messages[prev_h:last_h] if isinstance(m, AIMessage) for tc in m.tool_calls)
    success = credit_mod.infer_outcome(_message_text(state.messages[last_h]))
    result = credit_mod.apply_feedback(store, ctx, recall_id, success, answer=answer, tool_args=tool_args, origin="inferred")  # type: ignore[arg-type]
    return {"credit": result}


def extract(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Store the new observations (one transaction) and extract memory records from them."""
    ctx = _ctx(runtime)
    store = get_store(ctx, runtime)
    raw = list(state.observations) + _pending_messages(store, ctx.user_id, state.messages)
    observations = [chunk for o in raw for chunk in split_long(validate_observation(o))]
    # a label a hard delete relabelled takes its relabelled form again (the same message re-ingested is known)
    labels = relabelled_among(store.ledger.query, ctx.user_id, [o[f] for o in observations for f in ("ref", "session_id")])
    for o in observations:
        o["ref"], o["session_id"] = labels.get(o["ref"], o["ref"]), labels.get(o["session_id"], o["session_id"])
    refs = [o["ref"] for o in observations if o["ref"]]
    reprocess: list[Observation] = []
    if refs:  # the same message (same ref and text) observed again: a no-op once its memories were formed
        known = {(r["ref"], r["text"]): r for r in store.ledger.observations_by_ref(ctx.user_id, refs)}
        reprocess = [  # stored earlier but interrupted before linking: form its memories now
            Observation(**{k: known[key][k] for k in ("id", "text", "speaker", "source", "time", "session_id", "ref")})
            for key in dict.fromkeys((o["ref"], o["text"]) for o in observations)
            if key in known and not known[key]["processed"]
        ]
        observations = [o for o in observations if (o["ref"], o["text"]) not in known]
    # observations a crash left stored but unlinked (this namespace; people's turns are re-read, others only
    # marked processed by the link node)
    seen = {o.id for o in reprocess}
    reprocess += [
        Observation(**{k: r[k] for k in ("id", "text", "speaker", "source", "time", "session_id", "ref")})
        for r in store.ledger.unprocessed_observations(ctx.user_id)
        if r["id"] not in seen
    ]
    if not observations and not reprocess:
        return {"extracted": [], "observations": [], "observed": []}
    # the model is configured before anything is written: a configuration error (no key) stores nothing
    model = make_chat_model(ctx.model, ctx.base_url, deadline=state.turn_deadline, budget_s=ctx.model_deadline_s) if ctx.model else None
    stored: list[Observation] = list(reprocess)
    with store.write() as tx:
        for o in observations:
            stored.append(Observation(id=tx.add_observation(ctx.user_id, **o, withheld=rules.withheld(o["text"])), **o))
    records: list[MemoryRecord] = []
    fallbacks: list[dict[str, Any]] = []
    pasted = _pasted(observations, stored)
    for obs in stored:
        found = (llm_extractor.extract(model, obs, mode=ctx.structured_output, fallbacks=fallbacks)
                 if model is not None else rules.extract(obs))
        records.extend(r for r in found if not (obs.id in pasted and rules.is_free_text(r)))
    # one embedding run for the messages and what was extracted from them, without holding the store (seconds
    # for a pasted log); the link node reads the records' vectors and indexes the messages from the cache
    store.embed([o.text for o in stored] + [r.text for r in records])
    # the observations are indexed by the link node, in one write with the memories formed from them
    return {"extracted": [r.model_dump() for r in records], "observations": [], "observed": [o.id for o in stored],
            "model_fallbacks": fallbacks}


def _pasted(observations: list[dict[str, Any]], stored: list[Observation]) -> set[str]:
    """Ids of the ``stored`` observations that are chunks of a message longer than one chunk (a paste: a log, a
    document). Such a message is kept whole as observations (searchable, recalled raw) and forms only its slot
    facts ("I live in Porto."), never free-text notes: each note would be a raw slab of the chunk, and a 200 KB
    log formed 91 of them (issue 21). ``observations`` are the new ones in ``split_long`` order, ``stored``
    their stored forms after the reprocessed ones."""
    new = stored[len(stored) - len(observations):]
    chunks = [int(o.get("chunk", 1)) for o in observations]
    return {obs.id for i, obs in enumerate(new)
            if chunks[i] > 1 or (i + 1 < len(chunks) and chunks[i + 1] == 2)}


def link(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Link the extracted records to what they supersede, write them, and mark this run's observations
    processed (in the same transaction), so an interrupted run is completed when the message comes again."""
    ctx = _ctx(runtime)
    store = get_store(ctx, runtime)
    records = [MemoryRecord.model_validate(r) for r in state.extracted]
    model = make_chat_model(ctx.model, ctx.base_url, deadline=state.turn_deadline, budget_s=ctx.model_deadline_s) if ctx.model and ctx.llm_linker and ctx.linking else None
    fallbacks: list[dict[str, Any]] = []
    proposals = (llm_linker.propose_all(model, store, ctx.user_id, records, mode=ctx.structured_output, fallbacks=fallbacks)
                 if model is not None else {})
    relate = relations.default_model().relate if ctx.linking and ctx.linker == "model" and records else None
    actions = linking.link_records(store, ctx, records, processed=state.observed, proposals=proposals, relate=relate)
    if actions:  # a store that grew in this process keeps good query plans (stale statistics cost 2x per recall)
        store.ledger.analyze_if_stale()
    formed = []
    for action in actions:
        r = action.pop("record")
        formed.append({**action, "text": r.text, "subject": r.subject, "attribute": r.attribute, "value": r.value,
                       "scope": r.scope, "kind": r.kind, "valid_from": r.valid_from, "ref": r.ref})
    return {"formed": formed, "extracted": [], "observed": [], "model_fallbacks": [*state.model_fallbacks, *fallbacks]}


def retrieve(state: MemoryState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Recall context for the query (or the newest human message) under the token budget."""
    ctx = _ctx(runtime)
    store = get_store(ctx, runtime)
    query = state.query.strip()
    if not query:
        newest = next((m for m in reversed(state.messages) if isinstance(m, HumanMessage)), None)
        query = _message_text(newest).strip() if newest is not None else ""
    if not query:
        return {"memory_context": "", "recall": None}
    result = retrieval.recall(
        store, ctx, query, budget_tokens=state.budget_tokens, as_of=state.as_of, task=state.task,
        include_history=state.include_history, exclude_observations=set(state.observed),
    )
    return {"memory_context": result.context, "recall": result.model_dump(), "last_recall_id": result.id}


def after_route(state: MemoryState) -> str:
    return state.plan[0] if state.plan else "__end__"


def after_credit(state: MemoryState) -> str:
    rest = [p for p in state.plan if p != "credit"]
    return rest[0] if rest else "__end__"


def after_link(state: MemoryState) -> str:
    return "retrieve" if "retrieve" in state.plan else "__end__"
