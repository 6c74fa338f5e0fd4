"""Structured output that survives local models (issue 14): the pure parsing of ``memory_graph.structured``, and
each request shape, reasoning blocks, fences, the retry and the logged fallback through the real ``ChatOpenAI``
client against the local stub (tests/openai_stub.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from openai_stub import StubError, StubOpenAI, fenced, last_content, sequence, shape, text, think, tool_call

from memory_graph import Memory, structured
from memory_graph.chat_model import make_chat_model
from memory_graph.config import Context
from memory_graph.errors import InvalidInputError, ModelOutputError
from memory_graph.extract.llm import ExtractedFact, Extraction
from memory_graph.llm_linker import LinkProposal

LISBON = {"kind": "state", "subject": "self", "attribute": "location", "value": "Lisbon", "scope": "",
          "negated": False, "multi_valued": False, "update": False, "when": None, "text": "The user lives in Lisbon."}
GOOD = {"facts": [LISBON]}
MODES = ["json_schema", "function_calling", "json_mode"]


def answer_for(body: dict[str, Any], doc: dict[str, Any], name: str = "Extraction") -> dict[str, Any]:
    """``doc`` in the form the request asked for: a tool call when tools are bound, else JSON text."""
    return tool_call(name, doc) if body.get("tools") else text(json.dumps(doc))


def model(server: StubOpenAI) -> Any:
    """The real client against the stub, without client retries (a 500 would otherwise be retried by openai)."""
    return make_chat_model("stub", server.base_url, max_retries=0)


# ---- configuration ----------------------------------------------------------------------------------------


def test_context_option_default_env_and_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_GRAPH_STRUCTURED_OUTPUT", raising=False)
    assert Context().structured_output == "auto"
    monkeypatch.setenv("MEMORY_GRAPH_STRUCTURED_OUTPUT", "json_mode")
    assert Context().structured_output == "json_mode"
    for bad in ("json", "JSON_SCHEMA", "tools"):
        monkeypatch.setenv("MEMORY_GRAPH_STRUCTURED_OUTPUT", bad)
        with pytest.raises(InvalidInputError):
            Context()
    monkeypatch.delenv("MEMORY_GRAPH_STRUCTURED_OUTPUT")
    for bad_value in ("", None, 1, ["json_mode"]):
        with pytest.raises(InvalidInputError):
            Context(structured_output=bad_value)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        Memory("unused", structured_output="xml")


def test_method_for_and_is_openai() -> None:
    assert structured.method_for("auto", "") == "json_schema"
    assert structured.method_for("auto", "http://localhost:11434/v1") == "json_schema"
    for mode in MODES:
        assert structured.method_for(mode, "http://127.0.0.1:8080/v1") == mode
    with pytest.raises(InvalidInputError):
        structured.method_for("grammar")
    assert structured.is_openai("") and structured.is_openai(None) and structured.is_openai("https://api.openai.com/v1")
    assert not structured.is_openai("http://localhost:8000/v1") and not structured.is_openai("https://api.openai.com.evil.test/v1")


# ---- pure parsing -----------------------------------------------------------------------------------------


def test_strip_think() -> None:
    assert structured.strip_think('<think>a {"x": 1}</think>\n{"y": 2}') == '{"y": 2}'
    assert structured.strip_think('<THINK>a</THINK> b <thinking>c</thinking> d') == "b  d"
    assert structured.strip_think('reasoning the template opened</think>{"y": 2}') == '{"y": 2}'  # orphan close tag
    assert structured.strip_think('<think>\nstill thinking {"draft": 1}') == ""  # never closed: only reasoning
    assert structured.strip_think('{"y": 2} <think>later') == '{"y": 2}'
    assert structured.strip_think("  plain answer  ") == "plain answer"


def test_fences_and_json_objects() -> None:
    assert structured.fenced_blocks('x ```json\n{"a": 1}\n``` y ```\n{"b": 2}```') == ['{"a": 1}\n', '{"b": 2}']
    text_ = 'say {not json} then [1, 2] and {"a": {"b": [1]}} and {"c": "}"} end {"d": '
    assert list(structured.json_objects(text_)) == [{"a": {"b": [1]}}, {"c": "}"}]
    assert list(structured.json_objects("{" * 10_000)) == []  # bounded work on a pathological answer


def test_parse_output_forms() -> None:
    expected = Extraction.model_validate(GOOD)
    body = json.dumps(GOOD)
    for raw in (body, f"Sure! {body} Hope it helps.", f"<think>hmm {{\"facts\": 3}}</think>{body}",
                f"```json\n{body}\n```", f"I think</think>\n```\n{body}\n```",
                f'<tool_call>{{"name": "Extraction", "arguments": {body}}}</tool_call>',
                f'{{"name": "Extraction", "arguments": {json.dumps(body)}}}',
                f'{{"unrelated": true}} {body}'):  # the first object that validates wins
        assert structured.parse_output(raw, Extraction) == expected, raw


def test_parse_output_errors_name_fields_not_text() -> None:
    with pytest.raises(ModelOutputError, match=r"facts\.0\.attribute: Field required") as err:
        structured.parse_output('{"facts": [{"subject": "self", "value": "SECRET-VALUE", "text": "t"}]}', Extraction)
    assert "SECRET-VALUE" not in str(err.value)
    with pytest.raises(ModelOutputError, match="no JSON object"):
        structured.parse_output("I live in Lisbon.", Extraction)
    # every field has a default: a stray object (here the inner one of a broken answer) must not pass as "no facts"
    with pytest.raises(ModelOutputError, match="unexpected field"):
        structured.parse_output('Sure: {"facts": [{"subject": "self"}', Extraction)
    assert structured.parse_output("{}", Extraction) == Extraction()  # an empty object is a valid "no facts"
    with pytest.raises(ModelOutputError, match="only reasoning"):
        structured.parse_output("<think>the user lives in", Extraction)
    with pytest.raises(ModelOutputError):
        structured.parse_output('{"supersedes": "m1"}', LinkProposal)


def test_parse_message_reads_tool_calls_then_text() -> None:
    call = AIMessage("", tool_calls=[{"name": "Extraction", "args": GOOD, "id": "c1"}])
    assert structured.parse_message(call, Extraction).facts[0].value == "Lisbon"
    broken = AIMessage("", invalid_tool_calls=[{"name": "Extraction", "args": '{"facts": []', "id": "c1", "error": None}])
    with pytest.raises(ModelOutputError, match="tool call's arguments are not valid JSON"):
        structured.parse_message(broken, Extraction)
    assert structured.parse_message(AIMessage(f"```json\n{json.dumps(GOOD)}\n```"), Extraction).facts[0].value == "Lisbon"
    assert structured.answer_text(call) == json.dumps(GOOD)


WORDS = st.text(alphabet=string.ascii_letters + " .,:;!?-'\n", max_size=40)
FACTS = st.builds(
    ExtractedFact, kind=st.sampled_from(["state", "preference", "event", "note"]), subject=st.text(max_size=12),
    attribute=st.text(max_size=12), value=st.text(max_size=20), scope=st.text(max_size=8), negated=st.booleans(),
    when=st.none() | st.text(max_size=10), text=st.text(max_size=30))


@settings(max_examples=150, deadline=None)
@given(facts=st.lists(FACTS, max_size=3), before=WORDS, after=WORDS,
       wrap=st.sampled_from(["plain", "fence", "think", "orphan", "tool"]), indent=st.none() | st.integers(0, 2))
def test_parse_output_recovers_any_document_from_any_wrapping(facts: list[ExtractedFact], before: str, after: str,
                                                              wrap: str, indent: int | None) -> None:
    doc = Extraction(facts=facts)
    body = json.dumps(doc.model_dump(), indent=indent)
    raw = {"plain": f"{before}{body}{after}", "fence": f"{before}```json\n{body}\n```{after}",
           "think": f"<think>{before}{{\"facts\": 1}}</think>{body}{after}", "orphan": f"{before}</think>{body}{after}",
           "tool": f'{before}{{"name": "Extraction", "arguments": {body}}}{after}'}[wrap]
    assert structured.parse_output(raw, Extraction) == doc


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300) | st.builds(lambda a, b: a + json.dumps(b) + a, st.text(max_size=20),
                                        st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5))))
def test_parse_output_never_raises_anything_else(raw: str) -> None:
    with contextlib.suppress(ModelOutputError):
        structured.parse_output(raw, LinkProposal)


# ---- request shapes through the real client ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", *MODES])
def test_each_mode_sends_its_request_shape(mode: str) -> None:
    with StubOpenAI(lambda body: answer_for(body, GOOD)) as server:
        outcome = structured.invoke(model(server), Extraction, [("system", "Extract."), ("human", "I live in Lisbon.")],
                                    mode=mode)
        body = server.requests[0]
    assert outcome.ok and outcome.value is not None and outcome.value.facts[0].value == "Lisbon"
    assert (outcome.attempts, outcome.errors, outcome.reason) == (1, (), None)
    expected = {"auto": "json_schema", "json_schema": "json_schema", "function_calling": "tools", "json_mode": "json_object"}
    assert shape(body) == expected[mode]
    if expected[mode] == "json_schema":
        spec = body["response_format"]["json_schema"]
        assert spec["name"] == "Extraction" and spec["strict"] is False  # strict only for api.openai.com
        assert spec["schema"]["additionalProperties"] is False and spec["schema"]["required"] == ["facts"]
    elif mode == "function_calling":
        assert [t["function"]["name"] for t in body["tools"]] == ["Extraction"]
        assert body["tool_choice"] == "required"  # a local server: llama.cpp takes only a string here
    else:
        assert body["response_format"] == {"type": "json_object"}
        system = body["messages"][0]["content"]
        assert system.startswith("Extract.") and "JSON schema" in system and '"facts"' in system


def test_openai_gets_strict_json_schema_and_a_named_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(structured, "is_openai", lambda base_url: True)  # the stub stands in for api.openai.com
    with StubOpenAI(lambda body: answer_for(body, GOOD)) as server:
        for mode in ("auto", "function_calling"):
            assert structured.invoke(model(server), Extraction, [("human", "I live in Lisbon.")], mode=mode).ok
        schema_body, tools_body = server.requests
    assert schema_body["response_format"]["json_schema"]["strict"] is True
    assert tools_body["tool_choice"] == {"type": "function", "function": {"name": "Extraction"}}


@pytest.mark.parametrize("answer", [think(GOOD), think(GOOD, opened=False), fenced(GOOD),
                                    text(f'<tool_call>{{"name": "Extraction", "arguments": {json.dumps(GOOD)}}}</tool_call>')],
                         ids=["think", "think-opened-by-template", "fence", "tool-call-as-text"])
@pytest.mark.parametrize("mode", MODES)
def test_answers_around_the_json_are_read_at_once(answer: dict[str, Any], mode: str) -> None:
    with StubOpenAI(sequence(answer)) as server:
        outcome = structured.invoke(model(server), Extraction, [("human", "I live in Lisbon.")], mode=mode)
        assert len(server.requests) == 1
    assert outcome.ok and outcome.value is not None and outcome.value.facts[0].value == "Lisbon"


@pytest.mark.parametrize("mode", MODES)
def test_a_broken_answer_is_retried_once_with_the_reason(mode: str) -> None:
    missing = {"facts": [{k: v for k, v in LISBON.items() if k != "attribute"}]}
    first = tool_call("Extraction", missing) if mode == "function_calling" else text(f"{json.dumps(missing)}")
    with StubOpenAI(sequence(first, text(json.dumps(GOOD)))) as server:
        outcome = structured.invoke(model(server), Extraction, [("system", "Extract."), ("human", "I live in Lisbon.")],
                                    mode=mode)
        retry = server.requests[1]["messages"]
    assert outcome.ok and outcome.attempts == 2 and outcome.reason is None
    assert len(outcome.errors) == 1 and "facts.0.attribute: Field required" in outcome.errors[0]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[1]["content"] == "I live in Lisbon."
    assert '"value": "Lisbon"' in retry[2]["content"]  # the model sees its own answer (as text, not a tool call)
    assert "tool_calls" not in retry[2]
    assert retry[3]["content"].startswith("Your answer could not be used: ") and "facts.0.attribute" in retry[3]["content"]


def test_an_unclosed_think_block_is_retried_then_dropped() -> None:
    with StubOpenAI(sequence(think(GOOD, closed=False))) as server:
        outcome = structured.invoke(model(server), Extraction, [("human", "I live in Lisbon.")])
        assert len(server.requests) == 2
    assert not outcome.ok and outcome.reason == "invalid_output" and outcome.attempts == 2
    assert all("only reasoning" in e for e in outcome.errors)


def test_server_errors_are_retried_with_the_same_request() -> None:
    with StubOpenAI(sequence(StubError(400, "response_format json_schema is not supported"), text(json.dumps(GOOD)))) as server:
        outcome = structured.invoke(model(server), Extraction, [("human", "I live in Lisbon.")])
        assert server.requests[0] == server.requests[1]
    assert outcome.ok and outcome.attempts == 2 and "400" in outcome.errors[0]
    with StubOpenAI(sequence(StubError(400, "no"))) as server:
        outcome = structured.invoke(model(server), Extraction, [("human", "I live in Lisbon.")], retries=0)
        assert len(server.requests) == 1
    assert (outcome.ok, outcome.reason, outcome.attempts) == (False, "error", 1)
    with pytest.raises(InvalidInputError):
        structured.invoke(model(server), Extraction, [("human", "x")], retries=-1)


def test_a_model_that_cannot_build_the_request_is_an_outcome_not_an_exception() -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    outcome = structured.invoke(FakeListChatModel(responses=["{}"]), Extraction, [("human", "x")], mode="json_mode")
    assert (outcome.ok, outcome.attempts, outcome.reason) == (False, 0, "error") and outcome.errors


# ---- the extractor and the linker: retry, then the logged fallback -----------------------------------------


def test_extraction_retry_then_fallback_is_logged_and_counted(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="memory_graph")
    with StubOpenAI(sequence(text("Sure: {\"facts\": [{\"subject\": \"self\"}"))) as server, \
            Memory(tmp_path, user_id="u", model="stub", base_url=server.base_url, structured_output="json_mode") as mem:
        formed = mem.observe("I live in Lisbon.", ref="m1")
        assert len(server.requests) == 2 and {shape(b) for b in server.requests} == {"json_object"}
        fallbacks = mem.last_model_fallbacks
        obs_id = mem.store.ledger.query("SELECT id FROM observations WHERE namespace='u'")[0]["id"]
        assert [f["value"] for f in formed] == ["Lisbon"]
        assert mem.inspect(formed[0]["id"])["events"][0]["detail"]["extractor"] == "rules-fallback"
    assert fallbacks == [{"step": "extract", "observation_id": obs_id, "ref": "m1", "method": "json_mode", "attempts": 2,
                          "reason": "invalid_output", "records": 1}]
    [warning] = [r for r in caplog.records if "LLM extraction dropped" in r.getMessage()]
    assert warning.levelno == logging.WARNING and obs_id in warning.getMessage() and "m1" in warning.getMessage()
    assert "rule extractor formed 1 record(s)" in warning.getMessage()


def test_a_good_answer_leaves_no_fallback(tmp_path: Any) -> None:
    with StubOpenAI(lambda body: answer_for(body, GOOD)) as server, \
            Memory(tmp_path, user_id="u", model="stub", base_url=server.base_url, structured_output="function_calling") as mem:
        formed = mem.observe("I live in Lisbon.", ref="m1")
        assert mem.inspect(formed[0]["id"])["events"][0]["detail"]["extractor"] == "llm"
        assert mem.last_model_fallbacks == [] and shape(server.requests[0]) == "tools"


def test_timeout_falls_back_within_the_deadline(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="memory_graph")
    with StubOpenAI(sequence(text(json.dumps(GOOD))), delay=60.0) as server, \
            Memory(tmp_path, user_id="u", model="stub", base_url=server.base_url, model_deadline_s=2.0) as mem:
        formed = mem.observe("I live in Lisbon.", ref="m1")
        fallbacks = mem.last_model_fallbacks
        assert len(server.requests) == 1  # no retry once the deadline has passed
        assert mem.inspect(formed[0]["id"])["events"][0]["detail"]["extractor"] == "rules-fallback"
    assert [(f["step"], f["reason"], f["attempts"]) for f in fallbacks] == [("extract", "deadline", 1)]
    assert any("LLM extraction dropped" in r.getMessage() and "deadline" in r.getMessage() for r in caplog.records)


def test_a_broken_linker_answer_is_retried_then_the_rules_decide(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    facts = {"Billing runs on Postgres.": ("billing database", "Postgres"),
             "Invoice storage lives in CockroachDB.": ("invoice storage", "CockroachDB")}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        if body["response_format"]["json_schema"]["name"] == "LinkProposal":
            return text("<think>the new one replaces the old one</think> supersedes: the first candidate")
        attribute, value = facts[last_content(body).split("Message: ", 1)[1]]
        return text(json.dumps({"facts": [{**LISBON, "attribute": attribute, "value": value, "text": f"{attribute} is {value}"}]}))

    caplog.set_level(logging.WARNING, logger="memory_graph")
    with StubOpenAI(respond) as server, Memory(tmp_path, user_id="u", model="stub", base_url=server.base_url) as mem:
        mem.observe("Billing runs on Postgres.", ref="m1")
        formed = mem.observe("Invoice storage lives in CockroachDB.", ref="m2")
        fallbacks = mem.last_model_fallbacks
        names = [b["response_format"]["json_schema"]["name"] for b in server.requests]
    assert names == ["Extraction", "Extraction", "LinkProposal", "LinkProposal"]  # one retry, then the rules
    assert [f["action"] for f in formed] == ["new"]
    assert [(f["step"], f["ref"], f["reason"], f["attempts"]) for f in fallbacks] == [("link", "m2", "invalid_output", 2)]
    assert any("LLM link proposal dropped" in r.getMessage() and "m2" in r.getMessage() for r in caplog.records)


def test_answers_past_the_schemas_bounds_are_invalid_output() -> None:
    """Breaker run: 3,000 facts for two lines, and one fact of 1.2M characters, were taken as they came."""
    from memory_graph.extract.llm import MAX_FACT_CHARS, MAX_FACTS

    fact = {"subject": "self", "attribute": "location", "value": "Porto", "text": "The user lives in Porto."}
    with pytest.raises(ModelOutputError):
        structured.parse_output(json.dumps({"facts": [fact] * (MAX_FACTS + 1)}), Extraction)
    with pytest.raises(ModelOutputError):
        structured.parse_output(json.dumps({"facts": [{**fact, "text": "x" * (MAX_FACT_CHARS + 1)}]}), Extraction)
    assert len(structured.parse_output(json.dumps({"facts": [fact] * MAX_FACTS}), Extraction).facts) == MAX_FACTS
    schema = Extraction.model_json_schema()
    assert schema["properties"]["facts"]["maxItems"] == MAX_FACTS  # the model is told the bounds too
