"""The project's exception hierarchy: every documented failure of the public API is one of these.

Each class also subclasses the builtin a caller would catch without knowing this module (the pattern of
LangGraph's ``InvalidUpdateError(Exception)`` and sqlite-utils' one-class-per-failure), so
``except ValueError`` keeps working for bad input and ``except KeyError`` for unknown ids::

    MemoryGraphError(Exception)
    ├── InvalidInputError(MemoryGraphError, ValueError)   bad argument: empty, wrong type, out of range, bad date
    ├── NotFoundError(MemoryGraphError, KeyError)         unknown memory / recall / observation id in this namespace
    ├── StoreBusyError(MemoryGraphError, TimeoutError)    another process held the store past the lock timeout
    ├── StoreNotFoundError(MemoryGraphError, FileNotFoundError)  a read-only command named a store that does not exist
    ├── StoreError(MemoryGraphError, RuntimeError)        the store cannot be opened or used (corrupt file, newer schema)
    ├── ClosedError(MemoryGraphError, RuntimeError)       a call on a ``Memory`` after ``close()``
    ├── ThreadOwnerError(MemoryGraphError, PermissionError)  a run of one user on another user's graph thread
    └── ModelOutputError(MemoryGraphError, ValueError)    a chat model's answer is not the structured output asked
                                                          for (internal: the callers retry, then fall back)

The CLI prints any ``MemoryGraphError`` as one ``error:`` line (exit status 1; 2 for invalid input).
"""

from __future__ import annotations


class MemoryGraphError(Exception):
    """Base class of every error memory-graph raises on purpose."""

    def __str__(self) -> str:  # KeyError's str() adds quotes; keep one readable line for every subclass
        return " ".join(str(self.args[0]).split()) if self.args else type(self).__name__


class InvalidInputError(MemoryGraphError, ValueError):
    """An argument is empty, of the wrong type, out of range, or not a valid time."""


class NotFoundError(MemoryGraphError, KeyError):
    """No record with that id in this namespace (ids of other namespaces are reported the same way)."""


class StoreBusyError(MemoryGraphError, TimeoutError):
    """Another process held the store's lock longer than the lock timeout; the message names it (pid, command)."""


class StoreNotFoundError(MemoryGraphError, FileNotFoundError):
    """The store folder does not exist and the caller asked not to create it."""


class StoreError(MemoryGraphError, RuntimeError):
    """The store cannot be opened or used: a corrupt or foreign file, a schema newer than this version."""


class ClosedError(MemoryGraphError, RuntimeError):
    """The ``Memory`` was closed."""


class ThreadOwnerError(MemoryGraphError, PermissionError):
    """A graph run named a checkpointed thread that another user started; nothing of the run was kept."""


class ModelOutputError(MemoryGraphError, ValueError):
    """A chat model's answer holds no JSON object that validates against the schema asked for
    (``memory_graph.structured``). Never raised by the public API: the extractor and the LLM linker retry once,
    then take their offline path. The message names what was wrong (field paths and pydantic's messages), never
    the answer's text."""


__all__ = [
    "ClosedError",
    "InvalidInputError",
    "MemoryGraphError",
    "ModelOutputError",
    "NotFoundError",
    "StoreBusyError",
    "StoreError",
    "StoreNotFoundError",
    "ThreadOwnerError",
]
