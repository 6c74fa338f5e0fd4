"""memory-graph: long-term memory for LangGraph agents as a compiled subgraph.

Public API (see DESIGN.md and README.md)::

    from memory_graph import Memory, build_memory_graph, Context

``Memory`` observes, recalls under a token budget, takes feedback, inspects and forgets;
``build_memory_graph()`` returns the compiled ``StateGraph`` (credit -> extract -> link -> retrieve).

The names are loaded on first use (PEP 562 ``__getattr__``), so ``import memory_graph.cli`` or
``memory_graph.errors`` does not pull in LangGraph, Chroma and the embedder: ``memory-graph --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory_graph.api import Memory
    from memory_graph.config import Context
    from memory_graph.graph import build_memory_graph
    from memory_graph.langgraph_store import MemoryStore
    from memory_graph.records import Recall, RecallItem
    from memory_graph.retriever import MemoryRetriever

__all__ = ["Memory", "MemoryStore", "MemoryRetriever", "Context", "Recall", "RecallItem", "build_memory_graph"]
__version__ = "0.1.0"

_HOMES = {"Memory": "memory_graph.api", "Context": "memory_graph.config", "build_memory_graph": "memory_graph.graph",
          "MemoryStore": "memory_graph.langgraph_store", "MemoryRetriever": "memory_graph.retriever",
          "Recall": "memory_graph.records", "RecallItem": "memory_graph.records"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'memory_graph' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
