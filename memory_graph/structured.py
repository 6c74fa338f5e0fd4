"""Structured output from a chat model, in one place: the extractor and the LLM linker both call ``invoke``.

A local model often answers around the JSON it was asked for: a ``<think>`` block first (DeepSeek-R1, Qwen3), a
```json fence, a sentence before or after, or a server that ignored ``response_format``. Peer projects that hand
the raw answer to a strict parser lose those facts silently (graphiti #912, #627, #868; mem0 #3391, #4540,
#4607). Here:

1. **Request shape** (``Context.structured_output``, see ``method_for``):
   ``json_schema`` sends ``response_format={"type": "json_schema", "json_schema": {name, schema, strict}}``;
   ``function_calling`` binds the schema as the one tool, with ``tool_choice`` naming it (OpenAI) or
   ``"required"`` (other servers: llama.cpp accepts only a string there); ``json_mode`` sends
   ``response_format={"type": "json_object"}`` and puts the JSON schema in the system message. ``auto`` (the
   default) is ``json_schema``: OpenAI enforces it (``strict``), and llama.cpp, vLLM, Ollama >= 0.5 and LM
   Studio turn it into a grammar, while tools need server flags and a tool-aware chat template (vLLM
   ``--enable-auto-tool-choice``, llama.cpp ``--jinja``) and LM Studio refuses ``json_object``. The request is
   built by ``langchain-openai``'s ``with_structured_output(..., include_raw=True)``; the answer is parsed here.
2. **Parsing** (pure functions): ``strip_think`` drops reasoning blocks (also a block whose opening tag the
   chat template wrote, and a block never closed), ``fenced_blocks`` finds fenced code, ``json_objects``
   finds top-level JSON objects, ``parse_output`` validates the first that the pydantic model accepts
   (also unwrapping ``{"name": ..., "arguments": {...}}``, a tool call written as text), ``parse_message``
   reads a tool call's arguments first, then the text.
3. **One retry** with the reason in a follow-up message (the model's answer, then "Your answer could not be
   used: <reason> ..."); a transport error retries the same request. No retry once the turn's model
   deadline has passed (``memory_graph.deadline``).
4. **The outcome**, never an exception for a model failure: ``Outcome.value`` (None when every attempt
   failed), the attempts, each failure's reason and its kind (``reason``). The caller then takes its offline
   path and logs what it dropped (``memory_graph.extract.llm``, ``memory_graph.llm_linker``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar
from urllib.parse import urlparse

from pydantic import BaseModel, ValidationError

from memory_graph.config import STRUCTURED_OUTPUTS, StructuredOutput
from memory_graph.deadline import ModelDeadlineExceeded, call_timeout, is_timeout
from memory_graph.errors import InvalidInputError, ModelOutputError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

log = logging.getLogger(__name__)

Method = Literal["json_schema", "function_calling", "json_mode"]
Reason = Literal["deadline", "timeout", "invalid_output", "error"]
"""Why an attempt failed: the turn's model deadline passed, the request timed out, the answer held no valid
JSON object (or was cut off or refused), or any other error (HTTP status, connection)."""
T = TypeVar("T", bound=BaseModel)

MAX_SCAN = 64
"""Most ``{`` positions ``json_objects`` tries to decode from (bounds the work on a pathological answer)."""
MAX_ECHO_CHARS = 4000
"""Most characters of a failed answer sent back to the model in the retry."""
MAX_REASON_CHARS = 500
"""Longest reason kept per failed attempt (logs, the retry message)."""

_THINK_TAGS = "think|thinking|reasoning"
_THINK_BLOCK = re.compile(rf"<({_THINK_TAGS})>.*?</\1\s*>", re.S | re.I)
_THINK_CLOSE = re.compile(rf"</(?:{_THINK_TAGS})\s*>", re.I)
_THINK_OPEN = re.compile(rf"<(?:{_THINK_TAGS})>", re.I)
_FENCE = re.compile(r"```[ \t]*(?:json5?|jsonc|JSON)?[ \t]*\r?\n?(.*?)```", re.S)
_DECODER = json.JSONDecoder()
RETRY = ("Your answer could not be used: {reason}. {ask} Answer with only that, no other text, no code fence and "
         "no reasoning.")
FORMAT = "Answer with only one JSON object, no other text, that matches this JSON schema:\n{schema}"


# ---- configuration ------------------------------------------------------------------------------------


def check_mode(value: object) -> StructuredOutput:
    """``value`` as a ``Context.structured_output`` mode.

    Raises:
        InvalidInputError: not one of ``auto``, ``json_schema``, ``function_calling``, ``json_mode``.
    """
    if not isinstance(value, str) or value not in STRUCTURED_OUTPUTS:
        raise InvalidInputError(f"structured_output must be one of {', '.join(STRUCTURED_OUTPUTS)}, got {value!r}")
    return value  # type: ignore[return-value]


def is_openai(base_url: str | None) -> bool:
    """True for OpenAI's own API: no base URL, or one whose host is ``api.openai.com``."""
    if not base_url:
        return True
    return (urlparse(base_url).hostname or "").lower() == "api.openai.com"


def method_for(mode: object, base_url: str | None = None) -> Method:
    """The request shape of ``mode`` for a server at ``base_url``: ``auto`` is ``json_schema`` everywhere (see
    the module docstring and docs/ARCHITECTURE.md for why), the others are themselves.

    Raises:
        InvalidInputError: an unknown mode.
    """
    checked = check_mode(mode)
    return "json_schema" if checked == "auto" else checked


def base_url_of(model: Any) -> str:
    """The base URL a ``ChatOpenAI`` talks to (empty: OpenAI, or a model of another kind)."""
    return str(getattr(model, "openai_api_base", None) or "")


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent for ``schema``: the strict form of the ``openai`` SDK (every field required,
    ``additionalProperties: false``), which OpenAI requires with ``strict`` and grammar engines accept."""
    import openai

    return dict(openai.pydantic_function_tool(schema)["function"]["parameters"])


# ---- parsing (pure) ---------------------------------------------------------------------------------


def strip_think(text: str) -> str:
    """``text`` without reasoning: every ``<think>...</think>`` block (also ``<thinking>``, ``<reasoning>``;
    any case), everything up to a closing tag whose opening tag the chat template wrote (``...</think>``), and
    everything from an opening tag that is never closed (the model was cut off while thinking)."""
    out = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(out))
    if closes:
        out = out[closes[-1].end():]
    opened = _THINK_OPEN.search(out)
    if opened:
        out = out[: opened.start()]
    return out.strip()


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the fenced code blocks of ``text`` (```json ... ```, ``` ... ```), in order."""
    return [m.group(1) for m in _FENCE.finditer(text)]


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The top-level JSON objects in ``text``, in order (tries at most ``MAX_SCAN`` ``{`` positions)."""
    pos, tries = 0, 0
    while tries < MAX_SCAN:
        start = text.find("{", pos)
        if start < 0:
            return
        tries += 1
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        if isinstance(value, dict):
            yield value
        pos = end


def describe(exc: ValidationError) -> str:
    """A pydantic error as ``field.path: message`` items (never the input's values)."""
    items = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors(include_url=False)]
    more = f" (and {len(items) - 5} more)" if len(items) > 5 else ""
    return "; ".join(items[:5]) + more


def _unwrapped(obj: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The arguments of a tool call written as text (``{"name": name, "arguments": {...}}``), else None."""
    if obj.get("name") == name:
        for key in ("arguments", "parameters"):
            inner = obj.get(key)
            if isinstance(inner, str):
                inner = next(json_objects(inner), None)
            if isinstance(inner, dict):
                return inner
    return None


def validate(doc: dict[str, Any], schema: type[T]) -> T:
    """``doc`` as ``schema``, refusing top-level fields the schema does not have: every field of these schemas
    has a default, so without that check any stray object (``{"subject": "self"}`` from a broken answer) would
    pass as "no facts" and drop them silently.

    Raises:
        ModelOutputError: unknown top-level fields, or pydantic's errors (``describe``).
    """
    known = set(schema.model_fields) | {f.alias for f in schema.model_fields.values() if f.alias}
    unknown = [str(k)[:40] for k in doc if k not in known]
    if unknown:
        raise ModelOutputError(f"unexpected field(s) {', '.join(sorted(unknown)[:3])}; expected {', '.join(sorted(known))}")
    try:
        return schema.model_validate(doc)
    except ValidationError as exc:
        raise ModelOutputError(describe(exc)) from None


def parse_output(text: str, schema: type[T]) -> T:
    """The first JSON object in ``text`` that ``schema`` accepts (``validate``), after ``strip_think``: the
    fenced blocks' objects first, then every object in the text; a tool call written as text
    (``{"name": <schema name>, "arguments": {...}}``) is unwrapped.

    Raises:
        ModelOutputError: no JSON object at all, or none that validates (the first one's errors are named).
    """
    cleaned = strip_think(text)
    candidates = [obj for block in fenced_blocks(cleaned) for obj in json_objects(block)]
    candidates += list(json_objects(cleaned))
    first_error: str | None = None
    for obj in candidates:
        try:
            inner = _unwrapped(obj, schema.__name__)
            return validate(obj if inner is None else inner, schema)
        except ModelOutputError as exc:
            first_error = first_error or str(exc)
    if first_error is not None:
        raise ModelOutputError(f"the JSON object does not match the schema ({first_error})")
    if not cleaned and text.strip():
        raise ModelOutputError("the answer holds only reasoning (a <think> block), no JSON object")
    raise ModelOutputError(f"the answer holds no JSON object ({len(cleaned)} characters of text)")


def parse_message(message: BaseMessage, schema: type[T]) -> T:
    """``schema`` from a chat model's answer: a tool call's arguments first (also ones that are not valid JSON,
    through ``parse_output``), then the message text.

    Raises:
        ModelOutputError: nothing in the message validates.
    """
    errors: list[str] = []
    for call in getattr(message, "tool_calls", None) or []:
        try:
            return validate(call.get("args") or {}, schema)
        except ModelOutputError as exc:
            errors.append(f"the tool call's arguments do not match the schema ({exc})")
    for call in getattr(message, "invalid_tool_calls", None) or []:
        try:
            return parse_output(str(call.get("args") or ""), schema)
        except ModelOutputError as exc:
            errors.append(f"the tool call's arguments are not valid JSON ({exc})")
    text = message.text if isinstance(message.text, str) else str(message.content)
    try:
        return parse_output(text, schema)
    except ModelOutputError:
        if errors and not text.strip():
            raise ModelOutputError(errors[0]) from None
        raise


def answer_text(message: BaseMessage) -> str:
    """What the model answered, as text to show it in a retry: its tool calls' arguments, else its text."""
    calls = [json.dumps(c.get("args")) for c in getattr(message, "tool_calls", None) or []]
    calls += [str(c.get("args") or "") for c in getattr(message, "invalid_tool_calls", None) or []]
    text = "\n".join(calls) if calls else message.text
    return text[:MAX_ECHO_CHARS]


# ---- the call ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What ``invoke`` got.

    Attributes:
        value: the validated answer; None when every attempt failed.
        method: the request shape used.
        attempts: attempts started (one refused for lack of time, ``ModelDeadlineExceeded``, counts; 0 when
            the model cannot build the request at all).
        errors: why each failed attempt failed (one line each, never the answer's text).
        reason: the kind of the last failure (``Reason``), None on success.
    """

    value: T | None
    method: Method
    attempts: int = 0
    errors: tuple[str, ...] = field(default_factory=tuple)
    reason: Reason | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


def _kind(exc: BaseException) -> Reason:
    if isinstance(exc, ModelDeadlineExceeded):
        return "deadline"
    if is_timeout(exc):
        return "timeout"
    if isinstance(exc, ModelOutputError) or type(exc).__name__ in {
            "LengthFinishReasonError", "ContentFilterFinishReasonError", "OpenAIRefusalError"}:
        return "invalid_output"
    return "error"


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if type(exc).__name__ == "LengthFinishReasonError":
        text = "the answer was cut off at the length limit before the JSON object ended"
    return f"{type(exc).__name__}: {text}"[:MAX_REASON_CHARS]


def _out_of_time(model: Any) -> bool:
    """True when ``model`` has a turn deadline (``chat_model.make_chat_model``) with too little time left for
    another call."""
    deadline = getattr(model, "deadline", None)
    return isinstance(deadline, float | int) and call_timeout(float(deadline)) is None


def _request(model: BaseChatModel, schema: type[BaseModel], method: Method, openai_api: bool) -> Any:
    """The structured-output runnable of ``method`` (``include_raw``: parsing is ours, from the raw answer)."""
    if method == "json_schema":
        # a dict, not the pydantic class: with the class the openai SDK parses the answer itself and raises
        # before the raw text reaches us
        spec = {"name": schema.__name__, "description": (schema.__doc__ or "").strip()[:500],
                "schema": json_schema(schema), "strict": openai_api}
        return model.with_structured_output(spec, method="json_schema", include_raw=True)
    if method == "function_calling":
        extra = {} if openai_api else {"tool_choice": "required"}
        return model.with_structured_output(schema, method="function_calling", include_raw=True, **extra)
    return model.with_structured_output(schema, method="json_mode", include_raw=True)


def _with_format(messages: list[BaseMessage], schema: type[BaseModel]) -> list[BaseMessage]:
    """``messages`` with the JSON schema appended to the system message (``json_mode`` sends no schema)."""
    from langchain_core.messages import SystemMessage

    instruction = FORMAT.format(schema=json.dumps(json_schema(schema), separators=(",", ":")))
    if messages and isinstance(messages[0], SystemMessage) and isinstance(messages[0].content, str):
        return [SystemMessage(f"{messages[0].content}\n\n{instruction}"), *messages[1:]]
    return [SystemMessage(instruction), *messages]


def _ask(method: Method, schema: type[BaseModel]) -> str:
    if method == "function_calling":
        return f"Call the function {schema.__name__} again, with arguments that match its schema."
    return "Give one JSON object that matches the schema."


def invoke(model: BaseChatModel, schema: type[T], messages: Sequence[Any], *, mode: object = "auto",
           retries: int = 1) -> Outcome[T]:
    """Ask ``model`` for ``schema`` with the request shape of ``mode`` (``method_for``; the base URL is the
    model's), parse the answer (``parse_message``) and retry up to ``retries`` times: after an unusable answer
    with that answer and the reason in follow-up messages, after another error with the same request. The
    turn's model deadline (``ModelDeadlineExceeded``) ends the attempts at once.

    Args:
        messages: the prompt, in any form ``langchain_core.messages.convert_to_messages`` reads.
        mode: a ``Context.structured_output`` value.
        retries: further attempts after the first (0 or more).

    Returns:
        ``Outcome``: the value, or None with the reasons; a model failure is never raised.

    Raises:
        InvalidInputError: an unknown ``mode`` or a negative ``retries``.
    """
    from langchain_core.messages import AIMessage, HumanMessage, convert_to_messages

    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise InvalidInputError(f"retries must be a whole number >= 0, got {retries!r}")
    base_url = base_url_of(model)
    method = method_for(mode, base_url)
    prompt = list(convert_to_messages(list(messages)))
    if method == "json_mode":
        prompt = _with_format(prompt, schema)
    try:
        runnable = _request(model, schema, method, is_openai(base_url))
    except Exception as exc:  # noqa: BLE001 - e.g. a chat model class without this method: the offline path
        return Outcome(None, method, 0, (_line(exc),), "error")
    conversation = prompt
    errors: list[str] = []
    reason: Reason | None = None
    attempts = 0
    for _ in range(retries + 1):
        attempts += 1
        try:
            raw = runnable.invoke(conversation)["raw"]
        except ModelDeadlineExceeded as exc:
            errors.append(_line(exc))
            return Outcome(None, method, attempts, tuple(errors), "deadline")
        except Exception as exc:  # noqa: BLE001 - any client or server failure is an outcome, not a crash
            errors.append(_line(exc))
            reason = _kind(exc)
            if reason == "timeout" and _out_of_time(model):  # the client timed out at the turn's deadline
                return Outcome(None, method, attempts, tuple(errors), "deadline")
            # cut off or refused before we saw the text: say so and ask again; other errors: the same request
            conversation = ([*prompt, HumanMessage(RETRY.format(reason=_line(exc), ask=_ask(method, schema)))]
                            if reason == "invalid_output" else prompt)
            continue
        try:
            return Outcome(parse_message(raw, schema), method, attempts, tuple(errors), None)
        except ModelOutputError as exc:
            errors.append(_line(exc))
            reason = "invalid_output"
            conversation = [*prompt, AIMessage(answer_text(raw)),
                            HumanMessage(RETRY.format(reason=exc, ask=_ask(method, schema)))]
    return Outcome(None, method, attempts, tuple(errors), reason)
