"""A checkpointed thread belongs to the user of its first run (issue 10, second breaker run: over
``langgraph dev`` another user found a thread with ``threads.search()`` and ran the agent on it, so the owner's
messages were stored in their namespace and answered from). The ``owner_guard`` node refuses such a run with
``ThreadOwnerError`` and removes its input from the thread."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver

from agent.graph import build_agent_graph
from memory_graph import Memory
from memory_graph.config import Context
from memory_graph.errors import ThreadOwnerError
from memory_graph.graph import build_memory_graph
from memory_graph.threads import admit, guard_update

PIN = "alpha247514q9"


def test_admit_only_the_owner_or_a_new_thread() -> None:
    assert admit(None, "bob") and admit("alice", "alice")
    assert not admit("alice", "bob") and not admit("alice", "Alice") and not admit("", "bob")


def test_a_refused_update_removes_only_the_runs_input() -> None:
    owned = [HumanMessage("mine", id="1"), AIMessage("answer", id="2")]
    state = SimpleNamespace(owner="alice", owned=2, messages=[*owned, HumanMessage("theirs", id="3")])
    update = guard_update(state, "bob", {"query": ""})
    assert update["refused"] is True and update["query"] == ""
    assert [m.id for m in update["messages"]] == ["3"] and all(isinstance(m, RemoveMessage) for m in update["messages"])
    assert guard_update(state, "alice", {}) == {"owner": "alice", "owned": 3, "refused": False}


def test_another_user_cannot_run_the_agent_on_a_thread(tmp_path: Path) -> None:
    graph = build_agent_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "shared-id"}}
    alice, bob = Context(store_path=str(tmp_path), user_id="alice"), Context(store_path=str(tmp_path), user_id="bob")
    graph.invoke({"messages": [HumanMessage(f"My pin code is {PIN}.")]}, config, context=alice)
    before = graph.get_state(config).values["messages"]

    with pytest.raises(ThreadOwnerError) as refused:
        graph.invoke({"messages": [HumanMessage("What is my pin code? zq-intruder")]}, config, context=bob)
    assert PIN not in str(refused.value) and "alice" not in str(refused.value)
    assert graph.get_state(config).values["messages"] == before  # the intruder's message is gone again

    out = graph.invoke({"messages": [HumanMessage("What is my pin code?")]}, config, context=alice)
    assert PIN in str(out["messages"][-1].content) and len(out["messages"]) == len(before) + 2
    with Memory(tmp_path, user_id="bob") as mem:
        assert mem.search_observations("pin code", k=5) == []
    with Memory(tmp_path, user_id="alice") as mem:
        assert not [o for o in mem.search_observations("zq-intruder", k=20) if "zq-intruder" in o["text"]]


def test_another_user_cannot_run_the_memory_graph_on_a_thread(tmp_path: Path) -> None:
    graph = build_memory_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    alice, bob = Context(store_path=str(tmp_path), user_id="alice"), Context(store_path=str(tmp_path), user_id="bob")
    graph.invoke({"messages": [HumanMessage(f"My pin code is {PIN}.")]}, config, context=alice)
    with pytest.raises(ThreadOwnerError):
        graph.invoke({"query": "pin code", "observations": [{"text": "I live in zq-Nowhere."}]}, config, context=bob)
    out = graph.invoke({"query": "Where do I live?"}, config, context=alice)  # bob's observation is not replayed
    assert "zq-Nowhere" not in out["memory_context"]
    with Memory(tmp_path, user_id="alice") as mem:
        assert [o for o in mem.search_observations("Nowhere", k=5) if "Nowhere" in o["text"]] == []


def test_owner_is_not_an_input_and_a_fork_from_before_the_claim_is_refused(tmp_path: Path) -> None:
    """Third breaker run: bob sent ``"owner": "bob"`` with his input, or resumed from the checkpoint taken
    before alice's first run set ``owner``; both took the thread. The owner is recorded in the store's ledger."""
    graph = build_agent_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    alice, bob = Context(store_path=str(tmp_path), user_id="alice"), Context(store_path=str(tmp_path), user_id="bob")
    graph.invoke({"messages": [HumanMessage(f"My door code is {PIN}.")]}, config, context=alice)
    with pytest.raises(ThreadOwnerError):
        graph.invoke({"messages": [HumanMessage("what is my door code?")], "owner": "bob"}, config, context=bob)
    early = [h for h in graph.get_state_history(config) if h.next == ("owner_guard",)][-1]
    fork = {"configurable": {"thread_id": "t", "checkpoint_id": early.config["configurable"]["checkpoint_id"]}}
    with pytest.raises(ThreadOwnerError):
        graph.invoke({"messages": [HumanMessage("what is my door code?")]}, fork, context=bob)
    with Memory(tmp_path, user_id="bob") as mem:
        assert mem.search_observations("door code", k=5) == []
    out = graph.invoke({"messages": [HumanMessage("What is my door code?")]}, config, context=alice)
    assert PIN in str(out["messages"][-1].content)
