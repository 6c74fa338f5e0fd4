"""The public Python API: ``Memory`` (observe, recall, feedback, inspect, history, forget, close).

``observe`` and ``feedback`` invoke the compiled memory subgraph (its own nodes; there is no second code path).
``recall`` calls the function the subgraph's ``retrieve`` node calls (``memory_graph.retrieval.recall``) directly:
a read runs no other node, so it needs no graph run, and a process that only recalls does not import LangGraph
(the subgraph is compiled on first use; issue 22). ``inspect``, ``history`` and ``forget`` read and edit the
ledger directly.

Every documented failure is a ``memory_graph.errors.MemoryGraphError``: ``InvalidInputError`` (also a
``ValueError``) for bad arguments, ``NotFoundError`` (also a ``KeyError``) for an id unknown in this namespace,
``StoreBusyError``, ``StoreNotFoundError``, ``StoreError`` and ``ClosedError``.
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_graph.config import MAX_USER_CHARS, Context, check_task, check_unicode
from memory_graph.errors import ClosedError, InvalidInputError, NotFoundError, StoreError
from memory_graph.records import Recall
from memory_graph.store import Store

log = logging.getLogger(__name__)

MAX_ID_CHARS = 64
MAX_K = 1000


def check_id(value: Any, what: str = "memory_id") -> str:
    """``value`` as an id string, else ``InvalidInputError`` (not a string, empty, over 64 characters)."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    value = value.strip()
    if not value or len(value) > MAX_ID_CHARS or not value.isprintable():
        raise InvalidInputError(f"{what} must be a printable id of 1 to {MAX_ID_CHARS} characters, got {value[:80]!r}")
    return value


def _check_text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty string")
    check_unicode(what, value)
    if "\x00" in value:
        raise InvalidInputError(f"{what} contains NUL bytes")
    return value


def _check_bool(value: Any, what: str) -> bool:
    if isinstance(value, bool) or (isinstance(value, numbers.Integral) and int(value) in (0, 1)):
        return bool(value)
    raise InvalidInputError(f"{what} must be True or False, got {value!r}")


class Memory:
    """Long-term memory of one namespace (``user_id``) in the store folder ``path``.

    Args:
        path: store folder; default ``MEMORY_GRAPH_STORE`` or ``./.memory-graph``.
        store: an open :class:`~memory_graph.store.Store` to use instead of ``path`` (shared, e.g. by a
            :class:`~memory_graph.langgraph_store.MemoryStore`; this object takes a reference and releases it).
        user_id: namespace; every read and write is confined to it (1 to 256 characters).
        create: create the store when ``path`` holds none (default); False raises ``StoreNotFoundError`` instead
            (the CLI's read-only commands use it, so a mistyped path is reported, not created empty).
        **overrides: any other ``Context`` field (``budget_tokens``, ``model``, ``trust``, ``linking``...).

    Opening finishes any observation a crash left stored but not yet linked (see :meth:`resume`). The store
    is held only during each call, so other processes may use the same folder.

    ``last_model_fallbacks`` lists the model calls of the latest :meth:`observe` / :meth:`observe_many` whose
    output was dropped for the offline path (the subgraph's ``model_fallbacks`` output; empty without a model).

    Raises:
        InvalidInputError: empty or invalid ``user_id``, an invalid option value, or ``path`` is a file.
        TypeError: an unknown option name.
        StoreNotFoundError: ``create=False`` and no store at ``path``.
        StoreError: the folder holds a file that is not a memory-graph ledger.
        StoreBusyError: another process held the store past the lock timeout.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | Path | None = None, user_id: str = "default", create: bool = True, *,
                 store: Store | None = None, **overrides: Any) -> None:
        self._closed = True
        self.last_model_fallbacks: list[dict[str, Any]] = []
        if not isinstance(user_id, str) or not user_id.strip() or len(user_id) > MAX_USER_CHARS:
            raise InvalidInputError(f"user_id must be a non-empty string of at most {MAX_USER_CHARS} characters")
        _check_text(user_id, "user_id")
        if path is not None:
            if not isinstance(path, (str, Path)) or not str(path).strip() or "\x00" in str(path):
                raise InvalidInputError(f"path must be a folder path, got {path!r}")
            overrides["store_path"] = str(path)
        try:
            self.context = Context().replace(user_id=user_id, **overrides)
        except TypeError:
            raise
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None
        if store is not None:
            if not isinstance(store, Store):
                raise InvalidInputError(f"store must be a memory_graph Store, got {type(store).__name__}")
            self.store = store.retain()
            self.context = self.context.replace(store_path=getattr(store, "url", None) or store.location,
                                                chroma_url=getattr(store, "chroma_url", self.context.chroma_url))
        else:
            self.store = Store.open(self.context.store_path, self.context.embedding_model, create=create,
                                    chroma_url=self.context.chroma_url)
        self._closed = False
        self._compiled: Any = None
        try:
            try:
                if self.store.ledger.erase_jobs():  # a hard delete a killed process left half done (rare); asked
                    self.store.finish_erasures()    # here first: finish_erasures imports LangGraph's thread code
            except StoreError as exc:  # an unreadable threads file: threads are optional, the store still opens
                log.warning("a hard delete's chat-thread step is unfinished: %s", exc)
            self.resume()
        except StoreError as exc:  # an unreadable index: the store still opens (inspect, history, reindex work)
            log.warning("unfinished observations were not linked on open: %s", exc)
        except BaseException:
            self.close()
            raise

    # ---- subgraph calls ------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("Memory is closed")

    @property
    def _graph(self) -> Any:
        """This object's own compiled memory subgraph, its storage injected (never looked up by path); compiled
        on first use, so a Memory that only recalls never imports LangGraph."""
        if self._compiled is None:
            from memory_graph.graph import build_memory_graph
            from memory_graph.langgraph_store import MemoryStore

            self._compiled = build_memory_graph(store=MemoryStore(self.store))
        return self._compiled

    def _invoke(self, payload: dict[str, Any]) -> dict[str, Any]:
        self._check_open()
        return self._graph.invoke(payload, context=self.context)  # type: ignore[no-any-return]

    def resume(self) -> list[dict[str, Any]]:
        """Form the memories of this namespace's observations that were stored but never linked (a process
        killed between the two steps of a turn); a no-op when there are none. Returns what was formed."""
        self._check_open()
        if not self.store.ledger.unprocessed_observations(self.context.user_id, limit=1, people_only=True):
            return []
        out = self._invoke({"resume": True})
        return list(out.get("formed", []))

    def observe(
        self,
        text: str,
        speaker: str = "user",
        time: datetime | str | None = None,
        ref: str | None = None,
        source: str | None = None,
        session_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Store one message as an observation and form memories from it.

        Args:
            text: the message (at most 1,000,000 characters, no NUL bytes). Empty or whitespace-only text is a
                no-op: nothing is stored and ``[]`` is returned. A message longer than 2,000 characters is stored
                as several observations (chunks cut at sentence ends, numbered 1, 2, ...; each keeps ``ref``), each read for
                memories (``memory_graph.nodes.split_long``).
            speaker: "user", "assistant", or a person's name; the assistant's words form no memories.
            time: when it was said (datetime or ISO-8601; naive = UTC; default now; years 1 to 9999 in UTC).
            ref: the caller's id of the message (kept as provenance).

        Returns:
            One dict per memory record formed: ``action`` (new | duplicate | supersede | retract | contest |
            forget), ``id``, ``targets`` (ids it replaced), ``reason``, ``text``, ``subject``, ``attribute``,
            ``value``, ``scope``, ``kind``, ``valid_from`` (ISO UTC), ``ref``.

        Raises:
            InvalidInputError: binary or oversized text, a field of the wrong type, or an invalid time; nothing
                is written then.
            ClosedError, StoreBusyError: see the class.
        """
        return self.observe_many([{"text": text, "speaker": speaker, "time": time, "ref": ref, "source": source,
                                   "session_id": session_id}])

    def observe_many(self, turns: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Observe several messages in one subgraph run (batched embedding; same validation and errors as
        ``observe``: all turns are validated before any is written)."""
        from memory_graph.nodes import split_long, validate_observation

        self._check_open()
        if isinstance(turns, (str, bytes, dict)) or not isinstance(turns, Iterable):
            raise InvalidInputError("turns must be an iterable of dicts")
        turns = list(turns)
        if not all(isinstance(t, dict) for t in turns):
            raise InvalidInputError("each turn must be a dict with at least 'text'")
        # a turn whose text is empty or only whitespace is a documented no-op; a long one becomes several chunks
        observations = [chunk for t in turns if not (isinstance(t.get("text"), str) and not t["text"].strip())
                        for chunk in split_long(validate_observation(t))]  # validate all before writing any
        self.last_model_fallbacks = []
        if not observations:
            return []
        out = self._invoke({"observations": observations})
        self.last_model_fallbacks = list(out.get("model_fallbacks", []))
        return list(out.get("formed", []))

    def recall(
        self,
        query: str,
        budget_tokens: int | None = None,
        as_of: datetime | str | None = None,
        task: str | None = None,
        include_history: bool = False,
    ) -> Recall:
        """Recall memories for ``query`` under a token budget (see ``memory_graph.retrieval.recall``).

        Args:
            budget_tokens: tokens of the whole context block (1 to 1,000,000; default ``Context.budget_tokens``).
            as_of: what was held at that time (datetime or ISO-8601; naive = UTC).
            task: the task class whose learned usefulness applies (a label of 1 to ``config.MAX_TASK_CHARS`` characters, no control character).

        Returns:
            ``Recall`` with ``id`` (for :meth:`feedback`), ``context`` (the fenced block), ``items`` (best
            first), ``tokens_used`` and ``candidates`` (why each was chosen or dropped).

        Raises:
            InvalidInputError: empty query, a budget that is not a whole number in range, an invalid ``as_of``,
                a ``task`` that is not a short label (``config.check_task``).
        """
        self._check_open()
        _check_text(query, "query")
        if budget_tokens is not None:
            from memory_graph.retrieval import check_budget

            try:
                budget_tokens = check_budget(budget_tokens)
            except ValueError as exc:
                raise InvalidInputError(str(exc)) from None
        if as_of is not None:
            from memory_graph.timeutil import parse_time, to_iso

            as_of = to_iso(parse_time(as_of))
        if task is not None:
            task = check_task(task)
        include_history = _check_bool(include_history, "include_history")
        from memory_graph.retrieval import recall  # what the subgraph's retrieve node runs for a query alone

        return recall(self.store, self.context, query.strip(), budget_tokens=budget_tokens, as_of=as_of, task=task,
                      include_history=include_history)

    def feedback(
        self,
        recall_id: str,
        success: bool,
        used_ids: list[str] | None = None,
        answer: str | None = None,
        replay: Callable[[list[str]], bool] | None = None,
    ) -> dict[str, Any]:
        """Report the outcome of the answer that used recall ``recall_id``; credits or blames its memories.

        Args:
            used_ids: the shown ids the answer used, when the caller knows them.
            answer: the answer text (``[m:ID]`` citations and values named in it identify used memories).
            replay: optional leave-one-out replay for a replayable responder: ``replay(ids)`` answers again
                with only the shown items ``ids`` (in their order) and returns whether it still succeeds (its
                truth value is used). Used only after a success without ``used_ids`` whose answer is ambiguous
                (see ``credit.replay_candidates``), at most ``credit.MAX_REPLAYS`` calls, never when learning
                is off; a memory whose removal loses the success is credited as used. An exception from
                ``replay`` propagates and nothing is recorded.

        Returns: ``{"recall_id", "success", "credited": {id: weight}, "blamed": {...}, "transitions": [...],
        "replays": int}``.

        Raises:
            NotFoundError: unknown recall in this namespace.
            InvalidInputError: the recall already has an outcome, ``used_ids`` were not shown by it, or an
                argument has the wrong type.
        """
        self._check_open()
        recall_id = check_id(recall_id, "recall_id")
        success = _check_bool(success, "success")
        if used_ids is not None:
            if isinstance(used_ids, (str, bytes)) or not isinstance(used_ids, (list, tuple, set)):
                raise InvalidInputError("used_ids must be a list of memory ids")
            used_ids = [check_id(u, "used_ids item") for u in used_ids]
        if answer is not None and not isinstance(answer, str):
            raise InvalidInputError(f"answer must be a string, got {type(answer).__name__}")
        if replay is not None and not callable(replay):
            raise InvalidInputError("replay must be callable")
        replays = 0
        if replay is not None and success and not used_ids and self.context.learning:
            from memory_graph.credit import replay_candidates

            shown, ambiguous = replay_candidates(self.store, self.context, recall_id, answer)
            needed = []
            for mid in ambiguous:
                replays += 1
                if not bool(replay([s for s in shown if s != mid])):
                    needed.append(mid)
            if needed:  # replay settled it: the value matches it overruled are not evidence of use
                used_ids, answer = needed, None
        out = self._invoke({"feedback": {"recall_id": recall_id, "success": bool(success), "used_ids": used_ids or [],
                                         "answer": answer}})
        return {**dict(out.get("credit") or {}), "replays": replays}

    # ---- ledger reads and edits ---------------------------------------------------------------------

    def inspect(self, memory_id: str | None = None) -> dict[str, Any]:
        """One memory's record, or a summary of the namespace when ``memory_id`` is None.

        Returns (for an id): ``id, text, kind, subject, attribute, value, scope, source, status, retention,
        valid_from, valid_to, confidence, provenance, supersedes, superseded_by, links, stats, events``.
        The summary: ``namespace, observations, memories ({status: n}), recent (50 newest)``.

        Raises:
            InvalidInputError: ``memory_id`` is not an id string.
            NotFoundError: no such memory in this namespace.
        """
        self._check_open()
        ns = self.context.user_id
        led = self.store.ledger
        if memory_id is None:
            return {"namespace": ns, "observations": led.observation_count(ns), "memories": led.status_counts(ns),
                    "recent": [dict(r) for r in led.recent_memories(ns, 50)]}
        memory_id = check_id(memory_id)
        row = led.memory(ns, memory_id)
        if row is None:
            raise NotFoundError(f"no memory {memory_id!r} in namespace {ns!r}")
        links = [dict(r) for r in led.links_of(ns, memory_id)]
        stats = led.stats(ns, [memory_id]).get(memory_id, {})
        return {
            **dict(row),
            "provenance": led.provenance(ns, [memory_id])[memory_id],
            "supersedes": [lk["dst_id"] for lk in links if lk["src_id"] == memory_id and lk["type"] in ("supersedes", "retracts")],
            "superseded_by": next((lk["src_id"] for lk in links if lk["dst_id"] == memory_id and lk["type"] in ("supersedes", "retracts")), None),
            "links": links,
            "stats": {("overall" if k == "" else k): v for k, v in stats.items()},
            "events": led.events_of(ns, memory_id),
        }

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The supersession chain through ``memory_id``, oldest first: ``[{id, text, value, status, valid_from,
        valid_to}]``.

        Raises:
            InvalidInputError: ``memory_id`` is not an id string.
            NotFoundError: no such memory in this namespace.
        """
        self._check_open()
        memory_id = check_id(memory_id)
        ns = self.context.user_id
        led = self.store.ledger
        if led.memory(ns, memory_id) is None:
            raise NotFoundError(f"no memory {memory_id!r} in namespace {ns!r}")
        chain = [memory_id]
        while (older := led.supersession_step(ns, chain[0], newer=False)) is not None and older not in chain:
            chain.insert(0, older)
        while (newer := led.supersession_step(ns, chain[-1], newer=True)) is not None and newer not in chain:
            chain.append(newer)
        rows = led.memories(ns, chain)
        return [{k: rows[m][k] for k in ("id", "text", "value", "status", "valid_from", "valid_to")} for m in chain if m in rows]

    def forget(self, memory_id: str, hard: bool = False, dry_run: bool = False) -> dict[str, Any]:
        """Retract a memory (``hard=False``: kept in history, never recalled as current) or erase it.

        ``hard=True`` erases, from every file of the store folder: the memory, the observations it came from,
        the memories formed from them (one another message also supports stays), every other observation of the
        namespace that quotes them (an answer that listed the memory, a message quoting its long text, an
        identifier in it or the name its slot holds) and what was formed from those; their links, events,
        statistics, index vectors (Chroma's log included) and the recall records whose query is or quotes one of
        them; the user's chat threads lose the messages that carry or quote them. Never through what it erased for
        quoting, never outside the user. See ``memory_graph.store.erase``.

        Returns: ``{"forgotten": [memory ids], "observations": [observation ids erased], "hard": bool}``; hard
        also ``"kept"`` (memories kept without an erased source), ``"recalls"``, ``"items"`` (counts erased),
        ``"threads"`` (threads rewritten), ``"threads_unknown_owner"`` (threads left: no known owner) and
        ``"possible_quotes"`` (``{id: text}`` of kept messages that share a number, a code or a secret's value with
        it, most likely first, at most 50; ``"possible_total"`` counts them): a plain value, a PIN "4471", is never
        taken as a quote, so a message quoting it is listed here to erase by id.

        ``dry_run=True`` (with ``hard``) writes nothing: it returns what the hard delete would erase, with the
        texts (``"memory_texts"``, ``"observation_texts"``: ``{id: text}``), the store items it would delete
        (``"items"``: ``[{"namespace", "key"}]``) and ``"dry_run": True``, so the user can
        check which of their messages count as quoting it before confirming (``Store.preview_erase``).

        ``memory_id`` may also be a message's (an observation's) id, as ``ask`` shows it (``[o:ID]``) and
        ``search_observations`` returns it: with ``hard=True`` that message is erased the same way (a message that
        formed no memory, "My PIN? It's 4471.", can be erased too); a message cannot be retracted.

        Raises:
            InvalidInputError: ``memory_id`` is not an id string, ``hard`` or ``dry_run`` is not a bool,
                ``dry_run`` without ``hard``, or a message's id without ``hard``.
            NotFoundError: no such memory or message in this namespace.
        """
        self._check_open()
        memory_id = check_id(memory_id)
        hard = _check_bool(hard, "hard")
        if _check_bool(dry_run, "dry_run") and not hard:
            raise InvalidInputError("dry_run previews a hard delete: pass hard=True with it")
        ns = self.context.user_id
        led = self.store.ledger
        if led.memory(ns, memory_id) is None:
            if not led.observations(ns, [memory_id]):
                raise NotFoundError(f"no memory or message {memory_id!r} in namespace {ns!r}")
            if not hard:
                raise InvalidInputError(f"{memory_id!r} is a message: a message is erased (hard=True), not retracted")
            if dry_run:
                return self.store.preview_erase(ns, observation_ids=[memory_id])
            return self.store.erase(ns, observation_ids=[memory_id])
        if not hard:
            with self.store.write() as tx:
                tx.retract(ns, memory_id, reason="forget (soft)")
            self.store.sync_metadata([memory_id])
            return {"forgotten": [memory_id], "observations": [], "hard": False}
        if dry_run:
            return self.store.preview_erase(ns, memory_ids=[memory_id])
        return self.store.erase(ns, memory_ids=[memory_id])

    def search_observations(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """Raw observations most similar to ``query`` (observations stay searchable):
        ``[{id, text, speaker, time, ref, similarity}]``, at most ``k`` (1 to 1000).

        Raises:
            InvalidInputError: empty or non-string query, ``k`` not a whole number in range.
        """
        self._check_open()
        _check_text(query, "query")
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= int(k) <= MAX_K:
            raise InvalidInputError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
        ns = self.context.user_id
        hits = self.store.search_observations(self.store.embed([query])[0], ns, int(k))
        rows = self.store.ledger.observations(ns, [h[0] for h in hits])
        return [{**{k2: rows[i][k2] for k2 in ("id", "text", "speaker", "time", "ref")}, "similarity": round(s, 4)} for i, s in hits if i in rows]

    def close(self) -> None:
        """Release the store (idempotent)."""
        if not self._closed:
            self._closed = True
            self.store.release()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
