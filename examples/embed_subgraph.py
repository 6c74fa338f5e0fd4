"""Embed the memory subgraph in a parent graph of another schema (runs offline in a few seconds).

The parent is a support-ticket workflow whose state (``SupportTicketState``) has ``messages``,
``ticket_id``, ``memory_context`` and ``draft``. It uses the compiled memory subgraph two ways:

1. **Directly, as one node** (``add_node("memory", memory_graph)``): the parent shares the subgraph's
   ``messages`` (input) and ``memory_context`` (output) keys; the subgraph's other output keys
   (``recall``, ``formed``...) are not parent keys and are dropped.
2. **Through a wrapper node** that maps keys: it sends a query built from the ticket and writes the
   recalled block to the parent's own ``customer_notes`` key.

Run: ``python examples/embed_subgraph.py``
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Annotated, Any

os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402

from memory_graph import Context, build_memory_graph  # noqa: E402

memory_graph = build_memory_graph()


@dataclass(kw_only=True)
class SupportTicketState:
    """The parent's own schema: only ``messages`` and ``memory_context`` are shared with the subgraph."""

    messages: Annotated[list[AnyMessage], add_messages] = field(default_factory=list)
    ticket_id: str = ""
    memory_context: str = ""
    customer_notes: str = ""
    draft: str = ""


def _memory_lines(block: str) -> list[str]:
    """The memory lines of a fenced context block (``[m:ID] (...) text``)."""
    return [line for line in block.splitlines() if line.startswith("[m:")]


def draft_reply(state: SupportTicketState) -> dict[str, Any]:
    """Draft an answer from the recalled memories (no LLM: a template)."""
    question = next((m.content for m in reversed(state.messages) if isinstance(m, HumanMessage)), "")
    facts = [line.split(") ", 1)[-1].rstrip(".") for line in _memory_lines(state.memory_context or state.customer_notes)][:3]
    known = "; ".join(facts) if facts else "nothing yet"
    draft = f"[{state.ticket_id}] Re: {question}\nWhat we know about you: {known}."
    return {"draft": draft, "messages": [AIMessage(draft)]}


def remember_for_ticket(state: SupportTicketState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Wrapper node: map parent keys to the subgraph's input and its output to ``customer_notes``."""
    question = next((str(m.content) for m in reversed(state.messages) if isinstance(m, HumanMessage)), "")
    out = memory_graph.invoke(
        {"messages": state.messages, "query": f"{question} (support ticket {state.ticket_id})", "budget_tokens": 200},
        context=runtime.context,
    )
    return {"customer_notes": out.get("memory_context", "")}


def build_parent(memory_node: Any, name: str) -> Any:
    """Parent graph ``START -> memory -> draft -> END`` around ``memory_node``: either the compiled memory
    subgraph itself (added directly, shared keys) or a wrapper node that maps keys."""
    builder = StateGraph(SupportTicketState, context_schema=Context)
    builder.add_node("memory", memory_node)
    builder.add_node("draft", draft_reply)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", "draft")
    builder.add_edge("draft", END)
    return builder.compile(checkpointer=InMemorySaver(), name=name)


def build_direct() -> Any:
    """The compiled memory subgraph added directly as one node (shared keys)."""
    return build_parent(memory_graph, "support-direct")


def build_wrapped() -> Any:
    """The subgraph called from a wrapper node mapping keys."""
    return build_parent(remember_for_ticket, "support-wrapped")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="memory-graph-example-") as tmp:
        ctx = Context(store_path=tmp, user_id="customer-42")
        turns = [
            "Hi! My workspace is called acme-data. I live in Lisbon.",
            "Quick update: I moved to Porto.",
            "Where do I live, and can you ship the hardware token there?",
        ]
        direct = build_direct()
        config = {"configurable": {"thread_id": "ticket-1001"}}
        out: dict[str, Any] = {}
        for text in turns:
            out = direct.invoke({"messages": [HumanMessage(text)], "ticket_id": "T-1001"}, config=config, context=ctx)
        print("== direct node (shared keys) ==")
        print("memory_context:")
        print(out["memory_context"])
        print("draft:")
        print(out["draft"])

        wrapped = build_wrapped()
        out = wrapped.invoke(
            {"messages": [HumanMessage("Do you remember my workspace name?")], "ticket_id": "T-1002"},
            config={"configurable": {"thread_id": "ticket-1002"}}, context=ctx,
        )
        print("== wrapper node (mapped keys) ==")
        print("customer_notes:")
        print(out["customer_notes"])
        print("draft:")
        print(out["draft"])


if __name__ == "__main__":
    main()
