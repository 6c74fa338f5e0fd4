"""The public Python API: ``Memory`` (observe, recall, feedback, inspect, forget, close).

``observe``, ``recall`` and ``feedback`` invoke the compiled memory subgraph (its own nodes; there is no
second code path). ``inspect`` and ``forget`` read and edit the ledger directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_graph.config import Context
from memory_graph.credit import replay_candidates
from memory_graph.graph import build_memory_graph
from memory_graph.records import Recall
from memory_graph.store import Store, now_iso
from memory_graph.store.index import VectorIndex

_GRAPH = None


def _graph() -> Any:
    global _GRAPH
    if _GRAPH is None:
        _GRAPH = build_memory_graph()
    return _GRAPH


class Memory:
    """Long-term memory of one namespace (``user_id``) in the store folder ``path``.

    Args:
        path: store folder (created if missing); default ``MEMORY_GRAPH_STORE`` or ``./.memory-graph``.
        user_id: namespace; every read and write is confined to it.
        **overrides: any other ``Context`` field (``budget_tokens``, ``model``, ``trust``, ``linking``...).

    Raises:
        ValueError: empty user_id, invalid option, or ``path`` is a file.
        TypeError: an unknown option.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | Path | None = None, user_id: str = "default", **overrides: Any) -> None:
        base = Context()
        if path is not None:
            overrides["store_path"] = str(path)
        self.context = base.replace(user_id=user_id, **overrides)
        self.store = Store.open(self.context.store_path, self.context.embedding_model)
        self._closed = False

    # ---- subgraph calls ------------------------------------------------------------------------

    def _invoke(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self._closed:
            raise RuntimeError("Memory is closed")
        return _graph().invoke(payload, context=self.context)  # type: ignore[no-any-return]

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
            text: the message (non-empty, <= 20,000 characters, no NUL bytes).
            speaker: "user", "assistant", or a person's name; the assistant's words form no memories.
            time: when it was said (datetime or ISO-8601; naive = UTC; default now).
            ref: the caller's id of the message (kept as provenance).

        Returns:
            One dict per memory record formed: ``action`` (new | duplicate | supersede | retract | contest |
            forget), ``id``, ``targets`` (ids it replaced), ``reason``, ``text``, ``subject``, ``attribute``,
            ``value``, ``scope``, ``kind``, ``valid_from`` (ISO UTC), ``ref``.

        Raises:
            ValueError: empty, binary or oversized text, or an invalid time; nothing is written then.
        """
        return self.observe_many([{"text": text, "speaker": speaker, "time": time, "ref": ref, "source": source,
                                   "session_id": session_id}])

    def observe_many(self, turns: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Observe several messages in one subgraph run (batched embedding; same validation as ``observe``)."""
        from memory_graph.nodes import validate_observation

        observations = [validate_observation(t) for t in turns]  # validate all before writing any
        if not observations:
            return []
        out = self._invoke({"observations": observations})
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

        Returns:
            ``Recall`` with ``id`` (for :meth:`feedback`), ``context`` (the fenced block), ``items`` (best
            first), ``tokens_used`` and ``candidates`` (why each was chosen or dropped).

        Raises:
            ValueError: empty query, non-positive budget or invalid ``as_of``.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        if budget_tokens is not None:
            from memory_graph.retrieval import check_budget

            budget_tokens = check_budget(budget_tokens)  # ValueError for NaN, inf, fractions, < 1 or huge
        if as_of is not None:
            from memory_graph.timeutil import parse_time, to_iso

            as_of = to_iso(parse_time(as_of))
        out = self._invoke({"query": query, "budget_tokens": budget_tokens, "as_of": as_of, "task": task,
                            "include_history": include_history})
        return Recall.model_validate(out["recall"])

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
            KeyError: unknown recall in this namespace.
            ValueError: the recall already has an outcome, or ``used_ids`` were not shown by it.
        """
        replays = 0
        if replay is not None and success and not used_ids and self.context.learning:
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

        Raises:
            KeyError: no such memory in this namespace.
        """
        ns = self.context.user_id
        led = self.store.ledger
        if memory_id is None:
            counts = led.query("SELECT status, COUNT(*) AS n FROM memories WHERE namespace=? GROUP BY status", (ns,))
            recent = led.query(
                "SELECT id, text, status, retention, valid_from, valid_to, scope FROM memories WHERE namespace=? "
                "ORDER BY valid_from DESC, created_at DESC LIMIT 50", (ns,)
            )
            n_obs = led.query("SELECT COUNT(*) AS n FROM observations WHERE namespace=?", (ns,))[0]["n"]
            return {"namespace": ns, "observations": n_obs, "memories": {r["status"]: r["n"] for r in counts},
                    "recent": [dict(r) for r in recent]}
        row = led.memory(ns, memory_id)
        if row is None:
            raise KeyError(f"no memory {memory_id!r} in namespace {ns!r}")
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
        """The supersession chain through ``memory_id``, oldest first (each with status and dates)."""
        ns = self.context.user_id
        led = self.store.ledger
        chain = [memory_id]
        cur = memory_id
        while True:
            back = led.query("SELECT dst_id FROM links WHERE namespace=? AND src_id=? AND type='supersedes'", (ns, cur))
            if not back or back[0]["dst_id"] in chain:
                break
            cur = back[0]["dst_id"]
            chain.insert(0, cur)
        cur = memory_id
        while True:
            fwd = led.query("SELECT src_id FROM links WHERE namespace=? AND dst_id=? AND type='supersedes'", (ns, cur))
            if not fwd or fwd[0]["src_id"] in chain:
                break
            cur = fwd[0]["src_id"]
            chain.append(cur)
        rows = led.memories(ns, chain)
        return [{k: rows[m][k] for k in ("id", "text", "value", "status", "valid_from", "valid_to")} for m in chain if m in rows]

    def forget(self, memory_id: str, hard: bool = False) -> dict[str, Any]:
        """Retract a memory (``hard=False``: kept in history, never recalled as current) or erase it.

        ``hard=True`` erases the memory, the observations it came from (their text), the memories derived
        from those observations, their links, events, statistics and index records, then VACUUMs the
        database so the text is gone from disk.

        Returns: ``{"forgotten": [memory ids], "observations": [observation ids erased], "hard": bool}``.

        Raises:
            KeyError: no such memory in this namespace.
        """
        ns = self.context.user_id
        led = self.store.ledger
        row = led.memory(ns, memory_id)
        if row is None:
            raise KeyError(f"no memory {memory_id!r} in namespace {ns!r}")
        if not hard:
            with self.store.write_lock, led.tx() as cur:
                cur.execute(
                    "UPDATE memories SET status='retracted', valid_to=COALESCE(valid_to, ?), updated_at=?, indexed=0 "
                    "WHERE id=? AND namespace=?", (now_iso(), now_iso(), memory_id, ns),
                )
                led.add_event(cur, ns, memory_id, "status:retracted", reason="forget (soft)")
            self.store.sync_metadata([memory_id])
            return {"forgotten": [memory_id], "observations": [], "hard": False}
        obs_ids = [r["observation_id"] for r in led.query("SELECT observation_id FROM provenance WHERE namespace=? AND memory_id=?", (ns, memory_id))]
        mem_ids = {memory_id}
        mem_ids |= {r["memory_id"] for r in led.query_in(
            "SELECT memory_id FROM provenance WHERE namespace=? AND observation_id IN ({marks})", ns, obs_ids)}
        mids = sorted(mem_ids)
        mmarks = ",".join("?" * len(mids))
        with self.store.write_lock, led.tx() as cur:
            cur.execute(f"DELETE FROM provenance WHERE namespace=? AND memory_id IN ({mmarks})", (ns, *mids))
            cur.execute(f"DELETE FROM links WHERE namespace=? AND (src_id IN ({mmarks}) OR dst_id IN ({mmarks}))", (ns, *mids, *mids))
            cur.execute(f"DELETE FROM events WHERE namespace=? AND memory_id IN ({mmarks})", (ns, *mids))
            cur.execute(f"DELETE FROM stats WHERE namespace=? AND memory_id IN ({mmarks})", (ns, *mids))
            cur.execute(f"DELETE FROM memories WHERE namespace=? AND id IN ({mmarks})", (ns, *mids))
            if obs_ids:
                omarks = ",".join("?" * len(obs_ids))
                cur.execute(f"DELETE FROM observations WHERE namespace=? AND id IN ({omarks})", (ns, *obs_ids))
            # recall records keep queries and ids only; scrub erased ids from their candidate lists
            for rec in cur.execute("SELECT id, candidates, chosen FROM recalls WHERE namespace=?", (ns,)).fetchall():
                cands = [c for c in json.loads(rec["candidates"]) if c.get("id") not in mem_ids]
                chosen = [c for c in json.loads(rec["chosen"]) if c not in mem_ids]
                cur.execute("UPDATE recalls SET candidates=?, chosen=? WHERE id=?", (json.dumps(cands), json.dumps(chosen), rec["id"]))
            led.add_event(cur, ns, None, "hard_forget", memories=len(mids), observations=len(obs_ids))
        VectorIndex.delete(self.store.index.memories, mids)
        VectorIndex.delete(self.store.index.observations, obs_ids)
        led.vacuum()
        return {"forgotten": mids, "observations": obs_ids, "hard": True}

    def search_observations(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """Raw observations most similar to ``query`` (observations stay searchable): ``[{id, text, speaker, time, ref, similarity}]``."""
        if not query.strip():
            raise ValueError("query must be a non-empty string")
        ns = self.context.user_id
        hits = VectorIndex.search(self.store.index.observations, self.store.embed([query])[0], ns, k)
        rows = {r["id"]: r for r in self.store.ledger.query_in(
            "SELECT * FROM observations WHERE namespace=? AND id IN ({marks})", ns, [h[0] for h in hits])}
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


