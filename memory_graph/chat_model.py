"""The one chat-model factory: ``ChatOpenAI`` for OpenAI or any OpenAI-compatible server (Ollama, vLLM).

No model name -> ``None``: callers then run their deterministic offline path.
"""

from __future__ import annotations

import os

from langchain_core.language_models import BaseChatModel


def make_chat_model(model: str = "", base_url: str = "", *, timeout_s: float = 60.0, max_retries: int = 2) -> BaseChatModel | None:
    """A ``ChatOpenAI`` for ``model`` at ``base_url`` (empty = OpenAI), or None when ``model`` is empty.

    The key comes from ``OPENAI_API_KEY``; a local server with no key gets a placeholder key. ``timeout_s``
    is per request in seconds; ``max_retries`` retries on transient errors.
    """
    if not model:
        return None
    from langchain_openai import ChatOpenAI

    key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
    if key is None:
        raise ValueError("OPENAI_API_KEY is not set (set it, or give --base-url for a local OpenAI-compatible server)")
    from pydantic import SecretStr

    return ChatOpenAI(
        model=model, base_url=base_url or None, api_key=SecretStr(key), temperature=0, timeout=timeout_s, max_retries=max_retries
    )  # type: ignore[call-arg]
