"""One deadline for all the model calls of a turn (issue 10, C): a hanging model costs a turn at most about
``Context.model_deadline_s`` seconds, and the turn is stored either way (rule extractor, offline answer).

The slow model is the real ``ChatOpenAI`` client against the local stub server (tests/openai_stub.py) holding
every answer back for a minute; the bounds are generous (3 x the deadline + 10 s).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from openai_stub import StubOpenAI, last_content, text

from agent.graph import build_agent_graph
from memory_graph import Memory
from memory_graph.chat_model import make_chat_model
from memory_graph.config import Context
from memory_graph.deadline import (
    MIN_CALL_S,
    ModelDeadlineExceeded,
    call_timeout,
    check_deadline,
    is_timeout,
    resolve,
    time_left,
)
from memory_graph.errors import InvalidInputError
from memory_graph.extract.llm import Extraction
from memory_graph.graph import build_memory_graph

DEADLINE = 3.0
BOUND = 3 * DEADLINE + 10
HANG = 60.0


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """A working model: no facts for extraction, abstain for linking, a fixed answer otherwise."""
    if "response_format" in body:
        name = body["response_format"]["json_schema"]["name"]
        doc = {"facts": []} if name == "Extraction" else {"supersedes": [], "reason": "", "abstain": True}
        return text(json.dumps(doc))
    return text("model answer")


def _ctx(tmp_path: Any, server: StubOpenAI, **kw: Any) -> Context:
    return Context(store_path=str(tmp_path), user_id="u", model="stub", base_url=server.base_url, **kw)


def _values(tmp_path: Any, attribute: str) -> list[tuple[str, str]]:
    """(value, extractor) of the current memories of ``attribute``."""
    with Memory(tmp_path, user_id="u") as mem:
        rows = mem.store.ledger.query("SELECT id, value FROM memories WHERE namespace='u' AND attribute=? AND status='current'",
                                      (attribute,))
        return [(r["value"], mem.inspect(r["id"])["events"][0]["detail"]["extractor"]) for r in rows]


# ---- configuration and the pure helpers ---------------------------------------------------------------------


def test_context_model_deadline_default_env_and_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_GRAPH_MODEL_DEADLINE", raising=False)
    assert Context().model_deadline_s == 30.0
    assert Context(model_deadline_s=5).model_deadline_s == 5.0
    monkeypatch.setenv("MEMORY_GRAPH_MODEL_DEADLINE", "12.5")
    assert Context().model_deadline_s == 12.5
    for raw in ("soon", "0", "-3", "nan", "inf"):
        monkeypatch.setenv("MEMORY_GRAPH_MODEL_DEADLINE", raw)
        with pytest.raises(InvalidInputError):
            Context()
    monkeypatch.delenv("MEMORY_GRAPH_MODEL_DEADLINE")
    for bad in (0, -1, 0.0, float("nan"), float("inf"), "30", True, None):
        with pytest.raises(InvalidInputError):
            Context(model_deadline_s=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):  # InvalidInputError is a ValueError
        Context().replace(model_deadline_s=-1)


def test_deadline_helpers() -> None:
    assert resolve(None, 30, now=100.0) == 130.0
    assert resolve(90.0, 30, now=100.0) == 90.0  # a given deadline wins, even a past one
    assert time_left(130.0, now=100.0) == 30.0 and time_left(90.0, now=100.0) == 0.0
    assert call_timeout(130.0, now=100.0) == 30.0
    assert call_timeout(130.0, cap=10.0, now=100.0) == 10.0
    assert call_timeout(100.0 + MIN_CALL_S / 2, now=100.0) is None  # too little left: do not call
    assert call_timeout(None, cap=60.0) == 60.0
    assert check_deadline(None) is None and check_deadline(5) == 5.0
    for bad in (float("nan"), float("inf"), "tomorrow", True):
        with pytest.raises(InvalidInputError):
            check_deadline(bad)
    with pytest.raises(InvalidInputError):
        resolve(None, 0)
    assert is_timeout(TimeoutError()) and is_timeout(ModelDeadlineExceeded("x")) and not is_timeout(RuntimeError())


# ---- the client: every request bounded, none made without time --------------------------------------------


def test_a_model_with_a_deadline_times_out_and_then_is_not_called() -> None:
    with StubOpenAI(answer, delay=HANG) as server:
        model = make_chat_model("stub", server.base_url, budget_s=DEADLINE)
        assert model is not None
        start = time.monotonic()
        with pytest.raises(Exception) as err:
            model.with_structured_output(Extraction).invoke("Message: I live in Lisbon.")
        assert is_timeout(err.value) and time.monotonic() - start < BOUND
        with pytest.raises(ModelDeadlineExceeded):
            model.invoke("hello")
        assert len(server.requests) == 1  # no client retries, and nothing sent once the time is up


def test_a_server_that_trickles_bytes_cannot_stretch_a_call_past_the_deadline(tmp_path: Any) -> None:
    """Found by the breaker: the client's timeout is per read, so a body sent one byte a second kept an observe
    busy for 87 s under a 10 s deadline. The call is now capped by wall-clock time."""
    with StubOpenAI(answer, drip=1.0) as server:
        start = time.monotonic()
        with Memory(tmp_path / "s", user_id="u", model="stub", base_url=server.base_url,
                    model_deadline_s=DEADLINE) as mem:
            formed = mem.observe("I live in Lisbon.", time="2024-01-01T00:00:00")
        elapsed = time.monotonic() - start
    assert elapsed < BOUND, elapsed
    assert [f["value"] for f in formed] == ["Lisbon"]  # the rule extractor formed it after the deadline


# ---- a hanging model: the turn finishes and is stored -------------------------------------------------------


def test_agent_turn_with_a_hanging_model_finishes_and_is_stored(tmp_path: Any) -> None:
    with StubOpenAI(answer, delay=HANG) as server:
        ctx = _ctx(tmp_path, server, model_deadline_s=DEADLINE)
        app = build_agent_graph(checkpointer=InMemorySaver())
        start = time.monotonic()
        state = app.invoke({"messages": [HumanMessage("I live in Lisbon.")]}, {"configurable": {"thread_id": "t"}},
                           context=ctx)
        elapsed = time.monotonic() - start
        requests = len(server.requests)
    assert elapsed < BOUND, elapsed
    reply = state["messages"][-1]
    assert isinstance(reply, AIMessage) and reply.content.startswith("The chat model timed out"), reply.content
    assert requests == 1  # the planner's call used the turn's time; extraction, linker and responder were skipped
    assert _values(tmp_path, "location") == [("Lisbon", "rules-fallback")]


def test_observe_with_a_hanging_model_finishes_and_is_stored(tmp_path: Any) -> None:
    with StubOpenAI(answer, delay=HANG) as server, \
            Memory(tmp_path, user_id="u", model="stub", base_url=server.base_url, model_deadline_s=DEADLINE) as mem:
        mem.observe("I live in Berlin.", time="2024-01-01T00:00:00")  # a candidate the LLM linker would be asked about
        start = time.monotonic()
        formed = mem.observe("I moved to Lisbon.", time="2024-02-01T00:00:00")
        elapsed = time.monotonic() - start
    assert elapsed < BOUND, elapsed
    assert [(f["action"], f["value"]) for f in formed] == [("supersede", "Lisbon")]
    assert _values(tmp_path, "location") == [("Lisbon", "rules-fallback")]


def test_the_memory_subgraph_shares_one_deadline_between_extraction_and_linker(tmp_path: Any) -> None:
    with Memory(tmp_path, user_id="u") as mem:
        mem.observe("I live in Berlin.", time="2024-01-01T00:00:00")
    with StubOpenAI(answer, delay=HANG) as server:
        ctx = _ctx(tmp_path, server)
        start = time.monotonic()
        out = build_memory_graph().invoke(
            {"observations": [{"text": "I moved to Lisbon.", "time": "2024-02-01T00:00:00"}], "deadline": time.time() + DEADLINE},
            context=ctx)
        elapsed = time.monotonic() - start
        kinds = [b["response_format"]["json_schema"]["name"] for b in server.requests]
    assert elapsed < BOUND, elapsed
    assert kinds == ["Extraction"]  # no retry and no linker request after the extraction used the time
    assert [f["value"] for f in out["formed"]] == ["Lisbon"]


# ---- the turn's deadline: given, consumed, fresh per turn -------------------------------------------------


def test_a_past_input_deadline_skips_every_model_call(tmp_path: Any) -> None:
    with StubOpenAI(answer) as server:
        ctx = _ctx(tmp_path, server)
        app = build_agent_graph(checkpointer=InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        first = app.invoke({"messages": [HumanMessage("I live in Lisbon.")], "deadline": time.time() - 1}, cfg, context=ctx)
        assert server.requests == []
        assert first["messages"][-1].content.startswith("The chat model timed out (the turn's model deadline")
        assert first["deadline"] is None  # consumed by the turn
        second = app.invoke({"messages": [HumanMessage("Where do I live?")]}, cfg, context=ctx)  # its own deadline
        assert second["messages"][-1].content == "model answer"
        assert second["turn_deadline"] > first["turn_deadline"] + 1
        assert server.requests  # the second turn did call the model
    assert _values(tmp_path, "location") == [("Lisbon", "rules-fallback")]


def test_streaming_a_turn_respects_the_deadline_too(tmp_path: Any) -> None:
    """``stream_mode="messages"`` (Studio, ``langgraph dev``) streams the chat model: the same deadline holds."""
    with StubOpenAI(answer) as server:
        ctx = _ctx(tmp_path, server, llm_linker=False)
        chunks = list(build_agent_graph().stream({"messages": [HumanMessage("Hello there.")]}, context=ctx,
                                                 stream_mode=["messages", "values"]))
        assert chunks[-1][1]["messages"][-1].content == "model answer"
        assert any(body.get("stream") for body in server.requests)
        assert all("timeout" not in body for body in server.requests)  # a request option, never in the body
        assert last_content(server.requests[-1]) == "Hello there."
    with StubOpenAI(answer, delay=HANG) as server:
        ctx = _ctx(tmp_path, server, model_deadline_s=DEADLINE)
        start = time.monotonic()
        chunks = list(build_agent_graph().stream({"messages": [HumanMessage("Hello again.")]}, context=ctx,
                                                 stream_mode=["messages", "values"]))
        elapsed = time.monotonic() - start
        assert [bool(body.get("stream")) for body in server.requests] == [True]
    assert elapsed < BOUND, elapsed
    assert chunks[-1][1]["messages"][-1].content.startswith("The chat model timed out")


class RaisingChatModel(BaseChatModel):
    """A model whose every call raises ``error``."""

    error: str = "timeout"

    @property
    def _llm_type(self) -> str:
        return "raising"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
        raise TimeoutError("read timed out") if self.error == "timeout" else RuntimeError("boom")

    def bind_tools(self, tools: Any, **kwargs: Any) -> RaisingChatModel:  # type: ignore[override]
        return self


@pytest.mark.parametrize(("error", "lead"), [("timeout", "The chat model timed out (TimeoutError)"),
                                             ("other", "The chat model failed (RuntimeError)")])
def test_the_offline_answer_says_whether_the_model_timed_out(tmp_path: Any, error: str, lead: str) -> None:
    ctx = Context(store_path=str(tmp_path), user_id="u")
    state = build_agent_graph(chat_model=RaisingChatModel(error=error)).invoke(
        {"messages": [HumanMessage("I live in Lisbon.")]}, context=ctx)
    assert state["messages"][-1].content.startswith(lead)


def test_an_injected_model_is_not_called_after_the_deadline(tmp_path: Any) -> None:
    class Counting(RaisingChatModel):
        calls: int = 0

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
            self.calls += 1
            return ChatResult(generations=[ChatGeneration(message=AIMessage("hi"))])

    model = Counting()
    ctx = Context(store_path=str(tmp_path), user_id="u")
    state = build_agent_graph(chat_model=model).invoke(
        {"messages": [HumanMessage("Hello.")], "deadline": time.time()}, context=ctx)
    assert model.calls == 0 and state["messages"][-1].content.startswith("The chat model timed out")
