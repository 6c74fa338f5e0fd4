"""The memory subgraph: ``START -> owner_guard -> route -> credit? -> extract -> link -> retrieve -> END``.

``owner_guard`` refuses a run of another user on a checkpointed thread (``memory_graph.threads``).

``build_memory_graph()`` returns it compiled; ``graph`` is the module-level compiled instance that
``langgraph.json`` exposes as ``memory``. Configuration comes from ``Context`` (``context_schema``).
Embedding in a parent graph: add ``graph`` as a node when the parent shares keys (``messages``,
``memory_context``), or call it from a node and map keys (see ``examples/embed_subgraph.py``).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, StateGraph

from memory_graph import nodes
from memory_graph.config import Context
from memory_graph.state import MemoryInput, MemoryOutput, MemoryState
from memory_graph.threads import add_owner_guard


def build_memory_graph(checkpointer: Any = None, name: str = "memory", store: Any = None) -> Any:
    """Compile the memory subgraph.

    Args:
        checkpointer: optional LangGraph checkpointer (e.g. ``SqliteSaver``) for standalone threads.
        name: the graph's name (shown in Studio and traces).
        store: optional LangGraph store; a :class:`~memory_graph.langgraph_store.MemoryStore` is the storage the
            nodes use (``runtime.store``) instead of the folder named by ``Context.store_path``.

    Returns:
        A compiled ``StateGraph`` with input ``MemoryInput``, output ``MemoryOutput`` and ``Context``.
    """
    builder = StateGraph(MemoryState, input_schema=MemoryInput, output_schema=MemoryOutput, context_schema=Context)
    builder.add_node("route", nodes.route)
    builder.add_node("credit", nodes.credit)
    builder.add_node("extract", nodes.extract)
    builder.add_node("link", nodes.link)
    builder.add_node("retrieve", nodes.retrieve)
    # a refused run (another user's, on a checkpointed thread) also clears its inputs that are not messages
    add_owner_guard(builder, "route", clear={"observations": [], "feedback": None, "query": "", "resume": False})
    builder.add_conditional_edges("route", nodes.after_route, ["credit", "extract", "retrieve", END])
    builder.add_conditional_edges("credit", nodes.after_credit, ["extract", "retrieve", END])
    builder.add_edge("extract", "link")
    builder.add_conditional_edges("link", nodes.after_link, ["retrieve", END])
    builder.add_edge("retrieve", END)
    return builder.compile(checkpointer=checkpointer, store=store, name=name)


graph = build_memory_graph()
