"""The inspector: one self-contained HTML page showing what memory-graph holds about one user.

``memory-graph inspect --html FILE`` writes the page with every memory in it; ``memory-graph ui`` serves on
127.0.0.1 the same page holding none, whose script fetches the list, each memory and each chain a page at a time
(:class:`LiveInspector`, :func:`make_server`), so that page stays small whatever the store's size.
The page shows the user's memories (status, retention, usefulness, validity dates, when recorded, sources), each
memory's supersession chain as a timeline with its ledger (times shown, credited, blamed; its state history), the
recent recalls with every candidate and why it was chosen or dropped (the reasons the recall record keeps), and a
search box that filters the memories in the page itself.

Three steps, each a function: :func:`page_data` (pure: the records of :func:`memory_graph.transfer.export_user`
-> the page's data, a JSON-ready dict), :func:`build_page` (a store and a user -> that dict) and
:func:`render_html` (pure: the dict -> the page). The page needs no network: CSS and JavaScript are inline, the
data is embedded as JSON in a ``<script type="application/json">`` block with ``<``, ``>``, ``&`` and the line
separators escaped (memory text is untrusted: it can neither close the block nor become markup, and the script
puts every stored string into the page as text), and a Content-Security-Policy allows only the page's own script
and style (by hash), so nothing is loaded or sent anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from importlib import resources
from typing import Any, get_args
from urllib.parse import parse_qs

from memory_graph.errors import InvalidInputError
from memory_graph.records import LIVE_STATUSES, Status
from memory_graph.usefulness import Posterior

RECENT_RECALLS = 50
"""How many of the newest recalls the page lists."""

ENDING_LINKS = ("supersedes", "retracts")


# ---- page data (pure) --------------------------------------------------------------------------------------


def chains(links: Iterable[dict[str, Any]]) -> tuple[dict[str, str], dict[str, str]]:
    """``(newer, older)`` steps of the supersession chains from ``link`` records (oldest link first): ``newer[id]``
    is the memory that superseded ``id`` and ``older[id]`` the one ``id`` superseded, each the first recorded
    (as :meth:`memory_graph.api.Memory.history` reads them)."""
    newer: dict[str, str] = {}
    older: dict[str, str] = {}
    for link in links:
        if link.get("relation") == "supersedes":
            newer.setdefault(link["dst_id"], link["src_id"])
            older.setdefault(link["src_id"], link["dst_id"])
    return newer, older


def chain_of(memory_id: str, newer: dict[str, str], older: dict[str, str]) -> list[str]:
    """The supersession chain through ``memory_id``, oldest first (a cycle is cut where it closes). O(chain)."""
    seen = {memory_id}
    first = memory_id
    while (prev := older.get(first)) is not None and prev not in seen:
        seen.add(prev)
        first = prev
    chain, seen = [first], {first}
    while (nxt := newer.get(chain[-1])) is not None and nxt not in seen:
        seen.add(nxt)
        chain.append(nxt)
    return chain if memory_id in seen else [memory_id]


def chain_index(ids: Iterable[str], newer: dict[str, str], older: dict[str, str]
                ) -> tuple[dict[str, list[str]], dict[str, tuple[str, int]]]:
    """Every chain once: ``(lists, place)`` where ``lists[head]`` is a chain of two or more memories (ids, oldest
    first, ``head`` its oldest) and ``place[id] = (head, position in that chain)`` for every id (a memory in no
    chain is its own head at position 0 and has no list). Each chain is walked once: O(memories). (A breaker run's
    fact updated 4,000 times made a page of 195 MB when every version carried the whole chain.)"""
    lists: dict[str, list[str]] = {}
    place: dict[str, tuple[str, int]] = {}
    for memory_id in ids:
        if memory_id in place:
            continue
        members = chain_of(memory_id, newer, older)  # always holds memory_id
        if len(members) > 1:
            lists[members[0]] = members
        for position, member in enumerate(members):
            place.setdefault(member, (members[0], position))
    return lists, place


def _stat(row: dict[str, Any]) -> dict[str, Any]:
    post = Posterior.from_stats(row["credited"], row["blamed"], row["unrewarded"])
    return {"shown": row["shown"], "credited": row["credited"], "blamed": row["blamed"],
            "unrewarded": row["unrewarded"], "mean": round(post.mean, 4)}


def page_data(records: Iterable[dict[str, Any]], recent: int = RECENT_RECALLS) -> dict[str, Any]:
    """The inspector page's data from an export (header first; see :mod:`memory_graph.transfer`). Pure.

    Returns ``{"user", "generated_at", "counts": {"observations", "memories": {status: n}}, "memories": [...],
    "chains": {...}, "recalls": [...]}``. Memories newest first (``valid_from``), each with its fields,
    ``recorded`` (when the ledger wrote it, UTC), ``provenance`` (``observation_id, ref, time, speaker, text``),
    ``superseded_by``, ``chain_head`` (the oldest id of its supersession chain; its own id outside any),
    ``chain_position`` (its index in that chain, 0 = oldest), ``chain_total`` (the chain's length), ``links``
    (``relation, other, direction, reason, at``), ``stats`` (task class ->
    ``shown, credited, blamed, unrewarded, mean``; ``overall`` for all tasks), ``usefulness`` (the overall Beta
    posterior mean of "helps when shown", 0.5 with no evidence), ``events`` (``event, detail, at``) and ``search``
    (the lower-cased text the search box matches). ``chains`` maps each chain's head to its ids, oldest first
    (chains of two or more only; each chain held once). Recalls: the ``recent`` newest, newest first, each with its
    ``candidates`` (``id, kind`` memory | message | erased, ``text, similarity, usefulness, tokens, status,
    chosen, reason``, chosen first).
    """
    header: dict[str, Any] = {}
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        if rec.get("type") == "header":
            header = rec
        else:
            by_kind.setdefault(str(rec.get("type")), []).append(rec)
    observations = {o["id"]: o for o in by_kind.get("observation", [])}
    memories = by_kind.get("memory", [])
    mem_ids = {m["id"] for m in memories}
    links = by_kind.get("link", [])
    newer, older = chains(links)
    ended_by: dict[str, str] = {}
    link_views: dict[str, list[dict[str, Any]]] = {}
    for link in links:
        if link["relation"] in ENDING_LINKS:
            ended_by.setdefault(link["dst_id"], link["src_id"])
        base = {"relation": link["relation"], "reason": link["reason"], "at": link["created_at"]}
        link_views.setdefault(link["src_id"], []).append({**base, "other": link["dst_id"], "direction": "out"})
        link_views.setdefault(link["dst_id"], []).append({**base, "other": link["src_id"], "direction": "in"})
    stats: dict[str, dict[str, Any]] = {}
    for s in by_kind.get("stats", []):
        stats.setdefault(s["memory_id"], {})[s["task_class"] or "overall"] = _stat(s)
    events: dict[str, list[dict[str, Any]]] = {}
    for e in by_kind.get("event", []):
        if e.get("memory_id"):
            detail = e.get("detail")
            events.setdefault(e["memory_id"], []).append(
                {"event": e["event"], "at": e["created_at"],
                 "detail": json.dumps(detail, ensure_ascii=False, sort_keys=True) if detail not in (None, {}, "") else ""})
    chain_lists, place = chain_index([m["id"] for m in memories], newer, older)
    out_memories = []
    for m in sorted(memories, key=lambda m: (m["valid_from"], m.get("created_at", "")), reverse=True):
        mid = m["id"]
        sources = []
        for p in m.get("provenance", []):
            o = observations.get(p["observation_id"], {})
            sources.append({"observation_id": p["observation_id"], "ref": p.get("ref") or o.get("ref") or "",
                            "time": o.get("time", ""), "speaker": o.get("speaker", ""), "text": o.get("text", "")})
        mstats = stats.get(mid, {})
        keep = ("id", "text", "kind", "subject", "attribute", "value", "scope", "source", "status", "retention",
                "confidence", "valid_from", "valid_to", "updated_at")
        view = {k: m.get(k) for k in keep}
        superseded_by = ended_by.get(mid) if m["status"] not in LIVE_STATUSES else None
        view.update(
            recorded=m.get("created_at"), provenance=sources, superseded_by=superseded_by,
            chain_head=place[mid][0], chain_position=place[mid][1],
            chain_total=len(chain_lists.get(place[mid][0], [mid])), links=link_views.get(mid, []), stats=mstats,
            usefulness=mstats.get("overall", {}).get("mean", 0.5), events=events.get(mid, []),
            search=" ".join(str(m.get(k) or "") for k in ("id", "text", "value", "subject", "attribute", "scope",
                                                            "source", "status", "retention")).lower(),
        )
        out_memories.append(view)
    memory_text = {m["id"]: m["text"] for m in memories}
    recalls = sorted(by_kind.get("recall", []), key=lambda r: (r["created_at"], r["id"]), reverse=True)[:recent]
    feedback: dict[str, list[dict[str, Any]]] = {}
    for f in by_kind.get("feedback", []):
        feedback.setdefault(f["recall_id"], []).append({"success": f["success"], "origin": f["origin"], "at": f["created_at"]})
    out_recalls = []
    for r in recalls:
        cands = []
        for c in r.get("candidates") or []:
            cid = str(c.get("id", ""))
            kind = "memory" if cid in mem_ids else "message" if cid in observations else "erased"
            text = memory_text.get(cid) or observations.get(cid, {}).get("text") or "(erased)"
            cands.append({"id": cid, "kind": kind, "text": text, "similarity": c.get("similarity"),
                          "usefulness": c.get("usefulness"), "tokens": c.get("tokens"), "status": c.get("status", ""),
                          "chosen": bool(c.get("chosen")), "reason": str(c.get("reason", ""))})
        cands.sort(key=lambda c: (not c["chosen"], -float(c["usefulness"] or 0)))
        out_recalls.append({"id": r["id"], "query": r["query"], "as_of": r.get("as_of"), "task": r.get("task"),
                            "budget": r["budget"], "created_at": r["created_at"], "outcome": r.get("outcome"),
                            "feedback": feedback.get(r["id"], []), "candidates": cands})
    counts: dict[str, int] = {}
    for m in memories:
        counts[m["status"]] = counts.get(m["status"], 0) + 1
    return {"user": header.get("user", ""), "generated_at": header.get("exported_at", ""),
            "counts": {"observations": len(observations), "memories": counts},
            "memories": out_memories, "chains": chain_lists, "recalls": out_recalls}


def build_page(store: Any, user: str, recent: int = RECENT_RECALLS) -> dict[str, Any]:
    """:func:`page_data` of namespace ``user`` of ``store`` (a :class:`memory_graph.store.Store`), read through the
    export (every read filters by ``user``).

    Raises:
        InvalidInputError: ``user`` is not a valid user id.
    """
    from memory_graph.transfer import export_user

    return page_data(export_user(store, user), recent)


# ---- paged views of the page data (pure; what `ui` serves on demand) -------------------------------------------

LIST_PAGE = 100
"""Memories per page of the list (``/api/memories``)."""

CHAIN_PAGE = 51
"""Versions per page of a supersession chain (``/api/chain``); a memory opens on the page centred on it."""

MAX_PAGE = 1000
"""The largest ``limit`` a request may ask for."""

LIST_FIELDS = ("id", "text", "status", "valid_from", "valid_to", "recorded", "retention", "usefulness", "source")
"""What a list row carries (the detail of one memory is fetched when it is opened)."""

CHAIN_FIELDS = ("id", "status", "value", "text", "valid_from", "valid_to", "recorded", "superseded_by")
"""What a version in a chain page carries."""


def _index(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{id: memory view}`` of page data, built once per data (kept in the dict under a private key)."""
    by_id = data.get("_by_id")
    if by_id is None:
        by_id = data["_by_id"] = {m["id"]: m for m in data["memories"]}
    return by_id  # type: ignore[no-any-return]


def memory_view(data: dict[str, Any], memory_id: str) -> dict[str, Any]:
    """One memory of :func:`page_data`'s ``data`` (without its ``search`` text) with ``chain_page``, the
    :func:`chain_page` around it.

    Raises:
        NotFoundError: no memory ``memory_id`` in the page.
    """
    from memory_graph.errors import NotFoundError

    m = _index(data).get(memory_id)
    if m is None:
        raise NotFoundError(f"no memory {memory_id!r} in this page")
    position, total = m["chain_position"], m["chain_total"]
    start = min(max(0, position - CHAIN_PAGE // 2), max(0, total - CHAIN_PAGE))
    view = {k: v for k, v in m.items() if k != "search"}
    view["chain_page"] = chain_page(data, memory_id, start, CHAIN_PAGE)
    return view


def chain_page(data: dict[str, Any], memory_id: str, offset: int, limit: int) -> dict[str, Any]:
    """Versions ``offset .. offset+limit-1`` (0 = oldest) of the supersession chain through ``memory_id``:
    ``{"id", "total", "offset", "items": [{CHAIN_FIELDS}...]}``; an ``offset`` past the end gives no items.

    Raises:
        NotFoundError: no memory ``memory_id`` in the page.
        InvalidInputError: ``offset`` < 0 or ``limit`` outside 1..MAX_PAGE.
    """
    from memory_graph.errors import NotFoundError

    _check_page(offset, limit)
    by_id = _index(data)
    m = by_id.get(memory_id)
    if m is None:
        raise NotFoundError(f"no memory {memory_id!r} in this page")
    ids = data["chains"].get(m["chain_head"], [memory_id])
    items = [{k: by_id[i].get(k) for k in CHAIN_FIELDS} for i in ids[offset : offset + limit] if i in by_id]
    return {"id": memory_id, "total": len(ids), "offset": offset, "items": items}


def memory_list(data: dict[str, Any], query: str = "", status: str = "", offset: int = 0,
                limit: int = LIST_PAGE) -> dict[str, Any]:
    """One page of the memories (newest first) whose ``search`` text holds every word of ``query`` (case-blind)
    and whose status is ``status`` (any when empty): ``{"total", "matched", "offset", "memories": [{LIST_FIELDS}
    ...]}`` (``total``: all memories; ``matched``: those that pass). O(memories) per call.

    Raises:
        InvalidInputError: ``offset`` < 0 or ``limit`` outside 1..MAX_PAGE, a ``status`` that is no memory status
            (one the page never offers answered "no matches": sixteenth breaker run).
    """
    _check_page(offset, limit)
    if status and status not in get_args(Status):
        raise InvalidInputError(f"status must be one of {', '.join(get_args(Status))}, got {status!r}")
    words = query.lower().split()
    hits = [m for m in data["memories"]
            if (not status or m["status"] == status) and all(w in m["search"] for w in words)]
    rows = [{k: m.get(k) for k in LIST_FIELDS} for m in hits[offset : offset + limit]]
    return {"total": len(data["memories"]), "matched": len(hits), "offset": offset, "memories": rows}


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """The page's header and recalls: ``{"user", "generated_at", "counts", "total", "recalls"}`` (``total``:
    memories; ``recalls`` as in :func:`page_data`, at most ``RECENT_RECALLS``)."""
    return {"user": data["user"], "generated_at": data["generated_at"], "counts": data["counts"],
            "total": len(data["memories"]), "recalls": data["recalls"]}


def _check_page(offset: int, limit: int) -> None:
    from memory_graph.errors import InvalidInputError

    if offset < 0 or not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"offset must be >= 0 and limit 1 to {MAX_PAGE}, got offset {offset}, limit {limit}")


def _int_arg(query: dict[str, str], name: str, default: int) -> int:
    from memory_graph.errors import InvalidInputError

    text = query.get(name, "")
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise InvalidInputError(f"{name} must be a whole number, got {text[:40]!r}") from None


class LiveInspector:
    """What ``memory-graph ui`` serves: :meth:`page` (a small page that holds no memory: its script asks
    :meth:`api` for the list, a page at a time, and for each memory and chain when it is opened), so the first
    page stays small whatever the store's size (a 5,000-version fact made a page of 53.7 MB).

    ``build()`` gives :func:`page_data`'s dict (:func:`build_page` of the store). Every load of the page starts
    a new snapshot; the API calls read the snapshot, built at most once per load (thread-safe), and built again
    when ``mark()`` (e.g. ``Ledger.change_mark``) no longer gives what it gave when the snapshot was built: a
    memory hard-deleted by another process is not served by an open page (breaker run, issue 21). O(memories)
    per snapshot, O(memories) per list request (the search), O(page) per memory or chain request.
    """

    def __init__(self, build: Callable[[], dict[str, Any]], user: str = "",
                 mark: Callable[[], Any] | None = None) -> None:
        self._build = build
        self._user = user
        self._mark = mark or (lambda: None)
        self._lock = threading.Lock()
        self._data: dict[str, Any] | None = None
        self._built_at: Any = None

    def page(self) -> str:
        """The page (HTML) with no memory in it; the next API call reads the store afresh."""
        with self._lock:
            self._data = None
        return render_html({"live": True, "user": self._user})

    def snapshot(self) -> dict[str, Any]:
        """The current page data, built now if this load has none yet."""
        with self._lock:
            mark = self._mark()
            if self._data is None or mark != self._built_at:
                self._data, self._built_at = self._build(), mark
                _index(self._data)
            return self._data

    def api(self, path: str, query: dict[str, str]) -> dict[str, Any]:
        """The JSON answer to ``GET path?query`` (one value per parameter):

        - ``/api/summary``: :func:`summary`;
        - ``/api/memories?q=&status=&offset=&limit=``: :func:`memory_list`;
        - ``/api/memory?id=``: :func:`memory_view`;
        - ``/api/chain?id=&offset=&limit=``: :func:`chain_page`.

        Raises:
            NotFoundError: another path, or an unknown memory id.
            InvalidInputError: a parameter that is not a whole number, or out of range.
        """
        from memory_graph.errors import NotFoundError

        if path == "/api/summary":
            return summary(self.snapshot())
        if path == "/api/memories":
            return memory_list(self.snapshot(), query.get("q", ""), query.get("status", ""),
                               _int_arg(query, "offset", 0), _int_arg(query, "limit", LIST_PAGE))
        if path == "/api/memory":
            return memory_view(self.snapshot(), query.get("id", ""))
        if path == "/api/chain":
            return chain_page(self.snapshot(), query.get("id", ""), _int_arg(query, "offset", 0),
                              _int_arg(query, "limit", CHAIN_PAGE))
        raise NotFoundError(f"no such page: {path}")


# ---- HTML (pure) ----------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str]:
    folder = resources.files("memory_graph") / "static"
    return (folder / "inspector.css").read_text(encoding="utf-8"), (folder / "inspector.js").read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """``data`` as JSON that is safe inside an HTML ``<script>`` element: ``<``, ``>`` and ``&`` are written as
    ``\\u003c``, ``\\u003e``, ``\\u0026`` and U+2028/U+2029 escaped, so no string can end the element, open a
    comment or a tag; ``JSON.parse`` gives the same values back."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(live: bool = False) -> str:
    """The page's policy: only the page's own inline script and style, by hash; nothing from the network, except,
    with ``live`` (the page ``ui`` serves), the JSON its script fetches from the same server (``connect-src
    'self'``)."""
    css, js = _assets()
    connect = "'self'" if live else "'none'"
    return (f"default-src 'none'; script-src {_sha256(js)}; style-src {_sha256(css)}; img-src 'none'; "
            f"connect-src {connect}; base-uri 'none'; form-action 'none'")


def _public(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the indexes the paged views keep in it (keys starting with ``_``)."""
    return {k: v for k, v in data.items() if not k.startswith("_")}


def render_html(data: dict[str, Any]) -> str:
    """The self-contained page (one HTML string) for :func:`page_data`'s ``data`` (every memory in the page; the
    script lists them a page at a time). With ``{"live": True, "user": ...}`` instead, the page of
    :class:`LiveInspector`, whose script fetches everything from the ``/api/...`` answers of the server that
    served it. Pure."""
    css, js = _assets()
    title = html.escape(f"memory-graph inspector: {data.get('user', '')}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" "
        f"content=\"{html.escape(content_security_policy(bool(data.get('live'))))}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta name=\"referrer\" content=\"no-referrer\"><title>{title}</title><style>{css}</style></head>\n<body>"
        "<header><h1>memory-graph inspector</h1><div class=\"summary\" id=\"summary\"></div></header>\n<main>"
        "<section class=\"pane\" id=\"list-pane\"><h2>Memories</h2><div class=\"controls\">"
        "<input id=\"search\" type=\"search\" placeholder=\"Search memories (text, value, subject, id)\" "
        "aria-label=\"Search memories\"><select id=\"status-filter\" aria-label=\"Status\"><option value=\"\">any status"
        "</option><option>current</option><option>superseded</option><option>contested</option><option>retracted"
        "</option></select></div><p class=\"count\" id=\"match-count\"></p><ul class=\"memories\" id=\"memory-list\">"
        "</ul><button type=\"button\" id=\"more\" hidden>Show more</button></section>\n"
        "<section class=\"pane\" id=\"detail\"><p class=\"hint\">Click a memory to see its supersession "
        "chain, its ledger and its state history.</p></section></main>\n<section class=\"recalls\" id=\"recalls\">"
        "<h2>Recent recalls: every candidate, chosen or dropped, and why</h2><div id=\"recall-list\"></div></section>\n"
        f"<script type=\"application/json\" id=\"page-data\">{embed_json(_public(data))}</script>\n"
        f"<script>{js}</script>\n</body></html>\n"
    )


# ---- serving (memory-graph ui) ----------------------------------------------------------------------------------


Api = Callable[[str, dict[str, str]], Any]
"""``api(path, query)`` -> a JSON-ready answer (:meth:`LiveInspector.api`)."""


def make_server(page: Callable[[], str], port: int = 0, host: str = "127.0.0.1", api: Api | None = None
                ) -> HTTPServer:
    """An HTTP server on ``host:port`` (0 = a free port; read ``server.server_address``) answering ``GET /`` with
    ``page()`` (built afresh per request), ``GET /api/...?...`` with ``api(path, query)`` as JSON when ``api`` is
    given (404 for a ``NotFoundError``, 400 for an ``InvalidInputError``, each ``{"error": message}``), and 404
    otherwise. A request whose ``Host`` header is not this address (``127.0.0.1:PORT`` or ``localhost:PORT``) is
    refused (403), so a web page elsewhere cannot read it through a DNS-rebound name.

    Raises:
        OSError: the port is taken or cannot be bound.
    """

    class Handler(BaseHTTPRequestHandler):
        server_version = "memory-graph-inspector"
        sys_version = ""

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            port_now = server.server_port
            allowed = {f"127.0.0.1:{port_now}", f"localhost:{port_now}", f"[::1]:{port_now}"}
            if self.headers.get("Host", "") not in allowed:
                self._send(403, "text/plain; charset=utf-8", f"forbidden: open http://127.0.0.1:{port_now}/\n".encode())
                return
            path = self.path.split("?", 1)[0]
            if api is not None and path.startswith("/api/"):
                self._answer_api(path, self.path.partition("?")[2])
                return
            if path not in ("/", "/index.html"):
                self._send(404, "text/plain; charset=utf-8", b"not found\n")
                return
            try:
                body = page().encode("utf-8")
            except Exception as exc:  # noqa: BLE001 - one failed page must not stop the server
                self._send(500, "text/plain; charset=utf-8", f"error: {type(exc).__name__}: {exc}\n".encode())
                return
            self._send(200, "text/html; charset=utf-8", body)

        def _answer_api(self, path: str, query_text: str) -> None:
            from memory_graph.errors import InvalidInputError, NotFoundError

            assert api is not None
            query = {k: v[-1] for k, v in parse_qs(query_text, keep_blank_values=True).items()}
            try:
                code, answer = 200, api(path, query)
            except NotFoundError as exc:
                code, answer = 404, {"error": str(exc)}
            except InvalidInputError as exc:
                code, answer = 400, {"error": str(exc)}
            except Exception as exc:  # noqa: BLE001 - one failed answer must not stop the server
                code, answer = 500, {"error": f"{type(exc).__name__}: {exc}"}
            body = json.dumps(answer, ensure_ascii=True, separators=(",", ":")).encode("ascii")
            self._send(code, "application/json", body)

        def _send(self, code: int, kind: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", content_security_policy(live=api is not None))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: the CLI prints its own line
            return

    server = ThreadingHTTPServer((host, port), Handler)  # an idle connection must not hold the page (breaker run)
    server.daemon_threads = True
    return server


def serve_in_thread(server: HTTPServer) -> threading.Thread:
    """Run ``server`` in a daemon thread (tests); stop it with ``server.shutdown()``."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread
