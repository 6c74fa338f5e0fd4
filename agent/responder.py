"""The offline responder: with no LLM, answer only from the recalled memories, with citations."""

from __future__ import annotations

from typing import Any

from agent.prompts import NO_LLM

MAX_ITEMS = 5


def offline_answer(recall: dict[str, Any] | None, max_items: int = MAX_ITEMS, lead: str = NO_LLM) -> str:
    """An answer that lists the top current recalled memories as ``text [m:ID]``, after ``lead`` (why there is
    no model answer: no LLM is configured by default)."""
    items = [it for it in (recall or {}).get("items", []) if it.get("status") == "current"][:max_items]
    if not items:
        return f"{lead}, and no stored memory matches your message."
    lines = [f"- {' '.join(str(it['text']).split())} [m:{it['id']}]" for it in items]
    return f"{lead}, so I can only tell you what I remember that matches your message:\n" + "\n".join(lines)
