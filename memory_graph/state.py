"""State of the memory subgraph: what a caller (or a parent graph) writes in, and what it reads out.

Input keys (all optional):
  messages         chat messages (``add_messages``); ones not yet observed are stored and extracted
  observations     explicit observations ``{text, speaker, time, ref, source, session_id}`` (the API's ``observe``)
  query            what to recall; empty -> the text of the newest human message (if any)
  as_of, task, include_history, budget_tokens   recall options (as_of ISO-8601; budget in tokens)
  feedback         ``{recall_id, success, used_ids?, answer?}`` explicit outcome of an earlier recall
  last_recall_id   the recall the previous answer used (the agent keeps it; enables inferred credit)
  resume           True: only finish observations a crash left stored but unlinked (``Memory`` does it on open)
  deadline         absolute time (epoch seconds, ``time.time()``) by which this run's model calls (extraction,
                   LLM linker) must end; None: now + ``Context.model_deadline_s`` (see ``memory_graph.deadline``)
Output keys:
  memory_context   the fenced context block (never appended to ``messages``)
  recall           the recall record (``Recall.model_dump()``), ``formed`` (memories formed this turn),
  credit           the outcome applied this turn, ``last_recall_id``
  model_fallbacks  the model calls of this run whose output was dropped for the offline path (extraction by the
                   rule extractor, a link decided by the rules alone): one dict per call, ``{step: "extract" |
                   "link", observation_id, ref, method, attempts, reason, records?}`` (``reason``: deadline,
                   timeout, invalid_output or error; see ``memory_graph.structured``); each is also logged
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AnyMessage

from memory_graph.messages import add_checked_messages
from memory_graph.threads import ThreadOwnership


@dataclass(kw_only=True)
class MemoryInput:
    """Keys the subgraph reads."""

    messages: Annotated[list[AnyMessage], add_checked_messages] = field(default_factory=list)
    observations: list[dict[str, Any]] = field(default_factory=list)
    query: str = ""
    as_of: str | None = None
    task: str | None = None
    include_history: bool = False
    budget_tokens: int | None = None
    feedback: dict[str, Any] | None = None
    last_recall_id: str | None = None
    resume: bool = False  # form the memories of this namespace's stored-but-unlinked observations (after a crash)
    deadline: float | None = None


@dataclass(kw_only=True)
class MemoryOutput:
    """Keys the subgraph writes."""

    memory_context: str = ""
    recall: dict[str, Any] | None = None
    formed: list[dict[str, Any]] = field(default_factory=list)
    credit: dict[str, Any] | None = None
    last_recall_id: str | None = None
    model_fallbacks: list[dict[str, Any]] = field(default_factory=list)


@dataclass(kw_only=True)
class MemoryState(MemoryInput, MemoryOutput, ThreadOwnership):
    """The full state: input and output keys plus the records passed from ``extract`` to ``link``."""

    extracted: list[dict[str, Any]] = field(default_factory=list)
    observed: list[str] = field(default_factory=list)  # observation ids stored by this run (not recalled by it)
    plan: list[str] = field(default_factory=list)
    turn_deadline: float | None = None  # this run's deadline (epoch seconds), set by ``route`` from ``deadline``
