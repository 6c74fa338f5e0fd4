"""The offline responder: with no LLM, answer only from the recalled memories, with citations."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from agent.prompts import NO_LLM, OFFLINE_KEY
from memory_graph.retrieval import citation

MAX_ITEMS = 5


def _items(recall: dict[str, Any] | None, max_items: int) -> list[dict[str, Any]]:
    return [it for it in (recall or {}).get("items", []) if it.get("status") == "current"][:max_items]


def offline_answer(recall: dict[str, Any] | None, max_items: int = MAX_ITEMS, lead: str = NO_LLM) -> str:
    """An answer that lists the top current recalled memories as ``text [m:ID]``, after ``lead`` (why there is
    no model answer: no LLM is configured by default). The text quotes memories for the user, unescaped: send
    it to a model only through ``agent.prompts.model_messages`` (use ``offline_message`` to mark it)."""
    items = _items(recall, max_items)
    if not items:
        return f"{lead}, and no stored memory matches your message."
    lines = [f"- {' '.join(str(it['text']).split())} {citation(str(it.get('kind', '')), str(it['id']))}" for it in items]
    return f"{lead}, so I can only tell you what I remember that matches your message:\n" + "\n".join(lines)


def offline_message(recall: dict[str, Any] | None, lead: str = NO_LLM, max_items: int = MAX_ITEMS) -> AIMessage:
    """``offline_answer`` as an AI message marked ``additional_kwargs[OFFLINE_KEY] = {"reason": lead, "cited":
    [ids]}``, so that ``agent.prompts.model_messages`` shows its memories to a model only fenced and escaped."""
    cited = [str(it["id"]) for it in _items(recall, max_items)]
    return AIMessage(offline_answer(recall, max_items, lead), additional_kwargs={OFFLINE_KEY: {"reason": lead, "cited": cited}})
