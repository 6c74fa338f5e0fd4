"""``memory-graph``: the command-line interface (typer + rich).

Commands (every one takes ``--store PATH`` and ``--user ID``; defaults ``$MEMORY_GRAPH_STORE`` or
``./.memory-graph`` and ``$MEMORY_GRAPH_USER`` or ``default``)::

    memory-graph ingest FILE [--speaker-map NAME=ROLE] [--batch-size N]
    memory-graph ask QUESTION [--as-of DATE] [--budget N] [--history] [--explain] [--remember] [--model M] [--base-url URL]
    memory-graph chat [--thread ID] [--model M] [--base-url URL]
    memory-graph inspect [ID] [--html FILE]
    memory-graph ui [--port N]
    memory-graph forget ID [--hard]
    memory-graph reindex
    memory-graph export [--out FILE]
    memory-graph import FILE [--user ID]
    memory-graph mcp [--http PORT]   (an MCP server; needs the ``mcp`` extra)
    memory-graph eval ...            (when the ``evals`` package provides a typer app)

Expected errors (bad input files, unknown ids, invalid dates or budgets, a missing or broken store) print one
``error: ...`` line on stderr and exit with status 1 (2 for invalid input: an ``InvalidInputError`` or a bad
option value); never a traceback. Set ``MEMORY_GRAPH_DEBUG=1`` to see tracebacks.

The read-only commands (``ask``, ``inspect``, ``forget``, ``reindex``) never create a store: a path that holds
none is an error. ``ingest`` and ``chat`` create it. ``ask`` is a read: it stores no observation unless given
``--remember`` (it writes only its recall record).

Everything stored that the CLI prints (memory text, sources, refs, ids, answers, error messages) goes through
:func:`sanitize`: terminal control sequences and Unicode format characters (bidi overrides) are removed, so a
memory cannot clear the screen, recolour the terminal or reorder what is shown.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
import textwrap
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

# quiet the embedder's weight-loading progress bars and tokenizer fork warnings (before transformers loads)
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402
from rich.table import Table  # noqa: E402

from memory_graph.errors import InvalidInputError, MemoryGraphError, NotFoundError, StoreBusyError  # noqa: E402

if TYPE_CHECKING:
    from memory_graph.api import Memory
    from memory_graph.records import Recall

app = typer.Typer(
    name="memory-graph",
    help="Long-term memory for LangGraph agents: ingest conversations, ask, chat, inspect and forget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # plain click help: typer's rich help shows every flag as "--help <bool>"
    rich_markup_mode=None,
)
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 140
console = Console(highlight=False, emoji=False, width=_WIDTH)
err_console = Console(stderr=True, highlight=False, emoji=False, width=_WIDTH)

DEFAULT_BATCH = 32
MAX_INGEST_BYTES = 256 * 2**20
"""Largest file ``ingest`` reads (bytes): it validates the whole file before writing, so it holds it in memory."""
MAX_LINE_CHARS = 1_000_000  # a message's text (memory_graph.nodes.MAX_OBSERVATION_CHARS; longer ones are chunked)
MAX_FILE_LINE_CHARS = 2 * MAX_LINE_CHARS  # one line of an ingested file: the text plus its JSON fields and escapes

F = TypeVar("F", bound=Callable[..., Any])


class CliError(Exception):
    """An expected failure: printed as one ``error:`` line, exit status ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args and not isinstance(exc, MemoryGraphError):
        return str(exc.args[0])
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())  # one line


# whole terminal escape sequences (CSI, OSC/DCS/APC/PM/SOS strings, two-byte ESC x), 7-bit and C1 forms
_ESCAPE_SEQ_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]P^_X]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)


def sanitize(text: object, *, multiline: bool = False) -> str:
    """``str(text)`` made safe to print on a terminal (before rich-escaping; see :func:`_safe`).

    Removes terminal escape sequences whole (``ESC [ 2 J``, ``ESC ] 0 ; title BEL``), then every remaining
    control character (Unicode category Cc: C0, DEL, C1, ESC included), format character (Cf: bidi overrides
    and isolates, zero-width characters, soft hyphen) and lone surrogate (Cs); an unterminated string
    sequence loses only its ESC. Tabs, vertical tabs, form feeds, line and paragraph
    separators become spaces; newlines are kept when ``multiline`` (``\\r\\n`` counts as one), else spaces.
    Printable text (any script, emoji) is unchanged. Returns a ``str``; never raises.
    """
    value = _ESCAPE_SEQ_RE.sub("", str(text))
    if multiline:
        value = value.replace("\r\n", "\n")
    out: list[str] = []
    for ch in value:
        if ch == "\n" and multiline:
            out.append(ch)
        elif ch in "\t\n\x0b\x0c\u2028\u2029":
            out.append(" ")
        elif unicodedata.category(ch) not in ("Cc", "Cf", "Cs"):  # printable, other spaces (Zs), unassigned
            out.append(ch)
    return "".join(out)


def _safe(text: object, *, multiline: bool = False) -> str:
    """``text`` sanitised (:func:`sanitize`) and escaped for rich markup: the only way stored text is printed."""
    return escape(sanitize(text, multiline=multiline))


def _fail(message: str, code: int) -> typer.Exit:
    err_console.print(f"[bold red]error:[/bold red] {_safe(message)}", soft_wrap=True)
    return typer.Exit(code)


def guarded(func: F) -> F:
    """Run a command body; expected errors become one red ``error:`` line (sanitised) and an exit status.

    Exit status: ``CliError.code``; 2 for ``InvalidInputError``; 1 for any other ``MemoryGraphError``
    (``NotFoundError``, ``StoreNotFoundError``, ``StoreBusyError``, ``StoreError``, ``ClosedError``) and
    builtin errors; 130 on Ctrl-C. ``MEMORY_GRAPH_DEBUG=1`` re-raises (a traceback) instead.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except CliError as exc:
            raise _fail(str(exc), exc.code) from None
        except KeyboardInterrupt:
            raise _fail("interrupted", 130) from None
        except MemoryGraphError as exc:
            if os.environ.get("MEMORY_GRAPH_DEBUG"):
                raise
            raise _fail(_message(exc), 2 if isinstance(exc, InvalidInputError) else 1) from None
        except (ValueError, KeyError, OSError, TypeError) as exc:
            if os.environ.get("MEMORY_GRAPH_DEBUG"):
                raise
            raise _fail(_message(exc), 1) from None
        except Exception as exc:  # an unexpected failure still gets one line, not a traceback
            if os.environ.get("MEMORY_GRAPH_DEBUG"):
                raise
            raise _fail(f"{type(exc).__name__}: {_message(exc)}", 1) from None

    return wrapper  # type: ignore[return-value]


# ---- shared options -----------------------------------------------------------------------------------

def _store_path(value: str) -> str:
    """``--store``: a non-empty folder path or PostgreSQL URL (an empty one silently meant the current folder)."""
    if not str(value).strip():
        raise typer.BadParameter("must be a folder path or a postgresql:// URL, not empty")
    return str(value)


StoreOpt = Annotated[
    str,
    typer.Option("--store", envvar=["MEMORY_GRAPH_DATABASE_URL", "MEMORY_GRAPH_STORE"],
                 help="Store folder (ledger + index), or postgresql://user@host:port/db (server backend).",
                 show_default=True, parser=_store_path),
]
ChromaOpt = Annotated[
    str, typer.Option("--chroma", envvar="MEMORY_GRAPH_CHROMA_URL",
                      help="Chroma server of a postgresql:// store (http://host:8000).")
]
UserOpt = Annotated[str, typer.Option("--user", envvar="MEMORY_GRAPH_USER", help="Namespace (user id).")]
ModelOpt = Annotated[
    str, typer.Option("--model", envvar="MEMORY_GRAPH_MODEL", help="Chat model; empty = offline (no LLM).")
]
BaseUrlOpt = Annotated[
    str, typer.Option("--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible server URL.")
]
DEFAULT_STORE = ".memory-graph"


def _open(store: str, user: str, *, create: bool, **overrides: Any) -> Memory:
    """Open namespace ``user`` of ``store``; ``create=False`` (read-only commands) never creates a store.

    Raises:
        CliError: (exit 2) an empty ``--user``.
        StoreNotFoundError: ``create`` is False and ``store`` holds no store (the folder is left absent).
        InvalidInputError, StoreError, StoreBusyError: see :class:`memory_graph.api.Memory`.
    """
    from memory_graph.api import Memory

    if not user.strip():
        raise CliError("--user must be a non-empty id", 2)
    return Memory(store, user_id=user, create=create,
                  **{k: v for k, v in overrides.items() if v not in (None, "")})


def _short_date(value: str | None) -> str:
    return value[:10] if value else "now"


# ---- ingest -------------------------------------------------------------------------------------------


def _parse_speaker_map(entries: list[str]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for entry in entries:
        for part in entry.split(","):
            if not part.strip():
                continue
            name, sep, role = part.partition("=")
            if not sep or not name.strip() or not role.strip():
                raise CliError(f"--speaker-map expects NAME=ROLE, got {part.strip()!r}", 2)
            mapping[name.strip().lower()] = role.strip()
    return mapping


def load_turns(path: Path, speaker_map: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Read and validate a whole conversation file; nothing is written.

    JSONL: one object per line with ``text`` (required), ``speaker``, ``time``, ``ref``, ``session_id``
    (``session`` accepted), ``source``. Plain text: ``Speaker: text`` per line (time = now, ref = file:line).
    Blank lines are skipped; a line may hold at most ``MAX_FILE_LINE_CHARS`` (2,000,000) characters.

    Raises:
        CliError: naming the first bad line (malformed JSON, missing text, bad time, binary content, too long:
            "f.jsonl:3: line 3 is 200075 characters; the limit is 40000") or an empty file.
    """
    from memory_graph.nodes import validate_observation

    speaker_map = speaker_map or {}
    if not path.exists():
        raise CliError(f"{path}: no such file")
    if path.is_dir():
        raise CliError(f"{path}: is a folder, not a file")
    with path.open("rb") as f:  # never more than the limit in memory (``ingest /dev/urandom`` grew to 18 GB)
        data = f.read(MAX_INGEST_BYTES + 1)
    if len(data) > MAX_INGEST_BYTES:
        raise CliError(f"{path}: larger than {MAX_INGEST_BYTES // 2**20} MiB; split it and ingest the parts")
    if not data.strip():
        raise CliError(f"{path}: the file is empty")
    if b"\x00" in data:
        nul_line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise CliError(f"{path}:{nul_line}: binary content (NUL byte); expected JSONL or 'Speaker: text' lines")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad_line = data[: exc.start].count(b"\n") + 1
        raise CliError(f"{path}:{bad_line}: binary content (not UTF-8 text)") from None
    lines = text.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    is_jsonl = path.suffix.lower() in (".jsonl", ".ndjson") or first.startswith("{")
    now = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    turns: list[dict[str, Any]] = []
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        where = f"{path}:{lineno}"
        if len(line) > MAX_FILE_LINE_CHARS:
            raise CliError(f"{where}: line {lineno} is {len(line)} characters; the limit is {MAX_FILE_LINE_CHARS}")
        if any(ord(c) < 32 and c not in "\t" for c in line):
            raise CliError(f"{where}: binary content (control characters)")
        if is_jsonl:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CliError(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})") from None
            except RecursionError:
                raise CliError(f"{where}: JSON nested too deeply") from None
            if not isinstance(obj, dict):
                raise CliError(f"{where}: expected a JSON object, got {type(obj).__name__}")
            if not isinstance(obj.get("text"), str) or not obj["text"].strip():
                raise CliError(f"{where}: missing or empty 'text'")
            for name in ("speaker", "ref", "session_id", "session", "source"):  # never coerced: ["a"] is no speaker
                if obj.get(name) is not None and not isinstance(obj[name], str):
                    raise CliError(f"{where}: '{name}' must be a string, got {type(obj[name]).__name__}")
            speaker = (obj.get("speaker") or "user").strip() or "user"
            turn = {
                "text": obj["text"],
                "speaker": speaker_map.get(speaker.lower(), speaker),
                "time": obj.get("time"),
                "ref": obj["ref"] if obj.get("ref") not in (None, "") else f"{path.name}:{lineno}",
                "session_id": obj.get("session_id") or obj.get("session"),
                "source": obj.get("source"),
            }
        else:
            speaker, sep, body = line.partition(":")
            if not sep or not speaker.strip() or len(speaker) > 60 or not body.strip():
                raise CliError(f"{where}: expected 'Speaker: text'")
            speaker = speaker.strip()
            turn = {"text": body.strip(), "speaker": speaker_map.get(speaker.lower(), speaker), "time": now,
                    "ref": f"{path.name}:{lineno}", "session_id": None, "source": None}
        try:
            validate_observation(turn)
        except ValueError as exc:
            raise CliError(f"{where}: {_message(exc)}") from None
        turns.append(turn)
    if not turns:
        raise CliError(f"{path}: the file has no turns")
    return turns


def _batches(items: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@app.command()
@guarded
def ingest(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="JSONL ({speaker, text, time, ref}) or 'Speaker: text' lines.")],
    speaker_map: Annotated[
        list[str] | None,
        typer.Option("--speaker-map", help="Map a speaker name to a role, e.g. 'Dana=user,Bot=assistant' (repeatable)."),
    ] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Turns per subgraph run.")] = DEFAULT_BATCH,
    model: ModelOpt = "",
    base_url: BaseUrlOpt = "",
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Validate a whole conversation file, then observe it in batches and print a summary."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if batch_size <= 0:
        raise CliError(f"--batch-size must be positive, got {batch_size}", 2)
    turns = load_turns(file, _parse_speaker_map(speaker_map or []))
    actions: Counter[str] = Counter()
    superseded = retracted = 0
    with _open(store, user, create=True, chroma_url=chroma, model=model, base_url=base_url) as mem:
        progress = Progress(
            TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err_console, transient=True,
        )
        with progress:
            task = progress.add_task("ingest", total=len(turns))
            for batch in _batches(turns, batch_size):
                for rec in mem.observe_many(batch):
                    actions[rec["action"]] += 1
                    if rec["action"] == "supersede":
                        superseded += len(rec.get("targets") or [])
                    elif rec["action"] == "retract":
                        retracted += len(rec.get("targets") or [])
                progress.advance(task, len(batch))
    formed = sum(n for a, n in actions.items() if a not in ("duplicate", "forget"))
    table = Table(title=_safe(f"ingested {file.name} into {user!r}"), show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for label, value in (
        ("turns", len(turns)),
        ("memories formed", formed),
        ("superseded", superseded),
        ("retracted", retracted),
        ("duplicates", actions.get("duplicate", 0)),
        ("contested", actions.get("contest", 0)),
        ("forget requests", actions.get("forget", 0)),
    ):
        table.add_row(label, str(value))
    console.print(table)


# ---- ask ----------------------------------------------------------------------------------------------


def _recall_table(recall: Recall) -> Table:
    items = sorted(recall.items, key=lambda it: it.status != "current")  # stable: current first, best first
    table = Table(title=_safe(f"recalled for {recall.query!r}" + (f" as of {recall.as_of[:10]}" if recall.as_of else "")))
    table.add_column("id", no_wrap=True)
    for col in ("status", "valid", "scope", "source", "text"):
        table.add_column(col, overflow="fold")
    for it in items:
        status = it.status + (f" by {it.superseded_by}" if it.superseded_by else "")
        style = "green" if it.status == "current" else "yellow"
        table.add_row(_safe(it.id), f"[{style}]{_safe(status)}[/{style}]",
                      _safe(f"{_short_date(it.valid_from)} -> {_short_date(it.valid_to)}"), _safe(it.scope or "-"),
                      _safe(it.source), _safe(it.text))
    if not items:
        table.add_row("-", "-", "-", "-", "-", "(no relevant memories)")
    return table


def _explain_table(mem: Memory, recall: Recall) -> Table:
    ids = [c["id"] for c in recall.candidates]
    rows = mem.store.ledger.memories(mem.context.user_id, ids)
    messages = mem.store.ledger.observations(mem.context.user_id, [i for i in ids if i not in rows])
    table = Table(title=f"candidates ({len(ids)}), budget {recall.budget_tokens} tokens, used {recall.tokens_used}")
    table.add_column("id", no_wrap=True)
    for col in ("similarity", "usefulness", "tokens", "status", "decision", "text"):
        table.add_column(col, overflow="fold")
    for c in sorted(recall.candidates, key=lambda c: (not c.get("chosen"), -float(c.get("usefulness") or 0))):
        row = rows.get(c["id"])
        message = messages.get(c["id"])
        text = row["text"] if row is not None else f"(message) {message['text']}" if message is not None else "(erased)"
        table.add_row(_safe(c["id"]), f"{float(c.get('similarity', 0)):.3f}", f"{float(c.get('usefulness', 0)):.3f}",
                      _safe(c.get("tokens", "")), _safe(c.get("status", "")), _safe(c.get("reason", "")),
                      _safe(text))
    return table


def _load_agent_builder() -> Callable[..., Any] | None:
    try:
        from agent.graph import build_agent_graph  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return build_agent_graph  # type: ignore[no-any-return]


def _last_ai_text(messages: list[Any]) -> str:
    from langchain_core.messages import AIMessage

    from memory_graph.messages import message_text

    for msg in reversed(messages or []):
        if isinstance(msg, AIMessage) and not msg.tool_calls:
            return message_text(msg)
    return ""


def _parse_as_of(value: str | None) -> str | None:
    """``--as-of`` as a stored UTC time (see :func:`memory_graph.timeutil.parse_time`: strict, no guessing).

    Raises:
        CliError: (exit 2) naming the value when it is not a time the store can hold.
    """
    if value is None:
        return None
    from memory_graph.timeutil import parse_time, to_iso

    try:
        return to_iso(parse_time(value))
    except ValueError as exc:
        raise CliError(f"--as-of: {_message(exc)}", 2) from None


@app.command()
@guarded
def ask(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="What to recall and answer.")],
    as_of: Annotated[str | None, typer.Option(
        "--as-of", metavar="DATE",
        help="Answer as of this time: ISO-8601 (2024-06-02, 2024-06-02T09:00:00+02:00), a date naming day, "
             "month and year ('8 May 2023'), or 'yesterday', 'last week', '3 days ago'.")] = None,
    budget: Annotated[int | None, typer.Option("--budget", help="Token budget of the recalled context.")] = None,
    history: Annotated[bool, typer.Option("--history", help="Include superseded memories.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show every candidate and why it was chosen or dropped.")] = False,
    task: Annotated[str | None, typer.Option("--task", help="Task class (for per-task usefulness).")] = None,
    remember: Annotated[bool, typer.Option(
        "--remember", help="Also store QUESTION as a message of the conversation (as chat does); "
                           "without it ask only reads.")] = False,
    model: ModelOpt = "",
    base_url: BaseUrlOpt = "",
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Recall memories for QUESTION, print them (current first), then the answer.

    A read: the question is not stored (--remember stores it, as a chat turn would); only the recall record is
    written (its id is printed: feedback and the inspector use it). With a chat model (--model) or --remember
    the agent answers (when the agent package is there); otherwise the answer is the offline one, and LangGraph
    and the extractors are not imported.
    """
    if not question.strip():
        raise CliError("QUESTION must not be empty", 2)
    if budget is not None and budget <= 0:
        raise CliError(f"--budget must be a positive number of tokens, got {budget}", 2)
    as_of_iso = _parse_as_of(as_of)
    with _open(store, user, create=False, chroma_url=chroma, model=model, base_url=base_url) as mem:
        if budget is not None:
            mem.context = mem.context.replace(budget_tokens=budget)
        agent_answers = bool(mem.context.model) or remember  # else the answer is offline: no agent needed
        builder = _load_agent_builder() if agent_answers else None
        answer = ""
        note = ""
        recall: Recall | None = None
        if builder is not None and not (as_of_iso or history or task):
            # the agent recalls once (its memory node); its recall is the one shown and later credited. Without
            # --remember its memory node only recalls: the question is not observed
            from langchain_core.messages import HumanMessage

            from memory_graph.records import Recall as RecallModel

            out = builder().invoke({"messages": [HumanMessage(question)], "remember": remember},
                                   config={"configurable": {"thread_id": "ask"}}, context=mem.context)
            answer = _last_ai_text(out.get("messages", []))
            if out.get("recall"):
                recall = RecallModel.model_validate(out["recall"])
            remember = False  # the agent stored it
        elif builder is not None:
            note = "(the agent takes no --as-of/--history/--task: answering from the recalled memories)"
        if recall is None:
            recall = mem.recall(question, budget_tokens=budget, as_of=as_of_iso, task=task, include_history=history)
        if remember:  # no agent ran: store the question as the user's message, after the recall (not recalled)
            mem.observe(question, speaker="user")
        console.print(_recall_table(recall))
        if explain:
            console.print(_explain_table(mem, recall))
        console.print(f"[dim]recall id: {_safe(recall.id)}  tokens: {recall.tokens_used}/{recall.budget_tokens}[/dim]")
        if not answer:
            from memory_graph.offline import offline_answer

            answer = offline_answer(recall.items)
        console.print("[bold]answer[/bold]")
        console.print(_safe(answer, multiline=True))
        if note:
            console.print(f"[dim]{_safe(note)}[/dim]")


# ---- chat ---------------------------------------------------------------------------------------------


class _Session:
    """One chat thread of one user: the agent graph (or, without ``agent``, the memory subgraph) with a SQLite
    checkpointer at ``<store>/threads.sqlite3`` (:data:`memory_graph.threads.THREADS_FILE`; in memory for the
    session when the store is on a server).

    The checkpointer's ``thread_id`` is ``thread_key(user_id, thread)``, never the bare ``--thread`` name, so
    another user passing any name (even one spelling this user's key) reaches a different thread: a thread
    is never resumed, read or copied into another namespace.
    """

    def __init__(self, mem: Memory, thread: str) -> None:
        from memory_graph.store.checkpoints import thread_saver
        from memory_graph.threads import thread_key

        self.mem = mem
        self.thread = thread
        self.thread_id = thread_key(mem.context.user_id, thread)
        folder = mem.store.threads_folder
        self.conn: Any = None
        if folder is None:  # a server store has no folder: the thread lives for this session only
            from langgraph.checkpoint.memory import InMemorySaver

            self.saver: Any = InMemorySaver()
        else:
            self.conn, self.saver = thread_saver(folder)
        builder = _load_agent_builder()
        self.agent = builder is not None
        if builder is not None:
            try:
                self.graph = builder(checkpointer=self.saver)
            except TypeError:
                self.graph = builder().copy(update={"checkpointer": self.saver})
        else:
            from memory_graph.graph import build_memory_graph

            self.graph = build_memory_graph(checkpointer=self.saver)
        self.last_recall_id: str | None = None
        self.last_items: list[Any] = []
        self.last_answer: str = ""

    def turn(self, text: str) -> str:
        from langchain_core.messages import HumanMessage

        from memory_graph.records import Recall

        out = self.graph.invoke({"messages": [HumanMessage(text)]},
                                config={"configurable": {"thread_id": self.thread_id}}, context=self.mem.context)
        self.last_recall_id = out.get("last_recall_id") or self.last_recall_id
        rec = out.get("recall")
        self.last_items = Recall.model_validate(rec).items if rec else []
        answer = _last_ai_text(out.get("messages", [])) if self.agent else ""
        if not answer:
            from memory_graph.offline import offline_answer

            answer = offline_answer(self.last_items)
        self.last_answer = answer
        return self.last_answer

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


CHAT_HELP = "commands: /good  /bad  /inspect ID  /forget ID [--hard [--dry-run]]  /quit"


def _slash(session: _Session, line: str) -> bool:
    """Handle a slash command; returns False to end the chat."""
    parts = line.split()
    cmd, args = parts[0].lower(), parts[1:]
    mem = session.mem
    if cmd in ("/quit", "/exit", "/q"):
        return False
    if cmd in ("/good", "/bad"):
        if not session.last_recall_id:
            raise CliError("no recall to give feedback on yet")
        shown = {it.id for it in session.last_items}
        cited = [m for m in dict.fromkeys(re.findall(r"\[m:([0-9a-zA-Z_-]+)\]", session.last_answer)) if m in shown]
        result = mem.feedback(session.last_recall_id, success=cmd == "/good", used_ids=cited or None,
                              answer=session.last_answer or None)
        console.print(_safe(f"feedback {'good' if cmd == '/good' else 'bad'} on recall {session.last_recall_id}: "
                            f"credited {len(result.get('credited') or {})}, blamed {len(result.get('blamed') or {})}"))
        return True
    if cmd == "/inspect":
        _print_inspect(mem, args[0] if args else None)
        return True
    if cmd == "/forget":
        if not args:
            raise CliError("usage: /forget ID [--hard [--dry-run]]")
        _print_forget(mem.forget(args[0], hard="--hard" in args[1:], dry_run="--dry-run" in args[1:]))
        return True
    if cmd == "/help":
        console.print(CHAT_HELP)
        return True
    raise CliError(f"unknown command {cmd}; {CHAT_HELP}")  # printed through _safe


@app.command()
@guarded
def chat(
    thread: Annotated[str, typer.Option(
        "--thread", help="Conversation thread name (persisted; each user's threads are their own).")] = "default",
    model: ModelOpt = "",
    base_url: BaseUrlOpt = "",
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Chat with the agent; reads lines from stdin until EOF or /quit. """
    interactive = sys.stdin.isatty()
    with _open(store, user, create=True, chroma_url=chroma, model=model, base_url=base_url) as mem:
        session = _Session(mem, thread)
        try:
            if not session.agent:
                err_console.print("[dim]agent not available: memory-only offline chat[/dim]")
            if interactive:
                console.print(f"[dim]{_safe(f'thread {thread!r}, user {user!r}. {CHAT_HELP}')}[/dim]")
            while True:
                try:
                    line = input("you> " if interactive else "")
                except EOFError:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    if line.startswith("/"):
                        if not _slash(session, line):
                            break
                        continue
                    answer = session.turn(line)
                except CliError as exc:  # a bad command ends nothing
                    err_console.print(f"[bold red]error:[/bold red] {_safe(exc)}", soft_wrap=True)
                    continue
                except (InvalidInputError, NotFoundError, StoreBusyError) as exc:  # nor does a bad id or a busy store
                    err_console.print(f"[bold red]error:[/bold red] {_safe(_message(exc))}", soft_wrap=True)
                    continue
                except MemoryGraphError:  # the store is broken or closed: guarded prints it and exits
                    raise
                except (ValueError, KeyError) as exc:
                    err_console.print(f"[bold red]error:[/bold red] {_safe(_message(exc))}", soft_wrap=True)
                    continue
                console.print(f"[bold cyan]assistant>[/bold cyan] {_safe(answer, multiline=True)}")
        finally:
            session.close()


# ---- inspect / forget / reindex -----------------------------------------------------------------------


def _print_inspect(mem: Memory, memory_id: str | None) -> None:
    info = mem.inspect(memory_id)
    if memory_id is None:
        counts = info["memories"]
        total = sum(counts.values())
        console.print(f"namespace [bold]{_safe(info['namespace'])}[/bold]: {info['observations']} observations, "
                      + _safe(f"{total} memories (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ")"))
        table = Table(title="recent memories")
        for col in ("id", "status", "retention", "valid", "scope", "text"):
            table.add_column(col, overflow="fold")
        for r in info["recent"][:20]:
            table.add_row(_safe(r["id"]), _safe(r["status"]), _safe(r["retention"]),
                          _safe(f"{_short_date(r['valid_from'])} -> {_short_date(r['valid_to'])}"),
                          _safe(r["scope"] or "-"), _safe(r["text"]))
        console.print(table)
        return
    table = Table(title=_safe(f"memory {memory_id}"), show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for key in ("text", "status", "retention", "kind", "subject", "attribute", "value", "scope", "source",
                "valid_from", "valid_to", "confidence"):
        if key in info:
            table.add_row(key, _safe(info[key] if info[key] not in (None, "") else "-"))
    refs = ", ".join(str(p.get("ref") or p.get("observation_id")) for p in info.get("provenance", []))
    table.add_row("provenance", _safe(refs or "-"))
    table.add_row("supersedes", _safe(", ".join(info.get("supersedes") or []) or "-"))
    table.add_row("superseded_by", _safe(info.get("superseded_by") or "-"))
    stats = info.get("stats") or {}
    for cls, s in stats.items():
        table.add_row(_safe(f"stats ({cls})"), _safe(f"shown {s.get('shown', 0)}, credited {s.get('credited', 0)}, "
                                                     f"blamed {s.get('blamed', 0)}"))
    if not stats:
        table.add_row("stats", "shown 0, credited 0, blamed 0")
    console.print(table)
    events = info.get("events") or []
    if events:
        ev = Table(title="events")
        for col in ("at", "type", "detail"):
            ev.add_column(col, overflow="fold")
        for e in events:
            ev.add_row(_safe(e.get("at", "")), _safe(e.get("type", "")), _safe(json.dumps(e.get("detail"), default=str)))
        console.print(ev)
    chain = mem.history(memory_id)
    if len(chain) > 1:
        hist = Table(title="history (oldest first)")
        for col in ("id", "status", "valid", "text"):
            hist.add_column(col, overflow="fold")
        for h in chain:
            mark = " *" if h["id"] == memory_id else ""
            hist.add_row(_safe(h["id"] + mark), _safe(h["status"]),
                         _safe(f"{_short_date(h['valid_from'])} -> {_short_date(h['valid_to'])}"), _safe(h["text"]))
        console.print(hist)


def _print_possible(result: dict[str, Any]) -> None:
    """The messages a hard delete keeps that share a number, a code or a secret's value with what it erases."""
    possible = result.get("possible_quotes") or {}
    if possible:
        total = max(len(possible), int(result.get("possible_total") or 0))
        console.print(_safe(f"kept {total} messages that share a number, a code or a secret's value with it (not "
                            "read as quotes; erase one with: memory-graph forget ID --hard)"
                            + (f"; the {len(possible)} most likely:" if total > len(possible) else ":")))
        for obs_id, text in possible.items():
            console.print(_safe(f"  observation {obs_id}: {textwrap.shorten(sanitize(text), 200, placeholder=' ...')}"))


def _print_forget(result: dict[str, Any]) -> None:
    if result.get("dry_run"):
        console.print(_safe(f"would erase {len(result['forgotten'])} memories, {len(result['observations'])} "
                            f"observations and {len(result['items'])} store items (nothing erased; run again without "
                            "--dry-run to erase):"))
        for kind, texts in (("memory", result["memory_texts"]), ("observation", result["observation_texts"])):
            for item_id, text in texts.items():
                console.print(_safe(f"  {kind} {item_id}: {textwrap.shorten(sanitize(text), 200, placeholder=' ...')}"))
        for item in result["items"]:
            console.print(_safe(f"  store item {item['namespace']} {item['key']}"))
        _print_possible(result)
        return
    kind = "erased" if result.get("hard") else "retracted"
    console.print(_safe(f"{kind} {len(result['forgotten'])} memories: {', '.join(result['forgotten'])}"
                        + (f"; erased {len(result['observations'])} observations" if result.get("hard") else "")))
    _print_possible(result)
    if result.get("threads_unknown_owner"):  # a hard delete never touches a thread it cannot tell is the user's
        console.print(_safe(f"left {result['threads_unknown_owner']} chat threads of no known owner as they are "
                            "(not made by memory-graph's graphs; erase their copies with the app that wrote them)"))


@app.command()
@guarded
def inspect(
    memory_id: Annotated[str | None, typer.Argument(metavar="[ID]", help="A memory id; omit for a summary.")] = None,
    html: Annotated[Path | None, typer.Option(
        "--html", metavar="FILE", help="Write the user's inspector page (one self-contained HTML file) to FILE.")] = None,
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Summarise the namespace, or show one memory with its provenance, stats, events and history."""
    if html is not None:
        if memory_id is not None:
            raise CliError("--html writes the page of the whole user; give no ID with it", 2)
        _write_html(html, store, user, chroma)
        return
    with _open(store, user, create=False, chroma_url=chroma) as mem:
        _print_inspect(mem, memory_id)


@app.command()
@guarded
def forget(
    memory_id: Annotated[str, typer.Argument(
        metavar="ID", help="The memory to forget, or a message (o:ID in ask's output) to erase with --hard.")],
    hard: Annotated[bool, typer.Option("--hard", help="Erase the text everywhere (not only retract).")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="With --hard: list what would be erased (every message taken as quoting it), erase nothing.")] = False,
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Retract a memory (kept in history), or with --hard erase it and its source observations."""
    with _open(store, user, create=False, chroma_url=chroma) as mem:
        _print_forget(mem.forget(memory_id, hard=hard, dry_run=dry_run))


@app.command()
@guarded
def relate(
    earlier: Annotated[str, typer.Argument(help="The earlier statement.")],
    later: Annotated[str, typer.Argument(help="The later statement.")],
    earlier_date: Annotated[str, typer.Option("--earlier-date", help="Its date (YYYY-MM-DD).")] = "",
    later_date: Annotated[str, typer.Option("--later-date", help="Its date (YYYY-MM-DD).")] = "",
    earlier_speaker: Annotated[str, typer.Option("--earlier-speaker", help="user, assistant or a name.")] = "user",
    later_speaker: Annotated[str, typer.Option("--later-speaker", help="user, assistant or a name.")] = "user",
    as_json: Annotated[bool, typer.Option("--json", help="Print every label's probability as JSON.")] = False,
) -> None:
    """Show how the update model reads a pair: does LATER replace, correct, end, restate, add to, or forget EARLIER?"""
    from memory_graph.relations import LABELS, classify_many

    rel = classify_many([({"speaker": earlier_speaker, "date": _pair_date(earlier_date), "text": earlier},
                          {"speaker": later_speaker, "date": _pair_date(later_date), "text": later})])[0]
    if as_json:
        console.print_json(json.dumps({"label": rel.label, "probability": round(rel.probability, 4),
                                       "outdates": round(rel.outdates, 4),
                                       "probabilities": {lab: round(p, 4) for lab, p in zip(LABELS, rel.probs, strict=True)}}))
        return
    console.print(f"{rel.label} ({rel.probability:.2f}); the later outdates the earlier: {rel.outdates:.2f}")
    for lab, p in sorted(zip(LABELS, rel.probs, strict=True), key=lambda lp: -lp[1]):
        console.print(f"  {lab:<13} {p:.3f}")


def _pair_date(value: str) -> str:
    """A relate date as YYYY-MM-DD, or "" when not given; ``InvalidInputError`` when it is not a date."""
    if not value.strip():
        return ""
    from memory_graph.timeutil import parse_time

    try:
        parsed = parse_time(value)
    except (ValueError, OverflowError):
        parsed = None
    if parsed is None:
        raise InvalidInputError(f"not a date: {value!r} (use YYYY-MM-DD)")
    return parsed.date().isoformat()


@app.command()
@guarded
def reindex(store: StoreOpt = DEFAULT_STORE, user: UserOpt = "default", chroma: ChromaOpt = "") -> None:
    """Rebuild the Chroma index from the SQLite ledger (all namespaces)."""
    with _open(store, user, create=False, chroma_url=chroma) as mem:
        counts = mem.store.reindex()
        held = mem.store.index_counts()
        console.print(_safe(f"reindexed: {counts.get('indexed', 0)} records embedded, {counts.get('removed', 0)} "
                            f"removed; index now holds {held.get('memories', 0)} memories and "
                            f"{held.get('observations', 0)} observations"))


# ---- inspector page, export and import (issue 14) ------------------------------------------------------


def _write_html(path: Path, store: str, user: str, chroma: str) -> None:
    """``inspect --html FILE``: the user's inspector page (memory_graph.inspector), written whole or not at all."""
    from memory_graph.inspector import build_page, render_html

    if path.is_dir():
        raise CliError(f"{path}: is a folder; --html takes a file name", 2)
    _outside_store(path, store, "--html")
    with _open(store, user, create=False, chroma_url=chroma) as mem:
        data = build_page(mem.store, user)
    _write_atomically(path, render_html(data))
    console.print(_safe(f"wrote {path}: {len(data['memories'])} memories, {len(data['recalls'])} recent recalls of "
                        f"user {user!r}"))


def _outside_store(path: Path, store: str, option: str) -> None:
    """Refuse an output file inside the store's folder (exit 2): ``export --out STORE/ledger.sqlite3`` replaced the
    ledger, and with it every user's memories (seventeenth breaker run of issue 21). A server store has no folder."""
    from memory_graph.store.sql import looks_like_url

    if not store or looks_like_url(store):
        return
    folder, target = Path(store).expanduser().resolve(), path.expanduser().resolve()
    if target == folder or folder in target.parents:
        raise CliError(f"{path}: is inside the store folder {store}; {option} writes a file outside it", 2)


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder (a reader never sees half a file).
    A symbolic link is followed (the file it names is replaced, the link kept); a path naming anything but a
    regular file (a device, a pipe, a folder, ``/dev/stdout``) is refused, exit 2: it was replaced by a regular
    file (``--out /dev/null`` as root turned the system's device into a file; eighteenth breaker run)."""
    import tempfile

    target = path.resolve()
    if target.exists() and not target.is_file():
        raise CliError(f"{path}: is not a regular file; the output is written to a file", 2)
    folder = target.parent
    if not folder.is_dir():
        raise CliError(f"{path}: the folder {folder} does not exist", 2)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@app.command()
@guarded
def ui(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 = any free port).")] = 8765,
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Serve the user's inspector page on http://127.0.0.1:PORT/ until Ctrl-C (the page of `inspect --html`, its
    list and each memory's chain fetched a page at a time)."""
    from memory_graph.inspector import LiveInspector, build_page, make_server

    if not 0 <= port <= 65535:
        raise CliError(f"--port must be 0 to 65535, got {port}", 2)
    with _open(store, user, create=False, chroma_url=chroma) as mem:
        try:
            live = LiveInspector(lambda: build_page(mem.store, user), user=user,
                                 mark=lambda: mem.store.ledger.change_mark(user))
            server = make_server(live.page, port, api=live.api)
        except OSError as exc:
            raise CliError(f"cannot serve on 127.0.0.1:{port} ({exc.strerror or exc})") from None
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        print(f"inspector of user {sanitize(user)!r} at {url} (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


@app.command()
@guarded
def export(
    out: Annotated[Path | None, typer.Option("--out", metavar="FILE", help="Write to FILE instead of stdout.")] = None,
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Export everything held about one user as JSON Lines: a header, then observations, memories, links, events,
    ledger statistics, recalls and feedback (what memory-graph holds about them)."""
    from memory_graph.transfer import export_lines

    if out is not None and out.is_dir():
        raise CliError(f"{out}: is a folder; --out takes a file name", 2)
    if out is not None:
        _outside_store(out, store, "--out")
    with _open(store, user, create=False, chroma_url=chroma) as mem:
        lines = list(export_lines(mem.store, user))
    header = json.loads(lines[0])
    if out is None:
        sys.stdout.write("".join(lines))
        sys.stdout.flush()
    else:
        _write_atomically(out, "".join(lines))
    counts = header["counts"]
    err_console.print(_safe(f"exported user {user!r}: {counts['observation']} observations, {counts['memory']} memories, "
                            f"{counts['link']} links, {counts['stats']} statistics, {counts['recall']} recalls"
                            + (f" to {out}" if out is not None else "")))


@app.command(name="import")
@guarded
def import_(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A file written by `memory-graph export`.")],
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: Annotated[str | None, typer.Option(
        "--user", help="Import as this user (default: the user named in the file).")] = None,
) -> None:
    """Import an export into a store (creating it): all or nothing, ids kept, importing twice changes nothing; the
    text is embedded again into the store's vector index."""
    from memory_graph.transfer import check_user, import_parsed, read_export

    header, records = read_export(file)  # the whole file is checked before the store is opened
    target = check_user(user if user is not None else header.user)
    with _open(store, target, create=True, chroma_url=chroma) as mem:
        summary = import_parsed(mem.store, header, records, target)
    added, same = summary["added"], summary["unchanged"]
    console.print(_safe(f"imported into user {target!r}: added {added['observation']} observations, "
                        f"{added['memory']} memories, {added['link']} links, {added['stats']} statistics, "
                        f"{added['recall']} recalls; {sum(same.values())} records were already there; "
                        f"{sum(summary['skipped'].values())} skipped (erased by a hard delete here); "
                        f"{summary['indexed']} embedded"))


# ---- servers: PostgreSQL + a Chroma server on this machine ----------------------------------------------

servers_app = typer.Typer(help="Start or stop PostgreSQL and a Chroma server on free loopback ports in a folder.",
                          no_args_is_help=True)
app.add_typer(servers_app, name="servers")
ServersDir = Annotated[Path, typer.Option("--dir", help="The folder the servers keep their data in.")]


@servers_app.command(name="start")
@guarded
def servers_start(folder: ServersDir = Path("./memory-graph-servers")) -> None:
    """Start PostgreSQL and `chroma run` on free ports of 127.0.0.1 (no password: this machine only) and print
    the two URLs for --store and --chroma (or MEMORY_GRAPH_DATABASE_URL and MEMORY_GRAPH_CHROMA_URL)."""
    from memory_graph.store import local_servers

    running = local_servers.start(folder)
    console.print(f"MEMORY_GRAPH_DATABASE_URL={running.database_url}")
    console.print(f"MEMORY_GRAPH_CHROMA_URL={running.chroma_url}")
    err_console.print(f"servers running in {running.folder}; stop them with: memory-graph servers stop --dir "
                      f"{running.folder}")


@servers_app.command(name="stop")
@guarded
def servers_stop(folder: ServersDir = Path("./memory-graph-servers")) -> None:
    """Stop the servers started in the folder (their data stays; start them again with the same --dir)."""
    from memory_graph.store import local_servers

    console.print("stopped" if local_servers.stop(folder) else f"no servers were running in {folder}")


# ---- eval (mounted from the evals package when it is there) --------------------------------------------


# ---- mcp ----------------------------------------------------------------------------------------------


@app.command(name="mcp")
@guarded
def mcp_server(
    http: Annotated[int | None, typer.Option(
        "--http", metavar="PORT", min=0, max=65535,
        help="Serve streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio (0: a free port; the URL is "
             "printed on stderr).")] = None,
    store: StoreOpt = DEFAULT_STORE,
    chroma: ChromaOpt = "",
    user: UserOpt = "default",
) -> None:
    """Serve one user's memory to MCP clients (stdio; streamable HTTP on 127.0.0.1 with --http PORT).

    Tools: remember, recall, feedback, inspect, history, forget; resource memory://recent. The user is the
    server's --user (or MEMORY_GRAPH_USER): no tool can name another one. Creates a missing store.
    """
    try:
        from memory_graph.mcp_server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise CliError("the MCP server needs the mcp package: pip install 'memory-graph[mcp]'") from None
    with contextlib.redirect_stdout(sys.stderr):  # on stdio, stdout carries the protocol and nothing else
        mem = _open(store, user, create=True, chroma_url=chroma)
    with mem:
        serve(mem, http_port=http, announce=lambda url: err_console.print(
            _safe(f"memory-graph MCP server for user {user!r}: {url}"), soft_wrap=True))


# ---- eval (mounted from the evals package when it is there) --------------------------------------------


def _mount_evals() -> bool:
    """Add the evals typer app as ``eval`` (from ``evals.cli`` or ``evals.runner``); False when absent."""
    import importlib

    for name in ("evals.cli", "evals.runner"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in ("eval_app", "app"):
            sub = getattr(module, attr, None)
            if isinstance(sub, typer.Typer):
                commands = sub.registered_commands
                if len(commands) == 1 and not sub.registered_groups and commands[0].callback is not None:
                    # a one-command app: mount the command itself (``memory-graph eval ...``, not ``eval eval``)
                    info = commands[0]
                    app.command(name="eval", help=info.help, context_settings=info.context_settings)(info.callback)  # type: ignore[type-var]
                else:
                    app.add_typer(sub, name="eval", help="Run the benchmarks (evals package).")
                return True
    return False


def _eval_listed() -> None:
    """List ``eval`` in the top-level help without importing the benchmarks (they load torch and Chroma)."""

    @app.command(name="eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def eval_listed() -> None:
        """Run the benchmarks (supersession, locomo, outcome, unseen or all); see `memory-graph eval --help`."""


def _eval_missing() -> None:
    @app.command(name="eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def eval_placeholder() -> None:
        """Run the benchmarks (needs the evals package)."""
        raise _fail("the evals package is not available (evals/cli.py or evals/runner.py with a typer app)", 1)


def _whole_short_help() -> None:
    """Give every command its whole first help paragraph as short help (click would cut it at ~45 characters
    with "..." in the command list)."""
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if info.short_help is None and doc and doc.strip():
            info.short_help = " ".join(doc.strip().split("\n\n")[0].split())


_whole_short_help()


def main() -> None:
    """Entry point of the ``memory-graph`` script."""
    argv = sys.argv[1:]
    if argv[:1] == ["eval"]:  # the benchmarks' own options and help: import them only when asked for
        try:
            mounted = _mount_evals()
        except Exception:  # a broken evals package must not break the CLI
            mounted = False
        if not mounted:
            _eval_missing()
    else:
        _eval_listed()
    _whole_short_help()
    app(prog_name="memory-graph")


if __name__ == "__main__":
    main()
