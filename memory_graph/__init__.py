"""memory-graph: long-term memory for LangGraph agents as a compiled subgraph.

Public API (see DESIGN.md and README.md)::

    from memory_graph import Memory, build_memory_graph, Context

``Memory`` observes, recalls under a token budget, takes feedback, inspects and forgets;
``build_memory_graph()`` returns the compiled ``StateGraph`` (credit -> extract -> link -> retrieve).
"""

from memory_graph.api import Memory
from memory_graph.config import Context
from memory_graph.graph import build_memory_graph
from memory_graph.records import Recall, RecallItem

__all__ = ["Memory", "Context", "Recall", "RecallItem", "build_memory_graph"]
__version__ = "0.1.0"
