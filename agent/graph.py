"""The agent graph: ``START -> owner_guard -> planner -> memory -> tools -> planner ... -> respond -> END``.

* ``owner_guard`` (``memory_graph.threads``) admits only the thread's owner (the ``user_id`` of its first run);
  another user's run is refused with ``ThreadOwnerError`` and its input removed from the thread.

* ``planner`` decides the tool calls (a chat model with the tools bound and the memory context in its
  system prompt) and the memory query (the newest human text). Without a chat model it calls no tools.
  Tool rounds per turn are capped at ``MAX_TOOL_ROUNDS``.
* ``memory`` runs the compiled memory subgraph (``memory_graph.graph.graph``): it stores the messages it has
  not yet observed, credits the previous answer's recall from this human turn, and recalls context for the
  query into ``memory_context``; with the input ``remember=False`` it only recalls (a read). It sits between the planner and the tool node, so tools and the responder
  see the recalled context.
* ``tools`` is LangGraph's ``ToolNode`` (``agent.tools.TOOLS``); it returns to the planner.
* ``respond`` answers with the chat model, or offline only from the recalled memories (with ``[m:ID]``
  citations), saying why: no LLM is configured, the model failed, or it timed out.

All model calls of one turn share one deadline (``Context.model_deadline_s``, see ``memory_graph.deadline``):
the planner's first round sets ``turn_deadline`` and the memory node passes it to the memory subgraph. A call
with no time left is not made: no tools, the rule extractor, no link proposals, the offline answer. Memory text
reaches a model only inside the fence: prompts carry the conversation through ``agent.prompts.model_messages``.

``graph`` is the module-level compiled instance (no checkpointer; ``langgraph dev`` and the CLI add one).
Configuration is ``memory_graph.config.Context`` (``context_schema``).
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime

from agent.prompts import TIMED_OUT, model_messages, planner_prompt, responder_prompt
from agent.responder import offline_message
from agent.state import AgentInput, AgentState
from agent.tools import TOOLS
from memory_graph.chat_model import make_chat_model
from memory_graph.config import Context, as_context
from memory_graph.deadline import call_timeout, is_timeout, resolve
from memory_graph.graph import graph as memory_subgraph
from memory_graph.messages import message_text as _text
from memory_graph.threads import add_owner_guard

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 3


def _last_human_index(messages: list[AnyMessage]) -> int:
    return next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), -1)


def _this_turn(messages: list[AnyMessage]) -> list[AnyMessage]:
    """The messages after the newest human message (all of them when there is none)."""
    return messages[_last_human_index(messages) + 1 :]


def tool_rounds(messages: list[AnyMessage]) -> int:
    """How many tool-calling AI messages the current turn already has."""
    return sum(1 for m in _this_turn(messages) if isinstance(m, AIMessage) and m.tool_calls)


def build_agent_graph(checkpointer: Any = None, chat_model: BaseChatModel | None = None, name: str = "agent") -> Any:
    """Compile the agent.

    Args:
        checkpointer: optional LangGraph checkpointer (e.g. ``SqliteSaver``) for conversation threads.
        chat_model: a chat model to use instead of ``Context.model`` / ``Context.base_url`` (tests inject a
            scripted one); it must support ``bind_tools``.
        name: the graph's name (shown in Studio and traces).
    """

    def configured(ctx: Context) -> bool:
        return chat_model is not None or bool(ctx.model)

    def resolve_model(ctx: Context, deadline: float) -> BaseChatModel | None:
        """The chat model for one call before ``deadline`` (epoch seconds); None when none is configured or
        no time is left (``deadline.MIN_CALL_S``)."""
        if call_timeout(deadline) is None:
            return None
        if chat_model is not None:
            return chat_model
        return make_chat_model(ctx.model, ctx.base_url, deadline=deadline)

    def turn_deadline(state: AgentState, ctx: Context) -> float:
        return state.turn_deadline if state.turn_deadline is not None else resolve(state.deadline, ctx.model_deadline_s)

    def planner(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Choose the memory query and, with a chat model, the tool calls of this round. The first round of a
        turn starts its model deadline: the input ``deadline``, else now + ``Context.model_deadline_s``."""
        ctx = as_context(runtime.context)
        idx = _last_human_index(state.messages)
        update: dict[str, Any] = {"memory_query": _text(state.messages[idx]).strip() if idx >= 0 else ""}
        rounds = tool_rounds(state.messages)
        if rounds == 0:  # a new turn: its own deadline (a deadline kept from the previous turn is stale)
            update.update(turn_deadline=resolve(state.deadline, ctx.model_deadline_s), deadline=None)
        deadline = update["turn_deadline"] if "turn_deadline" in update else turn_deadline(state, ctx)
        if not configured(ctx) or idx < 0 or rounds >= MAX_TOOL_ROUNDS:
            return update
        model = resolve_model(ctx, deadline)
        if model is None:
            log.warning("no time left before the turn's model deadline: planning no tools")
            return update
        prompt = [SystemMessage(planner_prompt(state.memory_context)), *model_messages(state.messages)]
        try:
            msg = model.bind_tools(TOOLS).invoke(prompt)
        except Exception as exc:  # noqa: BLE001 - an unreachable model must not lose the turn: plan no tools
            log.warning("planner model failed, continuing without tool calls: %s", exc)
            return update
        if isinstance(msg, AIMessage) and msg.tool_calls:
            update["messages"] = [msg]
        return update

    def memory(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run the memory subgraph: observe new messages, credit the last answer, recall for the query (only
        recall when ``remember`` is False)."""
        ctx = as_context(runtime.context)
        first_call = not any(isinstance(m, ToolMessage) for m in _this_turn(state.messages))
        if first_call:
            payload: dict[str, Any] = {
                "messages": state.messages, "query": state.memory_query, "last_recall_id": state.last_recall_id,
                "as_of": state.as_of, "include_history": state.include_history, "task": state.task,
            }
        else:  # later tool rounds: observe the tool traffic; recall again only when the query changed
            same = state.recall is not None and state.recall.get("query") == state.memory_query
            payload = {"messages": _this_turn(state.messages), "query": "" if same else state.memory_query,
                       "as_of": state.as_of, "include_history": state.include_history, "task": state.task}
        if not state.remember:  # a read: no message is observed, no previous answer credited
            payload.update(messages=[], last_recall_id=None)
        payload["deadline"] = turn_deadline(state, ctx)  # extraction and the LLM linker share the turn's deadline
        out = memory_subgraph.invoke(payload, context=ctx)
        update: dict[str, Any] = {}
        if first_call:
            update["credit"] = out.get("credit")
        if out.get("recall") is not None:
            update.update(memory_context=out.get("memory_context", ""), recall=out["recall"],
                          last_recall_id=out.get("last_recall_id"))
        elif first_call:
            update.update(memory_context="", recall=None)
        return update

    def answer(state: AgentState, ctx: Context) -> AIMessage:
        """The answer to the newest human message from the recalled context (offline when no model is
        configured, no time is left before the turn's deadline, or the model fails)."""
        if not configured(ctx):
            return offline_message(state.recall)
        model = resolve_model(ctx, turn_deadline(state, ctx))
        if model is None:
            return offline_message(state.recall, lead=f"{TIMED_OUT} (the turn's model deadline passed)")
        prompt = [SystemMessage(responder_prompt(state.memory_context)), *model_messages(state.messages)]
        try:
            reply = model.invoke(prompt)
        except Exception as exc:  # noqa: BLE001 - the turn is stored; answer from memory and say why
            log.warning("responder model failed, answering from memory: %s", exc)
            lead = f"{TIMED_OUT if is_timeout(exc) else 'The chat model failed'} ({type(exc).__name__})"
            return offline_message(state.recall, lead=lead)
        if not isinstance(reply, AIMessage) or reply.tool_calls:
            reply = AIMessage(_text(reply) if isinstance(reply, AIMessage) else str(reply))
        if not _text(reply).strip():
            return offline_message(state.recall, lead="The chat model gave an empty answer")
        return reply

    def respond(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
        """Append the answer; every message of the thread so far is now the owner's (``owned``)."""
        return {"messages": [answer(state, as_context(runtime.context))], "owned": len(state.messages) + 1}

    builder = StateGraph(AgentState, input_schema=AgentInput, context_schema=Context)
    builder.add_node("planner", planner)
    builder.add_node("memory", memory)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_node("respond", respond)
    add_owner_guard(builder, "planner")
    builder.add_edge("planner", "memory")
    builder.add_conditional_edges("memory", route_after_memory, ["tools", "respond"])
    builder.add_edge("tools", "planner")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name=name)


def route_after_memory(state: AgentState) -> Literal["tools", "respond"]:
    """To the tool node when the newest message is an AI message with pending tool calls, else respond."""
    last = state.messages[-1] if state.messages else None
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "respond"


graph = build_agent_graph()
