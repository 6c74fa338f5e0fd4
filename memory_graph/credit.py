"""Credit assignment: turn an answer's outcome into per-memory credit or blame, and retention changes.

Which memories were *used* (strongest evidence first):
  1. ``used_ids`` given by the caller (weight 1.0), or found by leave-one-out replay (``Memory.feedback``
     with ``replay``: after a success whose answer does not settle which memory it used, the caller's
     responder is re-run without each ambiguous memory, at most ``MAX_REPLAYS`` times; a memory whose
     removal loses the success was used),
  2. ``[m:ID]`` citations in the answer (weight 1.0),
  3. memories whose value appears verbatim in the answer or in tool-call arguments (weight 0.7).
On success each used memory is credited with its weight (times 0.5 when the outcome was only inferred
from the user moving on); on failure each used memory is blamed. Shown memories that were not used get
one *unrewarded* exposure, which lowers their Beta posterior slightly and drives retention.

Retention (per memory, never from rarity of use, only from exposures without credit):
  active -> low_value after 6 unrewarded exposures with no credit, -> compressed after 12, -> archived after
  24; any credit revives to active. Every transition is an event with its reason; nothing is deleted.
A failed answer that used a memory for which a newer same-key memory exists supersedes it
("correction after a failed answer").
Outcomes inferred from the next user turn: a correction ("no", "that's wrong", "actually ...") is a
failure that blames the used memories; anything else is a weak success.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from memory_graph.config import Context
from memory_graph.errors import InvalidInputError, NotFoundError
from memory_graph.records import LIVE_STATUSES
from memory_graph.store import Store, Tx

CITATION = re.compile(r"\[m:([a-z0-9]{6,32})\]")
CORRECTION = re.compile(
    r"^\s*(?:no\b|nope\b|wrong\b|that'?s (?:not|wrong|incorrect|outdated)|not anymore|incorrect\b|actually\b|"
    r"you'?re wrong|that was wrong|not true)",
    re.IGNORECASE,
)
RETENTION_STEPS = [(24, "archived"), (12, "compressed"), (6, "low_value")]


def cited_ids(answer: str) -> list[str]:
    """Memory ids cited as ``[m:ID]`` in ``answer``, in order, without repeats."""
    return list(dict.fromkeys(CITATION.findall(answer or "")))


def infer_outcome(next_user_turn: str) -> bool:
    """Outcome of the previous answer from the next user turn: False for a correction, else True."""
    return not bool(CORRECTION.match(next_user_turn or ""))


def used_memories(
    rows: dict[str, Any], answer: str | None, used_ids: Sequence[str] | None, tool_args: str = ""
) -> dict[str, float]:
    """``{memory_id: weight}`` of the shown memories that the answer used (see module docstring)."""
    used: dict[str, float] = {}
    for mid in used_ids or []:
        if mid in rows:
            used[mid] = 1.0
    for mid in cited_ids(answer or ""):
        if mid in rows:
            used[mid] = 1.0
    haystack = f"{answer or ''} {tool_args}".lower()
    for mid, row in rows.items():
        value = (row["value"] or "").strip().lower()
        if mid not in used and 3 <= len(value) <= 60 and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", haystack):
            used[mid] = 0.7
    return used


MAX_REPLAYS = 2
"""Most leave-one-out replays one feedback may run (each is one more call of the caller's responder)."""


def replay_candidates(store: Store, ctx: Context, recall_id: str, answer: str | None) -> tuple[list[str], list[str]]:
    """``(shown, ambiguous)`` for leave-one-out replay after a success: the recall's shown ids, and the shown
    memories whose use the answer does not settle — several memories name the answer's value, or none does
    and none is cited (then every shown memory). A single citation or a single value match is not ambiguous.
    At most ``MAX_REPLAYS`` are returned, in the order shown.

    Raises:
        NotFoundError (a KeyError): no such recall in this namespace.
        InvalidInputError (a ValueError): the recall already has an outcome.
    """
    ns = ctx.user_id
    rec = store.ledger.recall(ns, recall_id)
    if rec is None:
        raise NotFoundError(f"no recall {recall_id!r} in namespace {ns!r}")
    if rec["outcome"] is not None:
        raise InvalidInputError(f"recall {recall_id!r} already has an outcome ({rec['outcome']})")
    shown: list[str] = json.loads(rec["chosen"])
    rows = store.ledger.memories(ns, shown)
    used = used_memories(rows, answer, None)
    if len(used) == 1 or any(w >= 1.0 for w in used.values()):
        return shown, []
    ambiguous = [m for m in shown if m in used] if used else [m for m in shown if m in rows]
    return shown, ambiguous[:MAX_REPLAYS]


def apply_feedback(
    store: Store,
    ctx: Context,
    recall_id: str,
    success: bool,
    *,
    used_ids: Sequence[str] | None = None,
    answer: str | None = None,
    tool_args: str = "",
    origin: str = "explicit",
) -> dict[str, Any]:
    """Record the outcome of recall ``recall_id`` and update the ledger statistics.

    Returns ``{"recall_id", "success", "credited": {id: w}, "blamed": {id: w}, "transitions": [...]}``.

    Raises:
        NotFoundError (a KeyError): no such recall in this namespace.
        InvalidInputError (a ValueError): the recall already has an outcome, or ``used_ids`` names a memory it did not show.
    """
    ns = ctx.user_id
    recall_row = store.ledger.recall(ns, recall_id)
    if recall_row is None:
        raise NotFoundError(f"no recall {recall_id!r} in namespace {ns!r}")
    if recall_row["outcome"] is not None:
        raise InvalidInputError(f"recall {recall_id!r} already has an outcome ({recall_row['outcome']})")
    shown: list[str] = json.loads(recall_row["chosen"])
    unknown = [m for m in used_ids or [] if m not in shown]
    if unknown:
        raise InvalidInputError(f"used_ids not shown by recall {recall_id!r}: {unknown}")
    rows = store.ledger.memories(ns, shown)
    used = used_memories(rows, answer, used_ids, tool_args)
    weight = 1.0 if origin == "explicit" else 0.5
    task = recall_row["task"] or ""
    credited: dict[str, float] = {}
    blamed: dict[str, float] = {}
    transitions: list[dict[str, str]] = []
    invalidated: list[str] = []
    with store.write() as tx:
        if not tx.claim_outcome(ns, recall_id, success):  # another feedback won the race since the check above
            raise InvalidInputError(f"recall {recall_id!r} already has an outcome")  # (the transaction rolls back)
        tx.add_feedback(ns, recall_id, success, sorted(used), origin)
        if not ctx.learning:
            return {"recall_id": recall_id, "success": success, "credited": {}, "blamed": {}, "transitions": []}
        for mid in shown:
            if mid in used and success:
                credited[mid] = round(used[mid] * weight, 3)
                column, amount = "credited", credited[mid]
            elif mid in used:
                blamed[mid] = round(used[mid] * weight, 3)
                column, amount = "blamed", blamed[mid]
            else:
                column, amount = "unrewarded", 1.0
            tx.add_stats(ns, mid, task, column, amount)
            event = "credited" if mid in credited else "blamed" if mid in blamed else "shown_unused"
            tx.add_event(ns, mid, event, recall=recall_id, origin=origin, task=task)
            transitions.extend(_retention_step(tx, ns, mid, rows[mid]["retention"] if mid in rows else "active", mid in credited))
        if not success:
            invalidated = _invalidate_replaced(tx, ns, list(blamed))
    store.sync_metadata(sorted({t["id"] for t in transitions} | set(invalidated)))
    return {"recall_id": recall_id, "success": success, "credited": credited, "blamed": blamed,
            "transitions": transitions, "invalidated": invalidated}


def _retention_step(tx: Tx, ns: str, mid: str, current: str, was_credited: bool) -> list[dict[str, str]]:
    row = tx.overall_stats(ns, mid)
    if row is None:
        return []
    if was_credited:
        target, reason = "active", "credited use"
    elif row["credited"] > 0:
        return []
    else:
        target, reason = current, ""
        for threshold, state in RETENTION_STEPS:
            if row["unrewarded"] >= threshold:
                target, reason = state, f"{int(row['unrewarded'])} exposures without credit"
                break
    if target == current:
        return []
    tx.set_retention(ns, mid, target, current, reason)
    return [{"id": mid, "from": current, "to": target, "reason": reason}]


def _invalidate_replaced(tx: Tx, ns: str, blamed: list[str]) -> list[str]:
    out = []
    for mid in blamed:
        old = tx.memory(ns, mid)
        if old is None or old["status"] not in LIVE_STATUSES or old["kind"] == "event" or old["multi"]:
            continue
        newer = tx.newest_live_after(ns, old)
        if newer is None:
            continue
        tx.end_memory(ns, mid, newer["id"], newer["valid_from"], "superseded", "supersedes", "correction after a failed answer")
        if old["attribute"] != old["frame"]:  # a named attribute, not a free-text frame
            tx.vote(ns, old["attribute"], "replacements")
        out.append(mid)
    return out
