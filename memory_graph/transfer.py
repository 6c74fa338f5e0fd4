"""Export one user's memory as JSON Lines, and import such a file into another store.

The file (format ``memory-graph-export``, version :data:`FORMAT_VERSION`) is one JSON object per line:

1. a header: ``{"type": "header", "format": "memory-graph-export", "format_version": 2, "schema_version": N,
   "user": ID, "exported_at": TIME, "counts": {kind: n}}`` (``schema_version``: the ledger's ``MIGRATIONS`` count);
2. then, in this order, every record of the user: ``observation`` (the messages as they arrived; a message longer
   than 2,000 characters as several, numbered by ``chunk``, each with the message's ``ref``), ``memory`` (with
   its ``provenance``: ``[{observation_id, ref}]``), ``link`` (``relation``: supersedes, retracts, contests,
   redacts, with its reason; a user's forget request retracts from ``records.FORGET_REQUEST``, not a memory id), ``event`` (a memory's state history: formed, status and retention changes, credit),
   ``stats`` (the ledger statistics per memory and task class: shown, credited, blamed, unrewarded; task class
   ``""`` = overall), ``schema_vote``, ``recall`` (query, budget, every candidate with why it was chosen or dropped),
   ``feedback`` and ``item`` (values put through the LangGraph ``BaseStore``; ``namespace`` without the user).

Times are ISO-8601 UTC (``YYYY-MM-DDTHH:MM:SSZ``); ids are kept, so an import preserves them and importing twice
changes nothing. Nothing of another user is ever read (every ledger read filters by the namespace), and what a hard
delete erased is not in the ledger any more, so it is not exported. Vectors are not exported: an import embeds the
text again with the target store's embedder.

Errors are the project's (``memory_graph.errors``): a malformed line, a record that does not fit the format, or a
file written by a newer memory-graph (newer format or schema) is an ``InvalidInputError`` naming the line, and
nothing is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from memory_graph.config import MAX_USER_CHARS, check_task, has_control
from memory_graph.errors import InvalidInputError
from memory_graph.records import FORGET_REQUEST, Kind, Retention, Status
from memory_graph.store import Store, tombstones
from memory_graph.store.items import check_key, check_value, item_ref, namespace_path, rehomed_ref
from memory_graph.store.ledger import SCHEMA_VERSION
from memory_graph.store.tx import legacy_chunks, now_iso

FORMAT = "memory-graph-export"
FORMAT_VERSION = 2
"""Version of the file format this module writes and the newest it reads. 2 (issue 21): an observation says which
``chunk`` of its message it is and keeps the caller's ref; version 1 wrote chunk N of message ``X`` with the ref
``X#N``, read on import as that chunk where the file shows it to be one (``tx.legacy_chunks``)."""

KINDS = ("observation", "memory", "link", "event", "stats", "schema_vote", "recall", "feedback", "item")
"""Record kinds in the order they are written (and imported: what a record refers to comes before it)."""

_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_ID = re.compile(r"[\x21-\x7e]{1,64}")


MAX_TEXT_CHARS = 1_000_000
"""Longest text a record may hold: what ``observe`` accepts in one message (``nodes.MAX_OBSERVATION_CHARS``)."""
MAX_INT = 2**53
"""Largest integer a record may hold (what JSON carries exactly and both ledgers store)."""


def _text(value: str) -> str:
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"is longer than {MAX_TEXT_CHARS:,} characters (observe's limit for one message)")
    if "\x00" in value:
        raise ValueError("contains a NUL byte")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("is not valid Unicode (a lone surrogate)") from None
    return value


def _time(value: str) -> str:
    _text(value)
    if not _TIME.fullmatch(value):
        raise ValueError(f"{value[:40]!r} is not a UTC time written YYYY-MM-DDTHH:MM:SSZ")
    datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")  # a real date (not 2025-02-30)
    return value


def _id(value: str) -> str:
    if not _ID.fullmatch(value):
        raise ValueError(f"{value[:80]!r} is not an id (1 to 64 printable ASCII characters, no spaces)")
    return value


def _user(value: str) -> str:
    _text(value)
    if not value.strip() or len(value) > MAX_USER_CHARS:
        raise ValueError(f"must be a non-empty user id of at most {MAX_USER_CHARS} characters")
    if has_control(value):  # as ``Context`` refuses it: a namespace no API could open (eighteenth breaker run)
        raise ValueError("must not hold control characters (a newline, a tab, a NUL)")
    return value


def check_user(value: Any) -> str:
    """``value`` as a user id (namespace), else ``InvalidInputError``."""
    try:
        return _user(value if isinstance(value, str) else "")
    except ValueError as exc:
        raise InvalidInputError(f"user {exc}") from None


def _task(value: str) -> str:
    """A task label as ``recall`` takes one (``config.check_task``); the empty label is the overall one."""
    if value:
        try:
            check_task(value)
        except InvalidInputError as exc:
            raise ValueError(str(exc)) from None
    return value


Text = Annotated[str, AfterValidator(_text)]
Task = Annotated[str, AfterValidator(_text), AfterValidator(_task)]
Time = Annotated[str, AfterValidator(_time)]
Id = Annotated[str, AfterValidator(_id)]
User = Annotated[str, AfterValidator(_user)]
Count = Annotated[float, Field(ge=0, le=MAX_INT, allow_inf_nan=False)]
Whole = Annotated[int, Field(ge=0, le=MAX_INT)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Header(_Record):
    type: Literal["header"]
    format: str
    format_version: int
    schema_version: int
    user: User
    exported_at: Time
    counts: dict[str, int] = Field(default_factory=dict)


class Source(_Record):
    observation_id: Id
    ref: Text | None = None


class ObservationRecord(_Record):
    type: Literal["observation"]
    id: Id
    text: Text
    speaker: Text
    source: Text
    time: Time
    session_id: Text | None = None
    ref: Text | None = None
    chunk: Annotated[int, Field(ge=1, le=MAX_INT)] = 1
    created_at: Time
    processed: bool = True
    withheld: bool = False


class MemoryRecordOut(_Record):
    type: Literal["memory"]
    id: Id
    text: Text
    kind: Kind
    subject: Text
    attribute: Text
    value: Text
    scope: Text = ""
    source: Text
    valid_from: Time
    valid_to: Time | None = None
    status: Status
    retention: Retention = "active"
    confidence: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    polarity: Annotated[int, Field(ge=-1, le=1)] = 1
    multi: bool = False
    frame: Text = ""
    tokens: Whole
    created_at: Time
    updated_at: Time
    provenance: list[Source] = Field(default_factory=list)


class LinkRecord(_Record):
    type: Literal["link"]
    id: Id
    src_id: Id
    dst_id: Id
    relation: Text
    reason: Text
    created_at: Time


class EventRecord(_Record):
    type: Literal["event"]
    memory_id: Id | None = None
    event: Text
    detail: Any = None
    created_at: Time


class StatsRecord(_Record):
    type: Literal["stats"]
    memory_id: Id
    task_class: Task = ""
    shown: Count = 0
    credited: Count = 0
    blamed: Count = 0
    unrewarded: Count = 0


class SchemaVoteRecord(_Record):
    type: Literal["schema_vote"]
    attribute: Text
    replacements: Whole = 0
    coexist: Whole = 0


class RecallRecord(_Record):
    type: Literal["recall"]
    id: Id
    query: Text
    as_of: Time | None = None
    task: Task | None = None
    budget: Annotated[int, Field(ge=1, le=MAX_INT)]
    candidates: list[dict[str, Any]] = Field(default_factory=list)
    chosen: list[Id] = Field(default_factory=list)
    created_at: Time
    outcome: Literal["success", "failure"] | None = None


class FeedbackRecord(_Record):
    type: Literal["feedback"]
    id: Id
    recall_id: Id
    success: bool
    used_ids: list[Id] = Field(default_factory=list)
    origin: Text
    created_at: Time


def _label(value: str) -> str:
    """A namespace label as LangGraph's ``BaseStore`` accepts one in ``put``, ``get`` and ``delete`` (non-empty, no
    period, no NUL): an imported item under any other label was listed but could be neither read nor deleted
    (fifteenth breaker run)."""
    if not value:
        raise ValueError("a namespace label is a non-empty string")
    if "." in value or "\x00" in value:
        raise ValueError(f"a namespace label cannot contain a period or a NUL byte, got {value!r}")
    return value


class ItemRecord(_Record):
    """A ``BaseStore`` item; its key, labels and value obey what ``MemoryStore.put`` accepts (``store.items``), so
    an imported item can be read and deleted like a put one (breaker run, issue 21)."""

    type: Literal["item"]
    namespace: list[Annotated[Text, AfterValidator(_label)]] = Field(default_factory=list)
    key: Annotated[Text, AfterValidator(check_key)]
    value: Annotated[dict[str, Any], AfterValidator(check_value)]
    observation_id: Id | None = None
    created_at: Time
    updated_at: Time


RECORD_MODELS: dict[str, type[_Record]] = {
    "observation": ObservationRecord, "memory": MemoryRecordOut, "link": LinkRecord, "event": EventRecord,
    "stats": StatsRecord, "schema_vote": SchemaVoteRecord, "recall": RecallRecord, "feedback": FeedbackRecord,
    "item": ItemRecord,
}


# ---- export ---------------------------------------------------------------------------------------------


def _json(text: str | None, default: Any) -> Any:
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return text


def export_user(store: Store, user: str) -> Iterator[dict[str, Any]]:
    """Every record of namespace ``user`` in ``store``, header first (shapes: the module docstring).

    The ledger is read kind by kind (each read filters by ``user``; O(namespace)). A user with no data gives the
    header alone (its ``counts`` are zero).

    Raises:
        InvalidInputError: ``user`` is not a valid user id.
    """
    check_user(user)
    led = store.ledger
    rows = {kind: list(led.namespace_rows(kind, user)) for kind in
            ("observation", "memory", "provenance", "link", "event", "stats", "schema_vote", "recall", "feedback", "item")}
    # bookkeeping left behind by a hard delete (the statistics of an erased raw message) names no record: left out
    known = {r["id"] for r in rows["observation"]} | {r["id"] for r in rows["memory"]}
    rows["stats"] = [r for r in rows["stats"] if r["memory_id"] in known]
    rows["event"] = [r for r in rows["event"] if r["memory_id"] is None or r["memory_id"] in known]
    recalls = {r["id"] for r in rows["recall"]}
    rows["feedback"] = [r for r in rows["feedback"] if r["recall_id"] in recalls]
    sources: dict[str, list[dict[str, Any]]] = {}
    for r in rows["provenance"]:
        if r["observation_id"] in known:
            sources.setdefault(r["memory_id"], []).append({"observation_id": r["observation_id"], "ref": r["ref"]})
    counts = {kind: len(rows[kind]) for kind in KINDS}
    yield {"type": "header", "format": FORMAT, "format_version": FORMAT_VERSION, "schema_version": SCHEMA_VERSION,
           "user": user, "exported_at": now_iso(), "counts": counts}
    for r in rows["observation"]:
        yield {"type": "observation", **dict(r), "processed": bool(r["processed"]), "withheld": bool(r["withheld"])}
    for r in rows["memory"]:
        yield {"type": "memory", **dict(r), "multi": bool(r["multi"]), "provenance": sources.get(r["id"], [])}
    for r in rows["link"]:
        yield {"type": "link", "id": r["id"], "src_id": r["src_id"], "dst_id": r["dst_id"], "relation": r["type"],
               "reason": r["reason"], "created_at": r["created_at"]}
    for r in rows["event"]:
        yield {"type": "event", "memory_id": r["memory_id"], "event": r["type"], "detail": _json(r["detail"], {}),
               "created_at": r["created_at"]}
    for r in rows["stats"]:
        yield {"type": "stats", **dict(r)}
    for r in rows["schema_vote"]:
        yield {"type": "schema_vote", **dict(r)}
    for r in rows["recall"]:
        yield {"type": "recall", **dict(r), "candidates": _json(r["candidates"], []), "chosen": _json(r["chosen"], [])}
    for r in rows["feedback"]:
        yield {"type": "feedback", **dict(r), "success": bool(r["success"]), "used_ids": _json(r["used_ids"], [])}
    for r in rows["item"]:
        path = _json(r["path"], [])
        yield {"type": "item", "namespace": list(path[1:]) if isinstance(path, list) else [], "key": r["key"],
               "value": _json(r["value"], {}), "observation_id": r["observation_id"], "created_at": r["created_at"],
               "updated_at": r["updated_at"]}


def export_lines(store: Store, user: str) -> Iterator[str]:
    """:func:`export_user` as JSON lines (ASCII-only JSON, so control and bidi characters in stored text are
    escaped and cannot reach a terminal), each ending with a newline."""
    for record in export_user(store, user):
        yield json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n"


# ---- reading and validating a file ------------------------------------------------------------------------


def _describe(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()) if p != "function-after")
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def check_header(record: Any, line: int = 1) -> Header:
    """``record`` as the export header.

    Raises:
        InvalidInputError: not a header of this format, or written by a newer memory-graph (a newer
            ``format_version`` or ``schema_version``; the message says to upgrade).
    """
    if not isinstance(record, dict) or record.get("type") != "header":
        raise InvalidInputError(f"line {line}: the first line must be the export header "
                                f'({{"type": "header", "format": "{FORMAT}", ...}})')
    try:
        header = Header.model_validate(record)
    except ValidationError as exc:
        raise InvalidInputError(f"line {line}: header {_describe(exc)}") from None
    if header.format != FORMAT:
        raise InvalidInputError(f"line {line}: not a memory-graph export (format {header.format[:60]!r})")
    if header.format_version > FORMAT_VERSION or header.format_version < 1:
        raise InvalidInputError(f"line {line}: export format version {header.format_version} is not supported: this "
                                f"memory-graph reads versions 1 to {FORMAT_VERSION}; upgrade memory-graph to import it")
    if header.schema_version > SCHEMA_VERSION:
        raise InvalidInputError(f"line {line}: the export was written by a newer memory-graph (schema version "
                                f"{header.schema_version}, this one has {SCHEMA_VERSION}); upgrade memory-graph to import it")
    return header


def validate_records(numbered: Iterable[tuple[int, Any]]) -> tuple[Header, list[_Record]]:
    """Check a whole export (``(line number, parsed JSON)`` pairs, header first): every record's shape, and that
    what records refer to is in the file (a memory's sources, a statistic's or event's memory, a feedback's
    recall). Pure; nothing is written.

    Raises:
        InvalidInputError: ``line N: ...`` for the first record that does not fit; or an empty export.
    """
    it = iter(numbered)
    first = next(it, None)
    if first is None:
        raise InvalidInputError("the export is empty (no header line)")
    header = check_header(first[1], first[0])
    records: list[_Record] = []
    lines: list[int] = []
    for line, raw in it:
        if not isinstance(raw, dict):
            raise InvalidInputError(f"line {line}: expected a JSON object, got {type(raw).__name__}")
        model = RECORD_MODELS.get(raw.get("type"))  # type: ignore[arg-type]
        if model is None:
            kind = raw.get("type")
            raise InvalidInputError(f"line {line}: unknown record type {str(kind)[:40]!r}" if kind is not None
                                    else f"line {line}: a record needs a 'type'")
        try:
            records.append(model.model_validate(raw))
        except ValidationError as exc:
            raise InvalidInputError(f"line {line}: {raw['type']} {_describe(exc)}") from None
        except RecursionError:
            raise InvalidInputError(f"line {line}: {raw['type']} nested too deeply") from None
        lines.append(line)
    _check_counts(header, records)
    if header.format_version < 2:
        _split_legacy_chunks(records)
    observations = {r.id for r in records if isinstance(r, ObservationRecord)}
    memories = {r.id for r in records if isinstance(r, MemoryRecordOut)}
    recalls = {r.id for r in records if isinstance(r, RecallRecord)}
    seen: set[tuple[str, str]] = set()
    for line, r in zip(lines, records, strict=True):
        rid = getattr(r, "id", None)
        kind = r.model_dump(include={"type"})["type"]
        if rid is not None and (kind, rid) in seen:
            raise InvalidInputError(f"line {line}: {kind} {rid!r} appears twice in the export")
        if rid is not None:
            seen.add((kind, rid))
        missing = None
        if isinstance(r, MemoryRecordOut):
            if r.valid_to is not None and r.valid_to < r.valid_from:
                raise InvalidInputError(f"line {line}: memory {r.id!r} ends ({r.valid_to}) before it begins ({r.valid_from})")
            missing = next((s.observation_id for s in r.provenance if s.observation_id not in observations), None)
        elif isinstance(r, LinkRecord):  # a link joins two memories of this export, never ids of the target's users
            sources = memories | ({FORGET_REQUEST} if r.relation == "retracts" else set())  # a forget request
            missing = r.dst_id if r.dst_id not in memories else (r.src_id if r.src_id not in sources else None)
        elif isinstance(r, (StatsRecord, EventRecord)) and r.memory_id is not None \
                and r.memory_id not in memories and r.memory_id not in observations:  # a raw message shown too
            missing = r.memory_id
        elif isinstance(r, FeedbackRecord) and r.recall_id not in recalls:
            missing = r.recall_id
        if missing is not None:
            kind = r.model_dump(include={"type"})["type"]
            raise InvalidInputError(f"line {line}: {kind} refers to {missing!r}, which is not in the export")
    return header, records


def _split_legacy_chunks(records: list[_Record]) -> None:
    """A version-1 file's chunk refs ``X#N`` as ``(ref X, chunk N)``, in its observations and in the provenance
    that names them (in place; ``tx.legacy_chunks`` decides which refs were chunks)."""
    observations = [r for r in records if isinstance(r, ObservationRecord)]
    found = legacy_chunks([r.model_dump() for r in observations])
    for obs in observations:
        if obs.id in found:
            obs.ref, obs.chunk = found[obs.id]
    for record in records:
        if isinstance(record, MemoryRecordOut):
            for source in record.provenance:
                if source.observation_id in found:
                    source.ref = found[source.observation_id][0]


def _check_counts(header: Header, records: list[_Record]) -> None:
    """The records of each kind must be as many as the header says (a file cut at a line end reads as valid JSON
    Lines: the counts are what shows it; breaker run)."""
    if not header.counts:
        return
    found: dict[str, int] = {}
    for r in records:
        kind = r.model_dump(include={"type"})["type"]
        found[kind] = found.get(kind, 0) + 1
    for kind in sorted(set(header.counts) | set(found)):
        if header.counts.get(kind, 0) != found.get(kind, 0):
            raise InvalidInputError(f"the export holds {found.get(kind, 0)} {kind} records but its header says "
                                    f"{header.counts.get(kind, 0)} (a cut or edited file?); nothing was imported")


def parse_lines(lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON)`` of each non-blank line (numbered from 1).

    Raises:
        InvalidInputError: ``line N: malformed JSON (...)``.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            detail = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise InvalidInputError(f"line {number}: malformed JSON ({detail})") from None
        except RecursionError:  # '[[[...' 100,000 deep: no record of an export nests like that (breaker run)
            raise InvalidInputError(f"line {number}: JSON nested too deeply") from None


MAX_EXPORT_BYTES = 256 * 2**20
"""Largest export file ``read_export`` reads (256 MiB, as `ingest`: about half a million messages of a user)."""


def read_export(path: str | Path) -> tuple[Header, list[_Record]]:
    """Read and validate the export file ``path`` (UTF-8 JSON lines); nothing is written.

    Raises:
        InvalidInputError: ``PATH:N: ...`` naming the first bad line, a file that is not UTF-8 text or not there.
    """
    file = Path(path)
    try:
        with file.open("rb") as f:  # never more than the limit in memory (``import /dev/zero`` grew until killed)
            data = f.read(MAX_EXPORT_BYTES + 1)
        if len(data) > MAX_EXPORT_BYTES:
            raise InvalidInputError(f"{file}: larger than {MAX_EXPORT_BYTES // 2**20} MiB; no export of one user is "
                                    "that large")
        text = data.decode("utf-8-sig")
    except FileNotFoundError:
        raise InvalidInputError(f"{file}: no such file") from None
    except IsADirectoryError:
        raise InvalidInputError(f"{file}: is a folder, not a file") from None
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{file}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InvalidInputError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    try:
        return validate_records(parse_lines(text.splitlines()))
    except InvalidInputError as exc:
        message = str(exc)  # "line N: ..." names PATH:N; a message of the whole file follows "PATH: "
        raise InvalidInputError(f"{file}:{message.removeprefix('line ')}" if message.startswith("line ")
                                else f"{file}: {message}") from None


# ---- import -----------------------------------------------------------------------------------------------


def _row(record: _Record, user: str) -> tuple[str, dict[str, Any]]:
    """The ledger row (``tx.PORTABLE`` columns, JSON columns as text) of a validated record, for namespace ``user``."""
    data = record.model_dump()
    kind = data.pop("type")
    if kind == "observation":
        data["processed"], data["withheld"] = int(data["processed"]), int(data["withheld"])
    elif kind == "memory":
        data.pop("provenance")
        data["multi"] = int(data["multi"])
    elif kind == "link":
        data["type"] = data.pop("relation")
    elif kind == "event":
        data = {"memory_id": data["memory_id"], "type": data["event"], "detail": json.dumps(data["detail"], default=str),
                "created_at": data["created_at"]}
    elif kind == "recall":
        data["candidates"], data["chosen"] = json.dumps(data["candidates"]), json.dumps(data["chosen"])
    elif kind == "feedback":
        data["success"], data["used_ids"] = int(data["success"]), json.dumps(sorted(data["used_ids"]))
    elif kind == "item":
        data = {"path": namespace_path([user, *data["namespace"]]), "key": data["key"],
                "value": json.dumps(data["value"], ensure_ascii=False), "observation_id": data["observation_id"],
                "created_at": data["created_at"], "updated_at": data["updated_at"]}
    return kind, data


def import_records(store: Store, records: Iterable[Any], user: str | None = None) -> dict[str, Any]:
    """Import an export into ``store``: ``records`` are the parsed lines, header first (dicts as
    :func:`export_user` yields them; line ``N`` of an error message is the record's position from 1), into
    namespace ``user`` (default: the header's user).

    All or nothing: every record is validated first, then everything is written in one transaction. Ids are kept;
    a record already in the store (the same id, or for statistics, votes and events the same key) is left as it
    is, so importing twice changes nothing. Then the text of what was added is embedded into the target's vector
    index (with the target's embedder; if that fails, what the ledger committed stays and the next open indexes it).

    A record that a hard delete of the target store erased (an export written before it) is skipped, with what
    refers to it or was formed from it (``store.tombstones``): importing an older export never brings erased text
    back.

    Returns: ``{"user", "added": {kind: n}, "unchanged": {kind: n}, "skipped": {kind: n}, "indexed": n}``
    (``skipped``: records a hard delete had erased).

    Raises:
        InvalidInputError: a malformed record (``line N: ...``), a newer format or schema, an invalid ``user``, or
            an id that another user of the target store already has (ids are kept, so one user's export cannot be
            imported into the same store under a second name). Nothing is written then.
        StoreError, StoreBusyError: the target store fails or is busy.
    """
    header, parsed = validate_records(enumerate(records, start=1))
    return import_parsed(store, header, parsed, user)


def import_file(store: Store, path: str | Path, user: str | None = None) -> dict[str, Any]:
    """:func:`import_records` of the export file ``path`` (error messages name ``PATH:LINE``)."""
    header, parsed = read_export(path)
    return import_parsed(store, header, parsed, user)


def import_parsed(store: Store, header: Header, records: list[_Record], user: str | None = None) -> dict[str, Any]:
    """:func:`import_records` of what :func:`read_export` or :func:`validate_records` returned (same result and
    errors)."""
    target = check_user(header.user if user is None else user)
    given = {kind: 0 for kind in KINDS}
    for record in records:
        given[_kind(record)] += 1
    added: dict[str, int] = {}
    _rehome_item_refs(records, header.user, target)
    with store.write() as tx:
        records = _without_erased(tx, target, records)
        _relabel_labels(tx, target, records)
        by_kind: dict[str, list[dict[str, Any]]] = {k: [] for k in (*KINDS, "provenance")}
        for record in records:
            kind, row = _row(record, target)
            by_kind[kind].append(row)
            if isinstance(record, MemoryRecordOut):
                by_kind["provenance"] += [{"memory_id": record.id, "observation_id": s.observation_id, "ref": s.ref}
                                          for s in record.provenance]
        for kind in ("observation", "memory", "link", "recall", "feedback"):
            taken = tx.ids_in_other_namespaces(kind, target, [r["id"] for r in by_kind[kind]])
            if taken:
                raise InvalidInputError(f"{kind} id {taken[0]!r} (and {len(taken) - 1} more) already belongs to another "
                                        f"user of the target store; ids are kept on import, so import into another store")
        obs_ids, mem_ids = [r["id"] for r in by_kind["observation"]], [r["id"] for r in by_kind["memory"]]
        _check_item_sources(tx, target, records, set(obs_ids))
        shared = sorted(set(obs_ids) & set(mem_ids)) or tx.ids_of_records(obs_ids, "memories") or \
            tx.ids_of_records(mem_ids, "observations")
        if shared:  # one id names one record in a namespace's index (breaker run, issue 22)
            raise InvalidInputError(f"id {shared[0]!r} names both a memory and an observation (in the file or the target "
                                    "store); a memory and a message never share an id")
        new_obs = [r["id"] for r in tx.import_rows("observation", target, by_kind["observation"])]
        new_mem = [r["id"] for r in tx.import_rows("memory", target, by_kind["memory"])]
        added["observation"], added["memory"] = len(new_obs), len(new_mem)
        tx.import_rows("provenance", target, by_kind["provenance"])
        for kind in KINDS[2:]:
            added[kind] = len(tx.import_rows(kind, target, by_kind[kind]))
    skipped = 0
    for start in range(0, len(new_obs), 256):
        skipped += store.index_observations(new_obs[start : start + 256])
    for start in range(0, len(new_mem), 256):
        skipped += store.index_memories(new_mem[start : start + 256])
    return {"user": target, "added": {k: added[k] for k in KINDS},
            "unchanged": {k: len(by_kind[k]) - added[k] for k in KINDS},
            "skipped": {k: given[k] - len(by_kind[k]) for k in KINDS},
            "indexed": len(new_obs) + len(new_mem) - skipped}


def _check_item_sources(tx: Any, user: str, records: list[_Record], observations: set[str]) -> None:
    """An item's ``observation_id`` names a message of the item itself: one whose ref is the item's ref
    (:func:`memory_graph.store.items.item_ref` under ``user``), in the file or of ``user`` in the target store.
    Fourth breaker run: an item naming no message was imported, and ``delete`` could then never erase what it
    said; eighteenth: an item naming another message of the user (a crafted file) was imported, and its ``delete``
    erased that unrelated message.

    Raises:
        InvalidInputError: the first item whose message is not its own; nothing is written."""
    refs = {r.id: r.ref for r in records if isinstance(r, ObservationRecord)}
    items = [r for r in records if isinstance(r, ItemRecord) and r.observation_id is not None]
    stored = sorted({str(r.observation_id) for r in items} - observations)
    for row in tx.observation_refs(user, stored):
        refs.setdefault(str(row["id"]), row["ref"])
    for item in items:
        if refs.get(str(item.observation_id)) != item_ref([user, *item.namespace], item.key):
            raise InvalidInputError(
                f"item {item.key!r} refers to observation {item.observation_id!r}, which is not a message of that item "
                "(in the export or of the user in the target store); nothing was imported")


def _rehome_item_refs(records: list[_Record], source: str, target: str) -> None:
    """Point the refs that name the exporting user's items (observations and provenance) at the same items under
    ``target`` (in place; nothing changes when the user is the same): an item imported under another user id
    is then deleted with its text (breaker run, issue 21), and the file's user id is not kept in the target."""
    for record in records:
        if isinstance(record, ObservationRecord):
            record.ref = rehomed_ref(record.ref, source, target)
        elif isinstance(record, MemoryRecordOut):
            for s in record.provenance:
                s.ref = rehomed_ref(s.ref, source, target)
        elif isinstance(record, EventRecord) and isinstance(record.detail, dict) and isinstance(record.detail.get("ref"), str):
            record.detail = {**record.detail, "ref": rehomed_ref(record.detail["ref"], source, target)}


def _relabel_labels(tx: Any, user: str, records: list[_Record]) -> None:
    """Give the labels (refs, session ids) a hard delete of the target store relabelled their relabelled form, in
    place (``tombstones.relabelled_among``): a kept message's ref quoting erased content came back with another
    store's export of the same conversation (eighteenth breaker run)."""
    wanted = [label for r in records for label in (
        [r.ref, r.session_id] if isinstance(r, ObservationRecord)
        else [s.ref for s in r.provenance] if isinstance(r, MemoryRecordOut)
        else [_event_ref(r)] if isinstance(r, EventRecord) else [])]
    labels = tx.relabelled_among(user, wanted)
    if not labels:
        return
    for record in records:
        if isinstance(record, ObservationRecord):
            record.ref = labels.get(record.ref, record.ref) if record.ref else record.ref
            record.session_id = labels.get(record.session_id, record.session_id) if record.session_id else record.session_id
        elif isinstance(record, MemoryRecordOut):
            for s in record.provenance:
                s.ref = labels.get(s.ref, s.ref) if s.ref else s.ref
        elif isinstance(record, EventRecord) and (ref := _event_ref(record)) in labels:
            record.detail = {**record.detail, "ref": labels[ref]}


def _event_ref(record: EventRecord) -> str | None:
    """The message ref an event's detail names (``formed`` events), if any."""
    ref = record.detail.get("ref") if isinstance(record.detail, dict) else None
    return ref if isinstance(ref, str) else None


def _kind(record: _Record) -> str:
    return str(record.model_dump(include={"type"})["type"])


def _without_erased(tx: Any, user: str, records: list[_Record]) -> list[_Record]:
    """``records`` without what a hard delete of the target store erased (``store.tombstones``: its ids, its
    messages' refs at their times, its items, the old detail of a scrubbed event), and without what refers to
    or was formed from those; a kept recall or feedback forgets the erased ids it lists. Reads inside ``tx``."""
    keys: dict[int, list[tuple[str, ...]]] = {}
    for n, r in enumerate(records):
        if isinstance(r, ObservationRecord):
            keys[n] = tombstones.observation_keys(user, {"id": r.id, "ref": r.ref, "time": r.time})
        elif isinstance(r, ItemRecord):
            keys[n] = [tombstones.item_key(user, item_ref([user, *r.namespace], r.key), r.created_at)]
        elif isinstance(r, EventRecord):
            keys[n] = [tombstones.event_key(user, r.memory_id, r.event, json.dumps(r.detail, default=str), r.created_at)]
        elif isinstance(r, (MemoryRecordOut, LinkRecord, RecallRecord, FeedbackRecord)):
            keys[n] = [tombstones.id_key(r.id)]
        elif isinstance(r, StatsRecord) and r.task_class:
            keys[n] = [tombstones.task_key(user, r.task_class)]
    erased = tx.erased_among(sorted({k for ks in keys.values() for k in ks}))
    if not erased:
        return records
    gone = {n for n, ks in keys.items() if erased.intersection(ks)}
    ids = {str(getattr(records[n], "id", "")) for n in gone}  # observations, memories, recalls... erased
    ids |= {r.id for r in records if isinstance(r, MemoryRecordOut)
            and any(s.observation_id in ids for s in r.provenance)}  # formed from an erased message
    kept: list[_Record] = []
    for n, r in enumerate(records):
        if n in gone or getattr(r, "id", None) in ids or _refers_to(r, ids):
            continue
        if isinstance(r, RecallRecord):
            r.candidates = [c for c in r.candidates if c.get("id") not in ids]
            r.chosen = [c for c in r.chosen if c not in ids]
        elif isinstance(r, FeedbackRecord):
            r.used_ids = [u for u in r.used_ids if u not in ids]
        kept.append(r)
    return kept


def _refers_to(record: _Record, ids: set[str]) -> bool:
    """Whether ``record`` joins, describes or belongs to one of ``ids``."""
    if isinstance(record, LinkRecord):
        return record.src_id in ids or record.dst_id in ids
    if isinstance(record, (EventRecord, StatsRecord)):
        return record.memory_id in ids
    if isinstance(record, FeedbackRecord):
        return record.recall_id in ids
    if isinstance(record, ItemRecord):
        return record.observation_id in ids
    return False
