"""The offline responder's message: ``memory_graph.offline.offline_answer`` as an AI message marked for the
fence (``agent.prompts.model_messages``)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from agent.prompts import OFFLINE_KEY
from memory_graph.offline import MAX_ITEMS, NO_LLM, current_items, offline_answer


def offline_message(recall: dict[str, Any] | None, lead: str = NO_LLM, max_items: int = MAX_ITEMS) -> AIMessage:
    """The offline answer to a recall (``Recall.model_dump()``) as an AI message marked
    ``additional_kwargs[OFFLINE_KEY] = {"reason": lead, "cited": [ids]}``, so that
    ``agent.prompts.model_messages`` shows its memories to a model only fenced and escaped."""
    items = (recall or {}).get("items")
    cited = [str(f["id"]) for f in current_items(items, max_items)]
    return AIMessage(offline_answer(items, max_items, lead), additional_kwargs={OFFLINE_KEY: {"reason": lead, "cited": cited}})
