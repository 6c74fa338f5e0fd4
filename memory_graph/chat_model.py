"""The one chat-model factory: ``ChatOpenAI`` for OpenAI or any OpenAI-compatible server (Ollama, vLLM).

No model name -> ``None``: callers then run their deterministic offline path. With a ``deadline`` (the turn's,
see ``memory_graph.deadline``) every request of the model gets a timeout of at most the time left and no
client-side retries, and a request with no time left is not sent (``ModelDeadlineExceeded``).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel

from memory_graph.deadline import ModelDeadlineExceeded, call_timeout, check_seconds, resolve
from memory_graph.errors import InvalidInputError


def make_chat_model(
    model: str = "",
    base_url: str = "",
    *,
    timeout_s: float = 60.0,
    max_retries: int = 2,
    deadline: float | None = None,
    budget_s: float | None = None,
) -> BaseChatModel | None:
    """A ``ChatOpenAI`` for ``model`` at ``base_url`` (empty = OpenAI), or None when ``model`` is empty.

    The key comes from ``OPENAI_API_KEY``; a local server with no key gets a placeholder key.

    Args:
        timeout_s: client timeout of one request, in seconds (positive, finite).
        max_retries: client retries on transient errors (only without a deadline).
        deadline: absolute time (epoch seconds, ``time.time()``) by which every request of this model must
            end. Each request then gets a timeout of ``min(timeout_s, seconds left)``, the client does not
            retry, and a request with under ``deadline.MIN_CALL_S`` left raises ``ModelDeadlineExceeded``
            without contacting the server. None with ``budget_s``: now + ``budget_s``.
        budget_s: seconds from now that make the deadline when ``deadline`` is None (e.g. the turn's
            ``Context.model_deadline_s``); None with no ``deadline``: no deadline.

    Raises:
        InvalidInputError: ``OPENAI_API_KEY`` is not set and no ``base_url`` is given.
        InvalidInputError: ``timeout_s``, ``deadline`` or ``budget_s`` is not a valid number of seconds.
    """
    if not model:
        return None
    timeout_s = check_seconds(timeout_s, "timeout_s")
    if deadline is not None or budget_s is not None:
        deadline = resolve(deadline, budget_s if budget_s is not None else timeout_s)
    key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
    if key is None:
        raise InvalidInputError("OPENAI_API_KEY is not set (set it, or give --base-url for a local OpenAI-compatible server)")
    from pydantic import SecretStr

    if deadline is None:
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=model, base_url=base_url or None, api_key=SecretStr(key), temperature=0, timeout=timeout_s, max_retries=max_retries
        )  # type: ignore[call-arg]
    return _deadline_chat_openai()(
        model=model, base_url=base_url or None, api_key=SecretStr(key), temperature=0, timeout=timeout_s, max_retries=0,
        deadline=deadline,
    )


@functools.cache
def _deadline_chat_openai() -> Callable[..., BaseChatModel]:
    """``ChatOpenAI`` whose every request is bounded by its ``deadline`` (built on first use: importing
    ``langchain_openai`` costs time that the CLI's ``--help`` should not pay)."""
    from langchain_openai import ChatOpenAI

    class DeadlineChatOpenAI(ChatOpenAI):  # type: ignore[misc]
        """``ChatOpenAI`` that passes each request ``timeout=min(request_timeout, time left)``."""

        deadline: float

        def _bounded(self, kwargs: dict[str, Any]) -> dict[str, Any]:
            cap = self.request_timeout if isinstance(self.request_timeout, int | float) else None
            timeout = call_timeout(self.deadline, cap)
            if timeout is None:
                raise ModelDeadlineExceeded("no time left before the turn's model deadline; the model was not called")
            return {**kwargs, "timeout": timeout}

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            bounded = self._bounded(kwargs)
            # the client's timeout is per phase (connect, each read): a server that trickles bytes never trips it.
            # The call runs in a daemon thread and the turn waits only for the time left; an abandoned request
            # ends when its connection does and holds nothing of the store.
            box: dict[str, Any] = {}

            def call() -> None:
                try:
                    box["result"] = super(DeadlineChatOpenAI, self)._generate(
                        messages, stop=stop, run_manager=run_manager, **bounded)
                except BaseException as exc:  # handed to the caller below
                    box["error"] = exc

            worker = threading.Thread(target=call, name="memory-graph-model-call", daemon=True)
            worker.start()
            worker.join(bounded["timeout"])
            if worker.is_alive():
                raise ModelDeadlineExceeded("the model did not answer before the turn's model deadline")
            if "error" in box:
                raise box["error"]
            return box["result"]

        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            bounded = self._bounded(kwargs)
            try:
                return await asyncio.wait_for(
                    super()._agenerate(messages, stop=stop, run_manager=run_manager, **bounded), bounded["timeout"])
            except asyncio.TimeoutError:
                raise ModelDeadlineExceeded("the model did not answer before the turn's model deadline") from None

        def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Iterator[Any]:
            yield from super()._stream(messages, stop=stop, run_manager=run_manager, **self._bounded(kwargs))

        async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
            async for chunk in super()._astream(messages, stop=stop, run_manager=run_manager, **self._bounded(kwargs)):
                yield chunk

    return DeadlineChatOpenAI
