"""Chat threads (LangGraph checkpoints), each owned by one user.

Any checkpointed thread of the agent or the memory graph (``langgraph dev``, LangGraph Server, an app's own
checkpointer) records its owner: the first run claims the thread for its ``Context.user_id`` in the store's ledger
(``thread_owners``, keyed by the checkpointer's ``thread_id``; also kept as ``owner`` in the state), and a later run of
another user is refused by the ``owner_guard`` node before any other node runs. The record lives outside the
checkpoints and ``owner`` is not an input key, so neither sending ``owner`` nor forking from a checkpoint taken
before the first run claimed the thread changes it (third breaker run). The refused run's input messages
are removed from the thread again (so the owner's next run never reads or stores them) and the run fails with
``ThreadOwnerError``; nothing of the thread reaches the other user through the graph. (Reading a thread's state
through the server's own API is the server's business: see docs/ARCHITECTURE.md, "Thread ownership".)

The CLI chat persists its threads with ``SqliteSaver`` in ``<store>/threads.sqlite3`` (a hard delete rewrites
them: ``memory_graph.store.checkpoints``). A thread belongs to
the user that created it: the checkpointer's ``thread_id`` is :func:`thread_key` of (user id, the name the user
chose), so another user passing any name, even one that spells the first user's key, reaches a different
thread and can neither resume nor read it.
"""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import dataclass
from typing import Any, NoReturn

from langchain_core.messages import RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START
from langgraph.runtime import Runtime

from memory_graph.config import Context, as_context
from memory_graph.errors import ThreadOwnerError

THREADS_FILE = "threads.sqlite3"


@dataclass(kw_only=True)
class ThreadOwnership:
    """State keys of a thread's owner (a mixin of the agent's and the memory graph's state).

    owner     the ``user_id`` of the run that started the thread (None before its first run)
    owned     how many of ``messages`` the owner's runs have put there (a refused run's input is cut back to it)
    refused   set by ``owner_guard`` for a run of another user (routes to ``refuse``)
    """

    owner: str | None = None
    owned: int = 0
    refused: bool = False


def admit(owner: str | None, user_id: str) -> bool:
    """Whether a run of ``user_id`` may use a thread started by ``owner`` (None: a new thread)."""
    return owner is None or owner == user_id


def guard_update(state: Any, user_id: str, clear: dict[str, Any], recorded: str | None = None) -> dict[str, Any]:
    """The ``owner_guard`` node's update for a run of ``user_id``: the owner is admitted (a new thread is
    claimed); for another user the run's input messages (``messages[owned:]``) are removed, the keys of
    ``clear`` reset (the run's other inputs) and ``refused`` set. ``recorded``: the owner the store recorded for
    the thread (authoritative: a fork from a checkpoint before ``owner`` was set still finds it)."""
    messages = list(getattr(state, "messages", []) or [])
    if admit(state.owner, user_id) and admit(recorded, user_id):
        return {"owner": user_id, "owned": len(messages), "refused": False}
    removed = [RemoveMessage(id=m.id) for m in messages[state.owned :] if m.id]
    return {"messages": removed, "refused": True, **clear}


def refuse(state: Any) -> NoReturn:
    """Fail the run of a user who does not own the thread (the thread's owner is not named)."""
    raise ThreadOwnerError("this thread belongs to another user; start a new thread (nothing of this run was kept)")


def add_owner_guard(builder: Any, first: str, clear: dict[str, Any] | None = None) -> None:
    """Wire ``START -> owner_guard -> first`` (or ``-> refuse`` for another user) into ``builder``, a
    ``StateGraph`` whose state has ``ThreadOwnership`` keys and ``messages``; ``clear``: the values a refused
    run's other input keys are reset to."""

    def owner_guard(state: Any, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
        ctx = as_context(runtime.context)
        thread_id = (config.get("configurable") or {}).get("thread_id")
        recorded = None
        if thread_id is not None:  # checkpointed: the store's record decides (``Ledger.claim_thread``)
            from memory_graph.store import Store

            store = Store.of(runtime.store, ctx.store_path, ctx.embedding_model, ctx.chroma_url)
            recorded = store.ledger.claim_thread(str(thread_id), ctx.user_id)
        return guard_update(state, ctx.user_id, dict(clear or {}), recorded)

    builder.add_node("owner_guard", owner_guard)
    builder.add_node("refuse", refuse)
    builder.add_edge(START, "owner_guard")
    builder.add_conditional_edges("owner_guard", lambda state: "refuse" if state.refused else first, [first, "refuse"])


def thread_key(user_id: str, thread: str) -> str:
    """The checkpointer ``thread_id`` of thread ``thread`` of ``user_id``: a JSON pair, unambiguous for any
    strings (``thread_key("a", 'b"]')`` never equals a key of user ``b``)."""
    return json.dumps([user_id, thread], ensure_ascii=False)


def owner_of(key: str) -> str | None:
    """The user id a checkpointer ``thread_id`` belongs to, or None for a key this module did not make."""
    try:
        value = json.loads(key)
    except (TypeError, ValueError):
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return value[0]
    return None


def kept_messages(messages: list[Any], refs: set[str], needles: list[str], said: Container[str] | None = None) -> list[Any]:
    """``messages`` without those that quote a needle in their content, tool-call arguments or extra fields (as
    the hard delete judges every row: :func:`memory_graph.store.quoting.quotes_value`), whose id is in ``refs`` or
    whose content is an erased text (``said``: :func:`memory_graph.store.quoting.same_text` of each); a tool call and
    its tool result go together (a dropped AI message's results, and an AI message whose results were dropped), so
    the thread stays a valid conversation."""
    from memory_graph.store.quoting import quotes_value, same_text

    said = said or set()
    dropped = {i for i, m in enumerate(messages) if m.id in refs or quotes_value(m, needles)
               or (isinstance(m.content, str) and same_text(m.content) in said)}
    while True:
        calls = {tc.get("id") for i, m in enumerate(messages) if i in dropped for tc in getattr(m, "tool_calls", None) or []}
        results = {getattr(m, "tool_call_id", None) for i, m in enumerate(messages) if i in dropped} - {None}
        more = {i for i, m in enumerate(messages) if i not in dropped and (
            getattr(m, "tool_call_id", None) in calls
            or any(tc.get("id") in results for tc in getattr(m, "tool_calls", None) or []))}
        if not more:
            return [m for i, m in enumerate(messages) if i not in dropped]
        dropped |= more
