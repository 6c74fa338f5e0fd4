"""Message text: the one place that turns a LangChain message's content into plain text."""

from __future__ import annotations

from typing import Any


def message_text(msg: Any) -> str:
    """The text of a message: its ``content`` string, or the ``text`` parts of a list content joined by spaces
    (other parts, such as images, contribute their ``str``)."""
    content = msg.content
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
