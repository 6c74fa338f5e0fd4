"""Structured output against a REAL local server: llama.cpp (xllamacpp) serving SmolLM2-135M-Instruct, started by
the session fixture ``llamacpp`` (tests/llamacpp_server.py) and stopped after the session.

The model is tiny: these tests check the protocol (each request shape reaches a real server and the answer is
parsed or falls back, a deadline cuts a call, the extractor never raises), never what the model says.

What this llama.cpp build does with ``function_calling`` (found here, asserted below): SmolLM2's own chat template
has no tool support, so the answer is plain text with no ``tool_calls``. The object form of ``tool_choice``
(``{"type": "function", ...}``, what OpenAI gets) is refused by llama.cpp ("Wrong type supplied for parameter
'tool_choice'") and treated as ``auto``, which is why other servers get ``"required"``; and with this template
``"required"`` does not force a call either. The text then goes through the same parsing as any answer: a JSON
object in it is used, otherwise one retry and the fallback.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel, Field

from memory_graph import Memory, structured
from memory_graph.chat_model import make_chat_model
from memory_graph.extract.llm import Extraction

pytestmark = pytest.mark.integration

PROMPT = [("system", "You describe pets as JSON."), ("human", "My dog Rex has four legs.")]


class Pet(BaseModel):
    """A pet."""

    name: str = Field(max_length=20)
    legs: int = Field(ge=0, le=8)


def model(server: Any, **kw: Any) -> Any:
    return make_chat_model("smollm2", server.base_url, max_retries=0, **kw)


def test_json_schema_output_parses_against_the_schema(llamacpp: Any) -> None:
    """llama.cpp turns ``response_format`` json_schema into a grammar: the first answer is valid (the schema is
    small enough to end within the server's ``N_PREDICT`` tokens; the extraction schema is not: see below)."""
    outcome = structured.invoke(model(llamacpp), Pet, PROMPT, mode="json_schema")
    assert outcome.ok and isinstance(outcome.value, Pet), (outcome.errors, llamacpp.log_tail())
    assert outcome.attempts == 1 and outcome.errors == ()


def test_function_calling_gets_text_not_a_tool_call(llamacpp: Any) -> None:
    """See the module docstring: no tool call comes back from this template (the request ``structured.invoke``
    sends a local server: the schema as the one tool, ``tool_choice="required"``). What the extractor then does
    with the text (parse, retry, fallback) is ``test_the_extractor_end_to_end_never_raises[function_calling]``."""
    raw = model(llamacpp).with_structured_output(Pet, method="function_calling", include_raw=True,
                                                 tool_choice="required").invoke(PROMPT)["raw"]
    assert isinstance(raw, AIMessage) and raw.tool_calls == [] and raw.invalid_tool_calls == []
    assert isinstance(raw.content, str) and raw.content.strip()


def test_a_plain_answer(llamacpp: Any) -> None:
    reply = model(llamacpp).invoke("Say hello.")
    assert isinstance(reply, AIMessage) and isinstance(reply.content, str) and reply.content.strip()


@pytest.mark.parametrize("mode", ["auto", pytest.param("function_calling", marks=pytest.mark.slow),
                                  pytest.param("json_mode", marks=pytest.mark.slow)])
def test_the_extractor_end_to_end_never_raises(llamacpp: Any, tmp_path: Any, mode: str,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """Memories from the model, or the rule extractor's with a logged and counted fallback; the turn is stored.
    (``N_PREDICT`` = 48 tokens rarely holds a whole extraction object, so the fallback is the usual path here.)"""
    caplog.set_level(logging.WARNING, logger="memory_graph")
    with Memory(tmp_path, user_id="u", model="smollm2", base_url=llamacpp.base_url, structured_output=mode,
                model_deadline_s=120) as mem:
        formed = mem.observe("I live in Lisbon.", ref="m1")
        fallbacks = mem.last_model_fallbacks
        extractors = {mem.inspect(f["id"])["events"][0]["detail"]["extractor"] for f in formed}
        stored = mem.store.ledger.query("SELECT id, ref FROM observations WHERE namespace='u'")
    assert [r["ref"] for r in stored] == ["m1"]
    warnings = [r.getMessage() for r in caplog.records if "LLM extraction dropped" in r.getMessage()]
    if fallbacks:
        assert [(f["step"], f["ref"], f["method"]) for f in fallbacks] == [("extract", "m1", structured.method_for(mode))]
        assert fallbacks[0]["reason"] in {"invalid_output", "timeout", "error"}
        assert len(warnings) == 1 and stored[0]["id"] in warnings[0]
        assert extractors <= {"rules-fallback"}
    else:
        assert warnings == [] and extractors <= {"llm"}


def test_a_tiny_deadline_falls_back_cleanly(llamacpp: Any) -> None:
    """A long prompt and a 1 s deadline: the call is made, cut at the deadline and not retried. Last in this file:
    the server finishes the abandoned answer in the background."""
    prompt = [("system", "You extract facts. " * 150), ("human", "I live in Lisbon and my dog Rex has four legs.")]
    chat = model(llamacpp, budget_s=1.0)
    started = time.monotonic()
    outcome = structured.invoke(chat, Extraction, prompt)
    if outcome.ok:
        pytest.skip(f"the server answered within {time.monotonic() - started:.2f} s: the deadline path was not reached")
    assert (outcome.reason, outcome.attempts) == ("deadline", 1), outcome
    assert "not called" not in outcome.errors[0], outcome  # the request was sent, then cut
    with pytest.raises(Exception) as err:  # noqa: PT011 - the deadline's own error, checked below
        chat.invoke("hello")
    assert type(err.value).__name__ == "ModelDeadlineExceeded"
