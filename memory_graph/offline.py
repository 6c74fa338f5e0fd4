"""The offline answer: with no chat model (none configured, it failed, or the turn's deadline passed), answer
only from the recalled memories, with citations. The one place that owns this message's wording; the agent's
responder and the CLI both use it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from memory_graph.retrieval import citation

NO_LLM = "No LLM is configured"
"""The default lead: why there is no model answer."""
TIMED_OUT = "The chat model timed out"
"""The lead when the turn's model deadline passed."""
ANSWERED = ", so I can only tell you what I remember that matches your message:"
NOTHING = ", and no stored memory matches your message."
MAX_ITEMS = 5
"""Memories an offline answer quotes at most (the first current ones of the recall, which presents them answer
first: ``retrieval.answer_order``)."""


def _fields(item: Any) -> Mapping[str, Any]:
    return item if isinstance(item, Mapping) else item.model_dump()


def current_items(items: Iterable[Any] | None, max_items: int = MAX_ITEMS) -> list[Mapping[str, Any]]:
    """The first ``max_items`` current items of a recall (``RecallItem`` objects or their ``model_dump()``), in the
    recall's order: answer first (the slot of the most useful line first, its newest statement first;
    ``retrieval.answer_order``), so the quoted lines are the ones that answer, not the newest (issue 20; before, a
    newest-first recall made the main job's "Where do I live?" with ``--as-of`` quote five newer lines)."""
    return [f for f in map(_fields, items or []) if f.get("status") == "current"][:max_items]


def offline_answer(items: Iterable[Any] | None, max_items: int = MAX_ITEMS, lead: str = NO_LLM) -> str:
    """``lead``, then each of the top current recalled memories as ``- text [m:ID]`` (``[o:ID]`` for a raw
    message); says so when none matches. The text quotes memories for the user, unescaped: an agent sends it
    to a model only through ``agent.prompts.model_messages`` (fenced)."""
    chosen = current_items(items, max_items)
    if not chosen:
        return f"{lead}{NOTHING}"
    lines = [f"- {' '.join(str(f['text']).split())} {citation(str(f.get('kind', '')), str(f['id']))}" for f in chosen]
    return f"{lead}{ANSWERED}\n" + "\n".join(lines)


HEAD = re.compile(rf"\A(?P<lead>{re.escape(NO_LLM)}|The chat model [^\n]{{0,200}}?)(?:{re.escape(ANSWERED)}|{re.escape(NOTHING)})")
"""The first line of an offline answer (to recognise one in a thread that did not mark it)."""
LINE = re.compile(r"\A- (?P<text>.*) \[(?P<kind>[mo]):(?P<id>[A-Za-z0-9]+)\]\Z")
"""One quoted memory line of an offline answer."""
