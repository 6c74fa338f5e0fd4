"""One deadline for all the model calls of a turn (pure helpers; no I/O).

A *turn* is one agent turn (planner rounds, the memory subgraph's extraction and LLM linker, the responder)
or one run of the memory subgraph (``Memory.observe`` / ``observe_many``). Its model calls together may take
``Context.model_deadline_s`` seconds of wall-clock time. The deadline is an absolute time in epoch seconds
(``time.time()``), computed once where the turn starts and carried in graph state, so it survives
checkpoints and crosses from the agent into the memory subgraph (state key ``deadline``):

* agent: the planner's first round sets ``turn_deadline`` (from an input ``deadline``, else now +
  ``model_deadline_s``); the memory node passes it to the subgraph as ``deadline``;
* memory subgraph: ``deadline`` (input) or, when none is given, now + ``model_deadline_s``.

Each model call gets a client timeout of at most the time left (``call_timeout``) and no client-side retries;
with less than ``MIN_CALL_S`` left the call is not made (``ModelDeadlineExceeded``) and the caller takes its
offline path (rule extractor, no link proposals, no tools, the offline answer).
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Any

from memory_graph.errors import InvalidInputError, MemoryGraphError

DEFAULT_DEADLINE_S = 30.0
"""Default ``Context.model_deadline_s``: seconds all model calls of one turn may take together."""
MIN_CALL_S = 0.5
"""A call needs at least this many seconds left to be made at all."""


class ModelDeadlineExceeded(MemoryGraphError, TimeoutError):
    """No time is left before the turn's model deadline: the model call was not made."""


def check_seconds(value: Any, name: str = "model_deadline_s") -> float:
    """``value`` as a positive, finite number of seconds.

    Raises:
        InvalidInputError: not a number (booleans and strings included), zero, negative, NaN or infinite.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{name} must be a number of seconds, got {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise InvalidInputError(f"{name} must be a positive, finite number of seconds, got {value!r}")
    return seconds


def check_deadline(value: Any) -> float | None:
    """A caller's deadline: None (none given) or a finite epoch time in seconds (a past one is valid: no time left).

    Raises:
        InvalidInputError: not a number, NaN or infinite.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise InvalidInputError(f"deadline must be a time in epoch seconds, got {value!r}")
    return float(value)


def resolve(deadline: float | None, seconds: float, *, now: float | None = None) -> float:
    """The turn's deadline (epoch seconds): ``deadline`` when given, else ``now`` + ``seconds``.

    Raises:
        InvalidInputError: ``deadline`` is not a finite number, or ``seconds`` not a positive finite number.
    """
    given = check_deadline(deadline)
    if given is not None:
        return given
    return (time.time() if now is None else now) + check_seconds(seconds)


def time_left(deadline: float, *, now: float | None = None) -> float:
    """Seconds until ``deadline`` (epoch seconds), never negative."""
    return max(0.0, deadline - (time.time() if now is None else now))


def call_timeout(deadline: float | None, cap: float | None = None, *, now: float | None = None) -> float | None:
    """The client timeout (seconds) of a model call made now: the time left, at most ``cap``; None when less
    than ``MIN_CALL_S`` is left (do not call). No deadline: ``cap``."""
    if deadline is None:
        return cap
    left = time_left(deadline, now=now)
    if left < MIN_CALL_S:
        return None
    return left if cap is None else min(cap, left)


def is_timeout(exc: BaseException) -> bool:
    """True for a timeout of any client (``TimeoutError``, ``openai.APITimeoutError``, ``httpx.TimeoutException``)."""
    return isinstance(exc, TimeoutError) or any("Timeout" in cls.__name__ for cls in type(exc).__mro__)
