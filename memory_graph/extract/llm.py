"""The LLM extractor: a chat model's structured output (``memory_graph.structured``) into pydantic models.

The request shape is ``Context.structured_output``; the answer is parsed tolerantly (reasoning blocks, code
fences, text around the JSON). On any failure (timeout, refusal, malformed output) it retries once (after an
unusable answer with the reason), then falls back to the rule extractor and logs what was dropped; the
observation is stored either way. When the turn's model deadline has passed (``ModelDeadlineExceeded``, see
``memory_graph.deadline``) it does not retry: the rule extractor answers. Relative dates in ``when`` resolve
against the observation's time with ``dateparser``. The assistant's own turns are never sent for extraction.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from memory_graph import structured
from memory_graph.extract import rules
from memory_graph.records import MemoryRecord, Observation
from memory_graph.timeutil import parse_time, resolve_relative, to_iso

log = logging.getLogger(__name__)

SYSTEM = (
    "You extract durable memories from one chat message. Return only facts the speaker states as true "
    "(not questions, not hypotheticals or role-play, not the assistant's words). subject is 'self' for the "
    "speaker, otherwise the person's name (e.g. 'Leo' for 'my brother Leo'). attribute is a short key "
    "(location, employer, manager, diet, pets, likes, 'database for billing'). value is the value only. "
    "scope is an environment, project, team or region the fact is limited to (e.g. staging), else empty. "
    "negated=true when the message says the fact stopped being true. multi_valued=true for attributes that "
    "hold several values at once (pets, likes, languages). when is the date phrase as said, if any."
)


MAX_FACTS = 50
"""Facts one message may yield; an answer with more is invalid output (retried once, then the rules). Bounds
here are also in the JSON schema the model gets: a model once answered 3,000 facts for two lines, and one fact of
1.2M characters (breaker run)."""
MAX_FACT_CHARS = 2_000
MAX_FIELD_CHARS = 500


class ExtractedFact(BaseModel):
    """One fact as the LLM returns it."""

    kind: Literal["state", "preference", "event", "note"] = "state"
    subject: str = Field(description="'self' for the speaker, else the person's name", max_length=MAX_FIELD_CHARS)
    attribute: str = Field(max_length=MAX_FIELD_CHARS)
    value: str = Field(max_length=MAX_FIELD_CHARS)
    scope: str = Field("", max_length=MAX_FIELD_CHARS)
    negated: bool = False
    multi_valued: bool = False
    update: bool = Field(False, description="the message says this changed")
    when: str | None = Field(None, max_length=MAX_FIELD_CHARS)
    text: str = Field(description="the fact as one third-person sentence", max_length=MAX_FACT_CHARS)


class Extraction(BaseModel):
    """All facts of one message."""

    facts: list[ExtractedFact] = Field(default_factory=list, max_length=MAX_FACTS)


def extract(model: BaseChatModel, observation: Observation, retries: int = 1, *, mode: str = "auto",
            fallbacks: list[dict[str, Any]] | None = None) -> list[MemoryRecord]:
    """Records of ``observation`` from the chat model, or from the rule extractor (``extractor="rules-fallback"``)
    if the model fails ``retries + 1`` times or the model deadline passes (``ModelDeadlineExceeded``).

    Args:
        mode: ``Context.structured_output`` (the request shape, see ``memory_graph.structured``).
        fallbacks: when given, a fallback appends ``{"step": "extract", "observation_id", "ref", "method",
            "attempts", "reason", "records"}`` to it (``reason``: ``structured.Reason``; ``records``: how many
            the rule extractor formed instead). It is also logged as a warning.

    Raises:
        InvalidInputError: an unknown ``mode``.
    """
    if rules.is_assistant(observation.speaker):
        return []
    prompt = [("system", SYSTEM), ("human", f"Speaker: {observation.speaker}\nTime: {observation.time}\nMessage: {observation.text}")]
    outcome = structured.invoke(model, Extraction, prompt, mode=mode, retries=retries)
    if outcome.value is not None:
        return [_to_record(f, observation) for f in outcome.value.facts if f.value.strip() and f.attribute.strip()]
    records = [r.model_copy(update={"extractor": "rules-fallback"}) for r in rules.extract(observation)]
    log.warning("LLM extraction dropped for observation %s (ref %s): %s after %d attempt(s) [%s]; the rule extractor "
                "formed %d record(s) instead", observation.id, observation.ref, outcome.reason, outcome.attempts,
                " | ".join(outcome.errors), len(records))
    if fallbacks is not None:
        fallbacks.append({"step": "extract", "observation_id": observation.id, "ref": observation.ref,
                          "method": outcome.method, "attempts": outcome.attempts, "reason": outcome.reason,
                          "records": len(records)})
    return records


def _to_record(fact: ExtractedFact, obs: Observation) -> MemoryRecord:
    base = parse_time(obs.time)
    assert base is not None
    valid_from = obs.time
    if fact.when:
        when, _ = resolve_relative(fact.when, base)
        if when is None:
            try:
                when = parse_time(fact.when)
            except ValueError:
                when = None
        if when is not None and when <= base:
            valid_from = to_iso(when) or obs.time
    subject = rules.speaker_subject(obs.speaker) if fact.subject.strip().lower() in {"self", "speaker", "i", "me", "user"} else fact.subject.strip()
    attribute = fact.attribute.strip().lower().replace("_", " ")
    return MemoryRecord(
        text=fact.text.strip() or f"{subject} {attribute}: {fact.value}",
        kind=fact.kind, subject=subject, attribute=attribute, value=fact.value.strip(), scope=fact.scope.strip().lower(),
        source=obs.speaker, valid_from=valid_from, polarity=-1 if fact.negated else 1,
        multi=fact.multi_valued or attribute in {"pets", "likes", "languages", "hobbies"},
        update_cue=fact.update, confidence=0.8, frame=rules.mask_frame(fact.text, fact.value),
        observation_id=obs.id, ref=obs.ref, extractor="llm",
    )
