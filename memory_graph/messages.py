"""Messages: the one place that turns a LangChain message's content into plain text, and the checked
``messages`` reducer of the graphs' states."""

from __future__ import annotations

from typing import Any

from langgraph.graph.message import add_messages

from memory_graph.errors import InvalidInputError


def add_checked_messages(left: Any, right: Any) -> Any:
    """LangGraph's ``add_messages``, with a malformed message (``5``, ``{}``, an unknown role) reported as
    ``InvalidInputError`` instead of LangChain's ``NotImplementedError``/``ValueError`` (a ``langgraph dev`` run
    sends JSON straight into this reducer, before any node can check it)."""
    try:
        return add_messages(left, right)
    except (NotImplementedError, ValueError, TypeError, KeyError) as exc:
        raise InvalidInputError(f"messages: not a list of chat messages ({type(exc).__name__}: {exc})"[:500]) from None


def message_text(msg: Any) -> str:
    """The text of a message: its ``content`` string, or the ``text`` parts of a list content joined by spaces
    (other parts, such as images, contribute their ``str``)."""
    content = msg.content
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
