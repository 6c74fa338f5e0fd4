"""The real ``ChatOpenAI`` against a local OpenAI-compatible stub: planner tool call, structured extraction, answer.

langchain-openai 1.x ``with_structured_output`` defaults to ``method="json_schema"``: the request carries
``response_format = {"type": "json_schema", ...}`` and the answer is the JSON document as message content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from openai_stub import StubOpenAI, last_content, text, tool_call

from agent.graph import build_agent_graph
from memory_graph import Memory
from memory_graph.chat_model import make_chat_model
from memory_graph.config import Context
from memory_graph.extract.llm import Extraction

LISBON = {"kind": "state", "subject": "self", "attribute": "location", "value": "Lisbon", "scope": "",
          "negated": False, "multi_valued": False, "update": False, "when": None, "text": "The user lives in Lisbon."}


def scripted(body: dict[str, Any]) -> dict[str, Any]:
    """(b) extraction for structured requests, (a) a tool call for the planner's first round, (c) a plain answer."""
    if "response_format" in body:
        facts = [LISBON] if "Lisbon" in last_content(body) else []
        return text(json.dumps(Extraction.model_validate({"facts": facts}).model_dump()))
    if body.get("tools"):
        if body["messages"][-1]["role"] == "tool":
            return text("No further tools needed.")
        return tool_call("calculator", {"expression": "6 * 7"})
    system = body["messages"][0]["content"]
    ids = re.findall(r"\[m:([a-z0-9]+)\]", system)
    return text(f"You live in Lisbon [m:{ids[0] if ids else 'none'}], and 6 * 7 = 42.")


@pytest.fixture
def stub() -> Iterator[StubOpenAI]:
    with StubOpenAI(scripted) as server:
        yield server


def test_make_chat_model_talks_to_the_stub(stub: StubOpenAI) -> None:
    model = make_chat_model("stub", stub.base_url)
    assert model is not None
    reply = model.invoke("hello")
    assert isinstance(reply, AIMessage) and "42" in reply.content
    structured = model.with_structured_output(Extraction).invoke("Message: I live in Lisbon.")
    assert isinstance(structured, Extraction) and structured.facts[0].value == "Lisbon"
    assert stub.requests[-1]["response_format"]["type"] == "json_schema"


def test_agent_with_openai_compatible_model(stub: StubOpenAI, tmp_path: Any) -> None:
    ctx = Context(store_path=str(tmp_path), user_id="u", model="stub", base_url=stub.base_url)
    Memory(ctx.store_path, user_id="u", model="stub", base_url=stub.base_url).observe("I live in Lisbon.")
    state = build_agent_graph().invoke({"messages": [HumanMessage("Where do I live, and what is 6 times 7?")]}, context=ctx)
    msgs = state["messages"]
    assert [m.content for m in msgs if isinstance(m, ToolMessage)] == ["42"]
    lisbon = next(i["id"] for i in state["recall"]["items"] if i["value"] == "Lisbon")
    assert msgs[-1].content == f"You live in Lisbon [m:{lisbon}], and 6 * 7 = 42."
    kinds = stub.kinds()
    assert kinds.count("tools") == 2 and kinds[-1] == "plain" and "structured" in kinds
    first_tools = next(b for b in stub.requests if b.get("tools"))
    assert {t["function"]["name"] for t in first_tools["tools"]} == {"calculator", "current_time", "search_memory"}


def test_llm_extractor_forms_memories(stub: StubOpenAI, tmp_path: Any) -> None:
    with Memory(tmp_path, user_id="u", model="stub", base_url=stub.base_url) as mem:
        formed = mem.observe("I live in Lisbon.", ref="m1")
        assert [f["value"] for f in formed] == ["Lisbon"]
        info = mem.inspect(formed[0]["id"])
        assert info["events"][0]["type"] == "formed" and info["events"][0]["detail"]["extractor"] == "llm"
        assert info["provenance"][0]["ref"] == "m1"


def test_malformed_output_falls_back_to_rules(tmp_path: Any) -> None:
    def broken(body: dict[str, Any]) -> dict[str, Any]:
        return text("this is { not json") if "response_format" in body else text("ok")

    with StubOpenAI(broken) as server, Memory(tmp_path, user_id="u", model="stub", base_url=server.base_url) as mem:
        formed = mem.observe("I live in Lisbon.", ref="m1")
        assert len(server.requests) == 2  # one retry, then the rule extractor
        assert formed and formed[0]["value"] == "Lisbon"
        assert mem.inspect(formed[0]["id"])["events"][0]["detail"]["extractor"] == "rules-fallback"
        obs = mem.store.ledger.query("SELECT text, ref FROM observations WHERE namespace='u'")
        assert [(r["text"], r["ref"]) for r in obs] == [("I live in Lisbon.", "m1")]


def test_a_failing_model_loses_no_turn(tmp_path: Any) -> None:
    def broken(body: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("model down")

    with StubOpenAI(broken) as server:
        ctx = Context(store_path=str(tmp_path), user_id="u", model="stub", base_url=server.base_url)
        state = build_agent_graph().invoke({"messages": [HumanMessage("I live in Lisbon.")]}, context=ctx)
    assert state["messages"][-1].content.startswith("The chat model failed (")
    with Memory(tmp_path, user_id="u") as mem:  # the rule extractor stored the turn after the model failed
        assert [it.value for it in mem.recall("Where does the user live?").items if it.attribute == "location"] == ["Lisbon"]
