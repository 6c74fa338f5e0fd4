"""The agent graph offline and with a scripted chat model: memory between planner and tools, credit, citations."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from agent.graph import MAX_TOOL_ROUNDS, build_agent_graph
from agent.prompts import NO_LLM
from agent.tools import safe_eval
from memory_graph import Memory
from memory_graph.config import Context

CITE = re.compile(r"\[m:([a-z0-9]+)\]")


class ScriptedChatModel(BaseChatModel):
    """Replies with ``script`` in order (then ``fallback``); records every prompt; ``bind_tools`` is a no-op."""

    script: list[AIMessage] = Field(default_factory=list)
    fallback: AIMessage | None = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
        self.calls.append(list(messages))
        msg = self.script.pop(0) if self.script else (self.fallback or AIMessage("(script exhausted)"))
        return ChatResult(generations=[ChatGeneration(message=msg.model_copy())])

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self


@pytest.fixture
def ctx(tmp_path: Any) -> Context:
    return Context(store_path=str(tmp_path), user_id="u")


def _turn(app: Any, ctx: Context, text: str, thread: str = "t1") -> dict[str, Any]:
    return app.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}, context=ctx)


def test_offline_agent_answers_from_memory_and_infers_credit(ctx: Context) -> None:
    app = build_agent_graph(checkpointer=InMemorySaver())
    _turn(app, ctx, "I live in Lisbon.")
    _turn(app, ctx, "I work at Acme Robotics as a software engineer.")
    state = _turn(app, ctx, "Where do I live?")
    answer = state["messages"][-1]
    assert isinstance(answer, AIMessage)
    assert "Lisbon" in answer.content and NO_LLM in answer.content
    cited = CITE.findall(answer.content)
    assert cited, answer.content
    recall_id = state["last_recall_id"]
    assert recall_id and state["recall"]["id"] == recall_id
    assert state["memory_context"].startswith("<memory-context>") and "Lisbon" in state["memory_context"]
    lisbon = next(i["id"] for i in state["recall"]["items"] if "Lisbon" in i["text"])
    assert lisbon in cited

    # the next human turn moves on: the previous recall is credited (weak success) inside the graph
    state = _turn(app, ctx, "Thanks! What else do you know about me?")
    assert state["credit"] and state["credit"]["recall_id"] == recall_id and state["credit"]["success"] is True
    assert lisbon in state["credit"]["credited"]
    with Memory(ctx.store_path, user_id="u") as mem:
        assert mem.store.ledger.query("SELECT outcome FROM recalls WHERE id=?", (recall_id,))[0]["outcome"] == "success"
        assert mem.inspect(lisbon)["stats"]["overall"]["credited"] > 0
        # every message of the thread was observed once, by message id
        refs = [r["ref"] for r in mem.store.ledger.query("SELECT ref FROM observations WHERE namespace='u'")]
        assert len(refs) == len(set(refs)) == len(state["messages"]) - 1  # the newest answer is observed next turn


def test_correction_blames_the_recall(ctx: Context) -> None:
    app = build_agent_graph(checkpointer=InMemorySaver())
    _turn(app, ctx, "I live in Lisbon.")
    first = _turn(app, ctx, "Where do I live?")
    state = _turn(app, ctx, "No, that's wrong, I moved.")
    assert state["credit"]["recall_id"] == first["last_recall_id"] and state["credit"]["success"] is False
    assert state["credit"]["blamed"]


def test_stateless_invocation_without_checkpointer(ctx: Context) -> None:
    app = build_agent_graph()
    out = app.invoke({"messages": [HumanMessage("My dog is called Pixel.", id="h1")]}, context=ctx)
    msgs = [*out["messages"], HumanMessage("What is my dog called?", id="h2")]
    out2 = app.invoke({"messages": msgs, "last_recall_id": out["last_recall_id"]}, context=ctx)
    assert "Pixel" in out2["messages"][-1].content
    assert out2["credit"]["recall_id"] == out["last_recall_id"]


def test_scripted_model_calls_a_tool_then_answers_with_memory_context(ctx: Context) -> None:
    model = ScriptedChatModel(script=[
        AIMessage("", tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "c1"}]),  # planner
        AIMessage("No more tools needed."),  # planner, round 2
        AIMessage("You live in Lisbon [m:x] and 6*7 is 42."),  # respond
    ])
    app = build_agent_graph(checkpointer=InMemorySaver(), chat_model=model)
    Memory(ctx.store_path, user_id="u").observe("I live in Lisbon.")
    state = _turn(app, ctx, "Where do I live, and what is 6 times 7?")
    msgs = state["messages"]
    tool_msgs = [m for m in msgs if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_msgs] == ["42"]
    assert msgs[-1].content == "You live in Lisbon [m:x] and 6*7 is 42."
    assert len(model.calls) == 3
    # memory ran between the planner and the tool node: the second planner call sees the recalled context
    system_2, system_3 = model.calls[1][0], model.calls[2][0]
    assert isinstance(system_2, SystemMessage) and "Lisbon" in system_2.content
    assert isinstance(system_3, SystemMessage) and state["memory_context"] in system_3.content
    assert "Lisbon" in state["memory_context"]
    assert any(isinstance(m, ToolMessage) for m in model.calls[2])  # responder sees the tool result


def test_remember_false_recalls_and_stores_nothing(ctx: Context) -> None:
    """``remember=False`` (``memory-graph ask`` without ``--remember``): the memory node recalls for the question,
    with a model and its tool rounds too, but stores no message (the question, the tool traffic) and credits
    nothing; the recall record is written (its id is the answer's)."""
    with Memory(ctx.store_path, user_id="u") as mem:
        mem.observe("I live in Lisbon.")
        before = mem.inspect()["observations"]
    model = ScriptedChatModel(script=[
        AIMessage("", tool_calls=[{"name": "calculator", "args": {"expression": "6 * 7"}, "id": "c1"}]),
        AIMessage("No more tools needed."), AIMessage("You live in Lisbon."),
    ])
    state = build_agent_graph(chat_model=model).invoke(
        {"messages": [HumanMessage("Where do I live?")], "remember": False}, context=ctx)
    assert state["messages"][-1].content == "You live in Lisbon."
    assert "Lisbon" in state["memory_context"] and state["credit"] is None
    offline = build_agent_graph().invoke({"messages": [HumanMessage("Where do I live?")], "remember": False}, context=ctx)
    assert "Lisbon" in offline["messages"][-1].content
    with Memory(ctx.store_path, user_id="u") as mem:
        assert mem.inspect()["observations"] == before
        recalls = mem.store.ledger.query("SELECT id FROM recalls WHERE namespace='u'")
        assert {state["last_recall_id"], offline["last_recall_id"]} <= {r["id"] for r in recalls}


def test_tool_rounds_are_capped(ctx: Context) -> None:
    loop = AIMessage("", tool_calls=[{"name": "current_time", "args": {}, "id": "t"}])
    model = ScriptedChatModel(fallback=loop)
    app = build_agent_graph(chat_model=model)
    state = app.invoke({"messages": [HumanMessage("What time is it?")]}, context=ctx)
    assert sum(1 for m in state["messages"] if isinstance(m, ToolMessage)) == MAX_TOOL_ROUNDS
    assert isinstance(state["messages"][-1], AIMessage) and not state["messages"][-1].tool_calls


def test_search_memory_tool_reads_the_runs_store(ctx: Context) -> None:
    Memory(ctx.store_path, user_id="u").observe("My favorite language is Rust.")
    model = ScriptedChatModel(script=[
        AIMessage("", tool_calls=[{"name": "search_memory", "args": {"query": "favorite language"}, "id": "s1"}]),
        AIMessage("ok"), AIMessage("Rust."),
    ])
    state = build_agent_graph(chat_model=model).invoke({"messages": [HumanMessage("Which language do I like?")]}, context=ctx)
    tool_msg = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert "Rust" in tool_msg.content and "<memory-context>" in tool_msg.content


def test_safe_eval() -> None:
    assert safe_eval("(17 * 3) + sqrt(16)") == 55
    assert safe_eval("-2 ** 3 + 10 // 3") == -5
    for bad in ["__import__('os').system('true')", "x + 1", "2 ** 10000", "(1).real", "open('f')"]:
        with pytest.raises(ValueError):
            safe_eval(bad)
