"""The inspector: one self-contained HTML page showing what memory-graph holds about one user.

``memory-graph inspect --html FILE`` writes the page; ``memory-graph ui`` serves it on 127.0.0.1 (:func:`serve`).
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
from typing import Any

from memory_graph.records import LIVE_STATUSES
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


CHAIN_WINDOW = 25
"""Versions a memory's page entry carries on each side of it (the whole chain's length is ``chain_total``): a
fact updated thousands of times made a page of hundreds of MB, each version carrying the whole chain (breaker run)."""


def chain_windows(ids: Iterable[str], newer: dict[str, str], older: dict[str, str]) -> dict[str, tuple[list[str], int]]:
    """``{id: (window of its chain around it, oldest first; the chain's length)}`` for every id, each chain
    walked once: O(memories), where one walk per memory was O(chain) each."""
    out: dict[str, tuple[list[str], int]] = {}
    for memory_id in ids:
        if memory_id in out:
            continue
        members = chain_of(memory_id, newer, older)  # always holds memory_id
        for position, member in enumerate(members):
            start = max(0, position - CHAIN_WINDOW)
            out.setdefault(member, (members[start : position + CHAIN_WINDOW + 1], len(members)))
    return out


def _stat(row: dict[str, Any]) -> dict[str, Any]:
    post = Posterior.from_stats(row["credited"], row["blamed"], row["unrewarded"])
    return {"shown": row["shown"], "credited": row["credited"], "blamed": row["blamed"],
            "unrewarded": row["unrewarded"], "mean": round(post.mean, 4)}


def page_data(records: Iterable[dict[str, Any]], recent: int = RECENT_RECALLS) -> dict[str, Any]:
    """The inspector page's data from an export (header first; see :mod:`memory_graph.transfer`). Pure.

    Returns ``{"user", "generated_at", "counts": {"observations", "memories": {status: n}}, "memories": [...],
    "recalls": [...]}``. Memories newest first (``valid_from``), each with its fields, ``recorded`` (when the
    ledger wrote it, UTC), ``provenance`` (``observation_id, ref, time, speaker, text``), ``superseded_by``,
    ``chain`` (ids, oldest first: up to ``CHAIN_WINDOW`` versions each side of it), ``chain_total`` (the whole
    chain's length), ``links`` (``relation, other, direction, reason, at``), ``stats`` (task class ->
    ``shown, credited, blamed, unrewarded, mean``; ``overall`` for all tasks), ``usefulness`` (the overall Beta
    posterior mean of "helps when shown", 0.5 with no evidence), ``events`` (``event, detail, at``) and ``search``
    (the lower-cased text the search box matches). Recalls: the ``recent`` newest, newest first, each with its
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
    windows = chain_windows([m["id"] for m in memories], newer, older)
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
            chain=windows[mid][0], chain_total=windows[mid][1], links=link_views.get(mid, []), stats=mstats,
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
            "memories": out_memories, "recalls": out_recalls}


def build_page(store: Any, user: str, recent: int = RECENT_RECALLS) -> dict[str, Any]:
    """:func:`page_data` of namespace ``user`` of ``store`` (a :class:`memory_graph.store.Store`), read through the
    export (every read filters by ``user``).

    Raises:
        InvalidInputError: ``user`` is not a valid user id.
    """
    from memory_graph.transfer import export_user

    return page_data(export_user(store, user), recent)


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


def content_security_policy() -> str:
    """The page's policy: nothing from anywhere (no network); only the page's own inline script and style, by hash."""
    css, js = _assets()
    return (f"default-src 'none'; script-src {_sha256(js)}; style-src {_sha256(css)}; img-src 'none'; "
            "base-uri 'none'; form-action 'none'")


def render_html(data: dict[str, Any]) -> str:
    """The self-contained page (one HTML string) for :func:`page_data`'s ``data``. Pure."""
    css, js = _assets()
    title = html.escape(f"memory-graph inspector: {data.get('user', '')}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{html.escape(content_security_policy())}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta name=\"referrer\" content=\"no-referrer\"><title>{title}</title><style>{css}</style></head>\n<body>"
        "<header><h1>memory-graph inspector</h1><div class=\"summary\" id=\"summary\"></div></header>\n<main>"
        "<section class=\"pane\" id=\"list-pane\"><h2>Memories</h2><div class=\"controls\">"
        "<input id=\"search\" type=\"search\" placeholder=\"Search memories (text, value, subject, id)\" "
        "aria-label=\"Search memories\"><select id=\"status-filter\" aria-label=\"Status\"><option value=\"\">any status"
        "</option><option>current</option><option>superseded</option><option>contested</option><option>retracted"
        "</option></select></div><p class=\"count\" id=\"match-count\"></p><ul class=\"memories\" id=\"memory-list\">"
        "</ul></section>\n<section class=\"pane\" id=\"detail\"><p class=\"hint\">Click a memory to see its supersession "
        "chain, its ledger and its state history.</p></section></main>\n<section class=\"recalls\" id=\"recalls\">"
        "<h2>Recent recalls: every candidate, chosen or dropped, and why</h2><div id=\"recall-list\"></div></section>\n"
        f"<script type=\"application/json\" id=\"page-data\">{embed_json(data)}</script>\n"
        f"<script>{js}</script>\n</body></html>\n"
    )


# ---- serving (memory-graph ui) ----------------------------------------------------------------------------------


def make_server(page: Callable[[], str], port: int = 0, host: str = "127.0.0.1") -> HTTPServer:
    """An HTTP server on ``host:port`` (0 = a free port; read ``server.server_address``) answering ``GET /`` with
    ``page()`` (built afresh per request) and 404 otherwise. A request whose ``Host`` header is not this address
    (``127.0.0.1:PORT`` or ``localhost:PORT``) is refused (403), so a web page elsewhere cannot read it through a
    DNS-rebound name.

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
            if self.path.split("?", 1)[0] not in ("/", "/index.html"):
                self._send(404, "text/plain; charset=utf-8", b"not found\n")
                return
            try:
                body = page().encode("utf-8")
            except Exception as exc:  # noqa: BLE001 - one failed page must not stop the server
                self._send(500, "text/plain; charset=utf-8", f"error: {type(exc).__name__}: {exc}\n".encode())
                return
            self._send(200, "text/html; charset=utf-8", body)

        def _send(self, code: int, kind: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", content_security_policy())
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
