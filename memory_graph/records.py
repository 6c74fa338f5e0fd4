"""Typed records that flow between the subgraph's nodes and out of the public API."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ASSISTANT_SPEAKERS = frozenset({"assistant", "ai", "bot", "system", "tool"})
USER_SPEAKERS = frozenset({"user", "human", "me"})
"""Speaker names that are roles, not people (the one place that owns them)."""


def searchable_text(text: str, source: str) -> str:
    """What the vector index embeds and BM25 reads for a memory: its text, after the speaker's name when the
    speaker is a named person ("Caroline: I went to the support group"). A note keeps its speaker's words ("I
    ..."), so without the name a question that names the speaker ("When did Caroline go ...?") would not find it
    (measured on LoCoMo: evidence recall 0.389 with the old third-person rewrite, 0.304 with the words alone).
    The user's and the assistant's roles add nothing."""
    name = source.strip()
    if not name or name.lower() in USER_SPEAKERS or name.lower() in ASSISTANT_SPEAKERS:
        return text
    return f"{name}: {text}"


def is_assistant(speaker: str) -> bool:
    """True for the assistant's, the system's and tools' turns (never facts about the user)."""
    return speaker.strip().lower() in ASSISTANT_SPEAKERS


LIVE_STATUSES = ("current", "contested")
FORGET_REQUEST = "forget-request"
"""The source of a ``retracts`` link written for a user's "forget what I said about X" (``linking``): the request
is a message, not a memory, so the link's ``src_id`` names no memory. Links, exports and imports carry it as
it is (``transfer`` accepts it as a link's source); readers show it as "forget request"."""
"""Statuses of a memory that is held now (the one place that owns them); the others end it."""

Kind = Literal["state", "preference", "event", "note"]
Status = Literal["current", "superseded", "contested", "retracted"]
Retention = Literal["active", "low_value", "compressed", "archived"]


class Observation(BaseModel):
    """A message as it arrived (never edited). ``time`` is ISO-8601 UTC."""

    id: str
    text: str
    speaker: str
    source: str
    time: str
    session_id: str | None = None
    ref: str | None = None


class MemoryRecord(BaseModel):
    """A focused claim extracted from one observation, before linking.

    ``polarity`` is -1 for a retraction ("I no longer eat fish"), ``multi`` marks a multi-valued attribute
    (pets, likes), ``update_cue`` marks update wording ("moved to", "switched to", "now"), ``forget`` marks a
    user's request to forget matching memories, ``ends`` an ending event of the speaker's own thing ("I sold the
    Civic", "Rex died": a retraction whose ``value`` names the thing that ended).
    """

    text: str
    kind: Kind = "note"
    subject: str
    attribute: str
    value: str
    scope: str = ""
    source: str
    valid_from: str
    polarity: int = 1
    multi: bool = False
    update_cue: bool = False
    forget: bool = False
    ends: bool = False
    confidence: float = 0.7
    frame: str = ""
    observation_id: str
    ref: str | None = None
    extractor: str = "rules"


class RecallItem(BaseModel):
    """One chosen memory of a recall (best first). Dates ISO-8601 UTC; ``tokens`` in the configured encoding."""

    id: str
    text: str
    kind: str
    subject: str
    attribute: str
    value: str
    scope: str
    status: Status
    retention: str = "active"
    valid_from: str
    valid_to: str | None = None
    superseded_by: str | None = None
    tokens: int
    score: float
    similarity: float
    provenance: list[dict[str, str]] = Field(default_factory=list)
    source: str


class Recall(BaseModel):
    """The result of one retrieval: ``id`` (for feedback), the fenced ``context`` block and the ``items``."""

    id: str
    query: str
    as_of: str | None = None
    task: str | None = None
    budget_tokens: int
    tokens_used: int
    context: str
    items: list[RecallItem] = Field(default_factory=list)
    candidates: list[dict[str, Any]] = Field(default_factory=list)
