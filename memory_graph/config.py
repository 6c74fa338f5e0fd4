"""Configuration of the memory subgraph: the `Context` dataclass and its environment fallbacks.

LangGraph passes a `Context` instance per run (``graph.invoke(..., context=Context(...))``) and nodes
read it through ``Runtime[Context]``. Every field falls back to an environment variable so that
`langgraph dev` / Studio runs without any code:

==========================  ===============================  =====================
field                       environment variable             default
==========================  ===============================  =====================
store_path                  MEMORY_GRAPH_DATABASE_URL, then  ./.memory-graph
                            MEMORY_GRAPH_STORE
chroma_url                  MEMORY_GRAPH_CHROMA_URL          "" (needed with a PostgreSQL store)
user_id                     MEMORY_GRAPH_USER                default
budget_tokens               MEMORY_GRAPH_BUDGET              400 (tokens)
max_items                   MEMORY_GRAPH_MAX_ITEMS           12
model                       MEMORY_GRAPH_MODEL               "" (no LLM: offline)
base_url                    OPENAI_BASE_URL                  "" (OpenAI)
embedding_model             MEMORY_GRAPH_EMBEDDING_MODEL     "" (packaged MiniLM)
encoding                    MEMORY_GRAPH_ENCODING            o200k_base
trust                       MEMORY_GRAPH_TRUST               namespace
linking                     MEMORY_GRAPH_LINKING             1 (on)
linker                      MEMORY_GRAPH_LINKER              model (or rules)
llm_linker                  MEMORY_GRAPH_LLM_LINKER          1 (on; used only with a model)
learning                    MEMORY_GRAPH_LEARNING            1 (on)
selection                   MEMORY_GRAPH_SELECTION           knapsack (or topk)
usefulness                  MEMORY_GRAPH_USEFULNESS          heuristic (or logistic)
model_deadline_s            MEMORY_GRAPH_MODEL_DEADLINE      30 (seconds)
raw_messages                MEMORY_GRAPH_RAW_MESSAGES        0 (off)
structured_output           MEMORY_GRAPH_STRUCTURED_OUTPUT   auto (json_schema)
==========================  ===============================  =====================
"""

from __future__ import annotations

import numbers
import os
import unicodedata
from dataclasses import dataclass, field, fields
from typing import Literal

from memory_graph.deadline import DEFAULT_DEADLINE_S, check_seconds
from memory_graph.errors import InvalidInputError

Trust = Literal["namespace", "source"]
Selection = Literal["knapsack", "topk"]
UsefulnessModel = Literal["heuristic", "logistic"]
Linker = Literal["model", "rules"]
StructuredOutput = Literal["auto", "json_schema", "function_calling", "json_mode"]
STRUCTURED_OUTPUTS: tuple[str, ...] = ("auto", "json_schema", "function_calling", "json_mode")


def _env(name: str, default: str) -> str:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def _env_int(name: str, default: int) -> int:
    raw = _env(name, str(default))
    try:
        return int(raw)
    except ValueError:
        raise InvalidInputError(f"{name} must be a whole number, got {raw!r}") from None


def _env_float(name: str, default: float) -> float:
    raw = _env(name, str(default))
    try:
        return float(raw)
    except ValueError:
        raise InvalidInputError(f"{name} must be a number of seconds, got {raw!r}") from None


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    return value.strip().lower() not in {"0", "false", "no", "off"}


def check_unicode(what: str, value: str) -> None:
    """Raise ``InvalidInputError`` when ``value`` cannot be stored as UTF-8 (a lone surrogate); ``what`` names
    it in the message. The one check of stored text's encoding (the context here, observations and the API's
    arguments elsewhere)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} is not valid Unicode ({exc.reason} at position {exc.start})") from None


MAX_USER_CHARS = 256
"""Longest ``user_id`` (characters): a namespace is an id, not a document."""
MAX_TASK_CHARS = 200
"""Longest task class label (``recall(task=...)``), kept in each shown memory's statistics."""


def has_control(value: str) -> bool:
    """Whether ``value`` holds a control character (Unicode category Cc: a newline, a tab, a NUL)."""
    return any(unicodedata.category(c) == "Cc" for c in value)


def check_task(value: object) -> str:
    """A task class label: a non-empty string of at most ``MAX_TASK_CHARS`` characters with no control character
    (a newline, a NUL), storable as UTF-8; else ``InvalidInputError``. Never cut: two long labels cut alike would
    merge (seventeenth breaker run: one was cut to 200 characters silently)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError("task must be a non-empty string")
    check_unicode("task", value)
    if has_control(value):
        raise InvalidInputError("task must not hold control characters (a newline, a NUL)")
    if len(value) > MAX_TASK_CHARS:
        raise InvalidInputError(f"task is a short label of at most {MAX_TASK_CHARS} characters, got {len(value)}")
    return value
MAX_ITEMS = 100
"""Most memories one recall may return (DESIGN: the knapsack runs over a pool of at most 100 items)."""


@dataclass(kw_only=True)
class Context:
    """Run-time configuration of the memory subgraph (LangGraph ``context_schema``).

    Attributes:
        store_path: folder holding ``ledger.sqlite3`` and the ``chroma/`` index (embedded backend), or a
            PostgreSQL URL ``postgresql://user:password@host:port/db`` (server backend, with ``chroma_url``).
        chroma_url: the Chroma server of a PostgreSQL store (``http://host:8000``); unused for a folder.
        user_id: the namespace every read and write is confined to.
        budget_tokens: token budget of the recalled context block (o200k_base tokens by default).
        max_items: most memories one recall may return.
        model: chat model name; empty means no LLM (rule extractor, offline responder).
        base_url: OpenAI-compatible server URL (Ollama, vLLM); empty means api.openai.com.
        embedding_model: sentence-transformers name or path; empty means the packaged all-MiniLM-L6-v2.
        encoding: tokenizer vocabulary for token counts (``o200k_base`` or ``cl100k_base``).
        trust: ``namespace`` (anyone in the namespace may update a fact) or ``source``
            (a source updates only its own claims; conflicting sources contest).
        linking: link new memories to what they supersede (off only for ablations).
        linker: ``model`` (the default: the update model trained here, ``memory_graph.relations``, decides what a
            new statement outdates where the rules link nothing) or ``rules`` (the rules alone: structured slots,
            retraction wording, forget requests; an ablation). Any other value: ``InvalidInputError``.
        llm_linker: when a ``model`` is configured, ask it which live memories a new one replaces where the
            rules find none (``memory_graph.llm_linker``; the rules still decide). One model call per record.
        learning: learn usefulness from outcomes (off only for ablations).
        selection: ``knapsack`` (exact 0/1 knapsack over expected usefulness) or ``topk``.
        usefulness: the knapsack's value: ``heuristic`` (documented weights; the default) or ``logistic``
            (fitted on training traces: better on the outcome worlds, but it leaves most of a large budget
            unused on long conversations); see ``memory_graph.usefulness`` and docs/ARCHITECTURE.md.
        model_deadline_s: total wall-clock seconds all model calls of one turn may take together (an agent
            turn: planner rounds, extraction, LLM linker, responder; or one ``Memory.observe``/``observe_many``).
            Each call's client timeout is at most the time left, without client retries; once it has passed,
            calls are skipped for the offline path (``memory_graph.deadline``). Positive and finite, else
            ``InvalidInputError``.
        raw_messages: also offer a message whose memories are all still held as a raw line beside them
            (deduplicated with them by provenance). Off by default: on the unseen conversations it helps (current
            value first +2 to +10 pp on sets 1-4) but it costs the outcome suite 5 pp (0.761 -> 0.708), because a raw
            line is not a memory that outcomes credit. See docs/ARCHITECTURE.md.
        structured_output: how the extractor and the LLM linker ask the model for structured output
            (``memory_graph.structured``): ``json_schema`` (``response_format`` with the JSON schema; enforced by
            OpenAI, and by a grammar on llama.cpp, vLLM, Ollama >= 0.5 and LM Studio), ``function_calling`` (one
            tool the model must call), ``json_mode`` (``response_format`` ``json_object`` and the schema in the
            system message), or ``auto`` (the default: ``json_schema``, strict for api.openai.com). Any other
            value: ``InvalidInputError``. See README "Local model servers" and docs/ARCHITECTURE.md.
    """

    store_path: str = field(default_factory=lambda: _env("MEMORY_GRAPH_DATABASE_URL", _env("MEMORY_GRAPH_STORE", "./.memory-graph")))
    chroma_url: str = field(default_factory=lambda: _env("MEMORY_GRAPH_CHROMA_URL", ""))
    user_id: str = field(default_factory=lambda: _env("MEMORY_GRAPH_USER", "default"))
    budget_tokens: int = field(default_factory=lambda: _env_int("MEMORY_GRAPH_BUDGET", 400))
    max_items: int = field(default_factory=lambda: _env_int("MEMORY_GRAPH_MAX_ITEMS", 12))
    model: str = field(default_factory=lambda: _env("MEMORY_GRAPH_MODEL", ""))
    base_url: str = field(default_factory=lambda: _env("OPENAI_BASE_URL", ""))
    embedding_model: str = field(default_factory=lambda: _env("MEMORY_GRAPH_EMBEDDING_MODEL", ""))
    encoding: str = field(default_factory=lambda: _env("MEMORY_GRAPH_ENCODING", "o200k_base"))
    trust: Trust = field(default_factory=lambda: _env("MEMORY_GRAPH_TRUST", "namespace"))  # type: ignore[arg-type,return-value]
    linking: bool = field(default_factory=lambda: _env_bool("MEMORY_GRAPH_LINKING", True))
    linker: Linker = field(default_factory=lambda: _env("MEMORY_GRAPH_LINKER", "model"))  # type: ignore[arg-type,return-value]
    llm_linker: bool = field(default_factory=lambda: _env_bool("MEMORY_GRAPH_LLM_LINKER", True))
    learning: bool = field(default_factory=lambda: _env_bool("MEMORY_GRAPH_LEARNING", True))
    selection: Selection = field(default_factory=lambda: _env("MEMORY_GRAPH_SELECTION", "knapsack"))  # type: ignore[arg-type,return-value]
    usefulness: UsefulnessModel = field(default_factory=lambda: _env("MEMORY_GRAPH_USEFULNESS", "heuristic"))  # type: ignore[arg-type,return-value]
    model_deadline_s: float = field(default_factory=lambda: _env_float("MEMORY_GRAPH_MODEL_DEADLINE", DEFAULT_DEADLINE_S))
    raw_messages: bool = field(default_factory=lambda: _env_bool("MEMORY_GRAPH_RAW_MESSAGES", False))
    structured_output: StructuredOutput = field(default_factory=lambda: _env("MEMORY_GRAPH_STRUCTURED_OUTPUT", "auto"))  # type: ignore[arg-type,return-value]

    def __post_init__(self) -> None:
        if not str(self.user_id).strip():
            raise InvalidInputError("user_id must be a non-empty string")
        for name in ("budget_tokens", "max_items"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise InvalidInputError(f"{name} must be a whole number, got {value!r}")
            setattr(self, name, int(value))
        for name in ("linking", "llm_linker", "learning", "raw_messages"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInputError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.budget_tokens <= 0:
            raise InvalidInputError(f"budget_tokens must be positive, got {self.budget_tokens}")
        if self.max_items <= 0:
            raise InvalidInputError(f"max_items must be positive, got {self.max_items}")
        for name in ("store_path", "chroma_url", "user_id", "model", "base_url", "embedding_model", "encoding"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
            if "\x00" in value:
                raise InvalidInputError(f"{name} is not valid text (NUL)")
            check_unicode(name, value)
        if has_control(self.user_id):  # "a\nb" named a namespace no listing shows plainly (seventeenth breaker run)
            raise InvalidInputError("user_id must not hold control characters (a newline, a tab, a NUL)")
        if len(self.user_id) > MAX_USER_CHARS:
            raise InvalidInputError(f"user_id must be at most {MAX_USER_CHARS} characters, got {len(self.user_id)}")
        if self.max_items > MAX_ITEMS:
            raise InvalidInputError(f"max_items must be at most {MAX_ITEMS} (the knapsack's pool), got {self.max_items}")
        if self.encoding not in ("o200k_base", "cl100k_base"):
            raise InvalidInputError(f"encoding must be 'o200k_base' or 'cl100k_base', got {self.encoding!r}")
        if self.trust not in ("namespace", "source"):
            raise InvalidInputError(f"trust must be 'namespace' or 'source', got {self.trust!r}")
        if self.linker not in ("model", "rules"):
            raise InvalidInputError(f"linker must be 'model' or 'rules', got {self.linker!r}")
        if self.selection not in ("knapsack", "topk"):
            raise InvalidInputError(f"selection must be 'knapsack' or 'topk', got {self.selection!r}")
        if self.usefulness not in ("heuristic", "logistic"):
            raise InvalidInputError(f"usefulness must be 'heuristic' or 'logistic', got {self.usefulness!r}")
        if self.structured_output not in STRUCTURED_OUTPUTS:
            raise InvalidInputError(f"structured_output must be one of {', '.join(STRUCTURED_OUTPUTS)}, got {self.structured_output!r}")
        self.model_deadline_s = check_seconds(self.model_deadline_s)  # InvalidInputError

    def replace(self, **changes: object) -> Context:
        """Return a copy with ``changes`` applied (unknown names raise ``TypeError``)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"unknown Context fields: {sorted(unknown)}")
        values.update(changes)
        return Context(**values)  # type: ignore[arg-type,return-value]


def as_context(value: object) -> Context:
    """The run's ``Context``: as given, built from a dict (LangGraph API runs pass one), or from the
    environment when there is none. Raises ``InvalidInputError`` for a bad field."""
    if isinstance(value, Context):
        return value
    if isinstance(value, dict):
        return Context(**value)
    return Context()
