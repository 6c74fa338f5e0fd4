"use strict";
// memory-graph inspector. Every stored string reaches the page as a text node (el() below), never as markup.
(function () {
  // Two modes, one page: a written file holds every memory in its data block (local source below); the page
  // `memory-graph ui` serves holds none ({"live": true}) and fetches the list a page at a time, and each memory
  // and chain page when it is opened, from /api/... (remote source). Both sources answer the same shapes as
  // memory_graph/inspector.py's summary, memory_list, memory_view and chain_page.
  var data = JSON.parse(document.getElementById("page-data").textContent);
  var PAGE = 100, CHAIN = 51;
  var LIST_FIELDS = ["id", "text", "status", "valid_from", "valid_to", "recorded", "retention", "usefulness", "source"];
  var CHAIN_FIELDS = ["id", "status", "value", "text", "valid_from", "valid_to", "recorded", "superseded_by"];
  function pick(m, fields) { var o = {}; fields.forEach(function (k) { o[k] = m[k] === undefined ? null : m[k]; }); return o; }

  function localSource(d) {
    var byId = {};
    d.memories.forEach(function (m) { byId[m.id] = m; });
    function chainPage(id, offset, limit) {
      var m = byId[id];
      if (!m) return null;
      var ids = d.chains[m.chain_head] || [id];
      return {id: id, total: ids.length, offset: offset, items: ids.slice(offset, offset + limit)
        .filter(function (i) { return byId[i]; }).map(function (i) { return pick(byId[i], CHAIN_FIELDS); })};
    }
    return {
      summary: function (cb) {
        cb({user: d.user, generated_at: d.generated_at, counts: d.counts, total: d.memories.length, recalls: d.recalls});
      },
      list: function (q, status, offset, limit, cb) {
        var words = q.toLowerCase().split(/\s+/).filter(Boolean);
        var hits = d.memories.filter(function (m) {
          return (!status || m.status === status) && words.every(function (w) { return m.search.indexOf(w) >= 0; });
        });
        cb({total: d.memories.length, matched: hits.length, offset: offset,
            memories: hits.slice(offset, offset + limit).map(function (m) { return pick(m, LIST_FIELDS); })});
      },
      memory: function (id, cb) {
        var m = byId[id];
        if (!m) { cb(null); return; }
        var start = Math.min(Math.max(0, m.chain_position - Math.floor(CHAIN / 2)), Math.max(0, m.chain_total - CHAIN));
        var view = Object.assign({}, m, {chain_page: chainPage(id, start, CHAIN)});
        cb(view);
      },
      chain: function (id, offset, limit, cb) { cb(chainPage(id, offset, limit)); },
      knows: function (id) { return !!byId[id]; }
    };
  }

  function remoteSource() {
    function get(path, params, cb) {
      var qs = Object.keys(params).map(function (k) { return encodeURIComponent(k) + "=" + encodeURIComponent(params[k]); }).join("&");
      fetch(path + (qs ? "?" + qs : ""), {headers: {"Accept": "application/json"}, cache: "no-store"})
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) { cb(body); }, function () { cb(null); });
    }
    return {
      summary: function (cb) { get("/api/summary", {}, cb); },
      list: function (q, status, offset, limit, cb) { get("/api/memories", {q: q, status: status, offset: offset, limit: limit}, cb); },
      memory: function (id, cb) { get("/api/memory", {id: id}, cb); },
      chain: function (id, offset, limit, cb) { get("/api/chain", {id: id, offset: offset, limit: limit}, cb); },
      knows: function (id) { return id !== "forget-request"; }
    };
  }
  var source = data.live ? remoteSource() : localSource(data);

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "class") node.className = attrs[k];
      else if (k === "text") node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
    }
    return node;
  }
  function day(iso) { return iso ? String(iso).slice(0, 10) : "now"; }
  function num(x, digits) { return typeof x === "number" ? x.toFixed(digits) : "-"; }
  function badge(status) {
    var known = ["current", "superseded", "contested", "retracted", "chosen", "dropped"];
    return el("span", {"class": "badge " + (known.indexOf(status) >= 0 ? status : "other"), text: status});
  }
  function memLink(id) {
    if (!id) return document.createTextNode("-");
    if (!source.knows(id)) return el("code", {text: id === "forget-request" ? "forget request" : id});
    return el("a", {href: "#m-" + id, "data-memory": id, text: "m:" + id});
  }
  function bar(value) {
    var fill = el("span");
    fill.style.width = Math.round(Math.max(0, Math.min(1, value)) * 100) + "%";
    return el("span", {"class": "bar", title: num(value, 3)}, fill);
  }

  // ---- summary and recent recalls ----------------------------------------------------------------------------
  var recentRecalls = [];
  function showSummary(s) {
    if (!s) { document.getElementById("summary").textContent = "could not read the store"; return; }
    var counts = s.counts.memories;
    document.getElementById("summary").textContent = "user " + s.user + " \u00b7 " + s.counts.observations +
      " observations \u00b7 " + s.total + " memories (" +
      Object.keys(counts).sort().map(function (k) { return k + " " + counts[k]; }).join(", ") + ") \u00b7 " +
      s.recalls.length + " recent recalls \u00b7 generated " + s.generated_at;
    recentRecalls = s.recalls;
    showRecalls(s.recalls);
  }

  // ---- memory list, a page at a time -------------------------------------------------------------------------
  var list = document.getElementById("memory-list");
  var more = document.getElementById("more");
  var search = document.getElementById("search");
  var statusFilter = document.getElementById("status-filter");
  var items = {};
  var listed = 0, listSeq = 0, selectedId = null;
  function row(m) {
    var li = el("li", {"data-id": m.id, tabindex: "0", id: "item-" + m.id},
      el("div", {"class": "text"}, badge(m.status), m.text),
      el("div", {"class": "meta"},
        "valid " + day(m.valid_from) + " \u2192 " + day(m.valid_to) + " \u00b7 recorded " + day(m.recorded) +
        " \u00b7 " + m.retention + " \u00b7 usefulness ", bar(m.usefulness), " " + num(m.usefulness, 2) +
        " \u00b7 source " + m.source + " \u00b7 m:" + m.id));
    li.addEventListener("click", function () { open(m.id); });
    li.addEventListener("keydown", function (e) { if (e.key === "Enter") open(m.id); });
    if (m.id === selectedId) li.classList.add("selected");
    items[m.id] = li;
    return li;
  }
  function loadList(reset) {
    var seq = ++listSeq;
    var offset = reset ? 0 : listed;
    source.list(search.value, statusFilter.value, offset, PAGE, function (page) {
      if (seq !== listSeq) return;  // a newer search answered first or is on its way
      if (reset) { list.textContent = ""; items = {}; listed = 0; }
      if (!page) { list.appendChild(el("li", {"class": "hint", text: "Could not read the memories."})); return; }
      page.memories.forEach(function (m) { list.appendChild(row(m)); });
      listed += page.memories.length;
      if (!page.total) list.appendChild(el("li", {"class": "hint", text: "No memories for this user."}));
      document.getElementById("match-count").textContent = page.matched + " of " + page.total + " memories" +
        (listed < page.matched ? " (the first " + listed + " listed)" : "");
      more.hidden = listed >= page.matched;
    });
  }
  var pending = null;
  search.addEventListener("input", function () {  // once typing pauses, not per key
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () { pending = null; loadList(true); }, 150);
  });
  statusFilter.addEventListener("change", function () { loadList(true); });
  more.addEventListener("click", function () { loadList(false); });

  // ---- detail of one memory ---------------------------------------------------------------------------------
  function facts(m) {
    var rows = [
      ["status", el("span", null, badge(m.status), m.superseded_by ? "superseded by " : "", m.superseded_by ? memLink(m.superseded_by) : null)],
      ["retention", m.retention],
      ["usefulness", el("span", null, bar(m.usefulness), " " + num(m.usefulness, 3) + " (Beta posterior mean of \u201chelps when shown\u201d)")],
      ["kind", m.kind], ["subject", m.subject], ["attribute", m.attribute], ["value", m.value],
      ["scope", m.scope || "(general)"], ["source", m.source], ["confidence", num(m.confidence, 2)],
      ["valid from", m.valid_from], ["valid to", m.valid_to || "(still valid)"], ["recorded", m.recorded],
      ["updated", m.updated_at], ["id", "m:" + m.id]];
    var table = el("table", {"class": "facts"});
    rows.forEach(function (r) { table.appendChild(el("tr", null, el("th", {text: r[0]}), el("td", null, r[1]))); });
    return table;
  }
  function chainSteps(page, thisId) {
    var ol = el("ol", {"class": "timeline", id: "chain"});
    page.items.forEach(function (c) {
      ol.appendChild(el("li", {"class": (c.status === "current" ? "current-step" : "") + (c.id === thisId ? " this" : ""), "data-id": c.id},
        el("div", null, badge(c.status), el("strong", {text: c.value || c.text}), " ", memLink(c.id)),
        el("div", {"class": "meta"}, "valid " + day(c.valid_from) + " \u2192 " + day(c.valid_to) + " \u00b7 recorded " + day(c.recorded)),
        el("div", {"class": "text", text: c.text}),
        c.superseded_by ? el("div", {"class": "meta superseded-by"}, "superseded by ", memLink(c.superseded_by)) : null));
    });
    return ol;
  }
  function chainView(page, thisId) {
    var box = el("div", {id: "chain-box"});
    function draw(p) {
      box.textContent = "";
      if (!p) { box.appendChild(el("p", {"class": "hint", text: "Could not read the chain."})); return; }
      var last = p.offset + p.items.length;
      var older = el("button", {type: "button", id: "chain-older", text: "\u2190 older"});
      var newer = el("button", {type: "button", id: "chain-newer", text: "newer \u2192"});
      older.disabled = p.offset <= 0;
      newer.disabled = last >= p.total;
      older.addEventListener("click", function () { source.chain(thisId, Math.max(0, p.offset - CHAIN), CHAIN, draw); });
      newer.addEventListener("click", function () { source.chain(thisId, last, CHAIN, draw); });
      box.appendChild(el("div", {"class": "chain-nav"}, older, " ",
        el("span", {id: "chain-range", "class": "meta", text: "versions " + (p.offset + 1) + "\u2013" + last + " of " + p.total}), " ", newer));
      box.appendChild(chainSteps(p, thisId));
    }
    draw(page);
    return box;
  }
  function statsView(m) {
    var table = el("table", {id: "ledger"}, el("tr", null, el("th", {text: "task class"}), el("th", {text: "shown"}),
      el("th", {text: "credited"}), el("th", {text: "blamed"}), el("th", {text: "unrewarded"}), el("th", {text: "helps (mean)"})));
    var classes = Object.keys(m.stats);
    if (!classes.length) classes = ["overall"];
    classes.forEach(function (k) {
      var s = m.stats[k] || {shown: 0, credited: 0, blamed: 0, unrewarded: 0, mean: 0.5};
      table.appendChild(el("tr", null, el("td", {text: k}), el("td", {text: s.shown}), el("td", {text: num(s.credited, 2)}),
        el("td", {text: num(s.blamed, 2)}), el("td", {text: s.unrewarded}), el("td", {text: num(s.mean, 3)})));
    });
    return table;
  }
  function listOr(rows, empty) { return rows.length ? rows : [el("p", {"class": "hint", text: empty})]; }
  function appendAll(parent, nodes) { nodes.forEach(function (n) { parent.appendChild(n); }); return parent; }

  var pane = document.getElementById("detail");
  var HINT = "Click a memory to see its supersession chain, its ledger and its state history.";
  var selectSeq = 0;
  function mark(id) {
    selectedId = id;
    Object.keys(items).forEach(function (k) { items[k].classList.toggle("selected", k === id); });
  }
  function clearSelection(message) {
    selectSeq++;
    mark(null);
    pane.textContent = "";
    pane.appendChild(el("p", {"class": "hint", text: message || HINT}));
  }
  function open(id) { location.hash = "#m-" + id; select(id); }
  function select(id) {
    var seq = ++selectSeq;
    source.memory(id, function (m) {
      if (seq !== selectSeq) return;  // another memory was opened meanwhile
      if (!m) { clearSelection("No memory m:" + id + " for this user (erased, or not a memory id)."); return; }
      mark(id);
      showDetail(m);
    });
  }
  function showDetail(m) {
    pane.textContent = "";
    pane.appendChild(el("h2", {"class": "text", id: "detail-title"}, badge(m.status), m.text));
    pane.appendChild(facts(m));
    pane.appendChild(el("h3", {text: "Supersession chain (oldest first)"}));
    pane.appendChild(m.chain_total > 1 ? chainView(m.chain_page, m.id) : el("p", {"class": "hint", text: "Not part of a supersession chain."}));
    pane.appendChild(el("h3", {text: "Ledger: times shown, credited, blamed"}));
    pane.appendChild(statsView(m));
    pane.appendChild(el("h3", {text: "Sources (provenance)"}));
    appendAll(pane, listOr(m.provenance.map(function (p) {
      return el("div", {"class": "source"}, el("div", {"class": "meta"}, day(p.time) + " \u00b7 " + (p.speaker || "?") +
        " \u00b7 ref " + (p.ref || "-") + " \u00b7 o:" + p.observation_id), el("div", {"class": "text", text: p.text}));
    }), "No source message (erased or imported without it)."));
    pane.appendChild(el("h3", {text: "Links"}));
    appendAll(pane, listOr(m.links.map(function (l) {
      return el("div", {"class": "meta"}, l.direction === "out" ? "this " + l.relation + " " : "", l.direction === "out" ? memLink(l.other) : null,
        l.direction === "in" ? memLink(l.other) : null, l.direction === "in" ? " " + l.relation + " this" : "",
        " \u00b7 " + l.reason + " \u00b7 " + l.at);
    }), "No links."));
    pane.appendChild(el("h3", {text: "State history"}));
    var ev = el("table", {id: "events"}, el("tr", null, el("th", {text: "at"}), el("th", {text: "event"}), el("th", {text: "detail"})));
    m.events.forEach(function (e) { ev.appendChild(el("tr", null, el("td", {text: e.at}), el("td", {text: e.event}), el("td", {text: e.detail}))); });
    pane.appendChild(m.events.length ? ev : el("p", {"class": "hint", text: "No events."}));
    pane.appendChild(el("h3", {text: "In recent recalls"}));
    var seen = [];
    recentRecalls.forEach(function (r) {
      r.candidates.forEach(function (c) {
        if (c.id === m.id) seen.push(el("div", {"class": "meta"}, badge(c.chosen ? "chosen" : "dropped"),
          day(r.created_at) + " \u201c" + r.query + "\u201d \u2014 " + c.reason));
      });
    });
    appendAll(pane, listOr(seen, "Not a candidate of the recent recalls."));
  }

  // ---- recent recalls ---------------------------------------------------------------------------------------
  function showRecalls(all) {
    var recalls = document.getElementById("recall-list");
    recalls.textContent = "";
    all.forEach(function (r) {
      var chosen = r.candidates.filter(function (c) { return c.chosen; }).length;
      var table = el("table", null, el("tr", null, el("th", {text: "decision"}), el("th", {text: "why"}), el("th", {text: "candidate"}),
        el("th", {text: "similarity"}), el("th", {text: "usefulness"}), el("th", {text: "tokens"}), el("th", {text: "status"})));
      r.candidates.forEach(function (c) {
        table.appendChild(el("tr", {"class": "candidate"}, el("td", null, badge(c.chosen ? "chosen" : "dropped")), el("td", {text: c.reason}),
          el("td", null, c.kind === "memory" ? memLink(c.id) : el("code", {text: (c.kind === "message" ? "o:" : "") + c.id}), " ",
            el("span", {"class": "text", text: c.text})),
          el("td", {text: num(c.similarity, 3)}), el("td", {text: num(c.usefulness, 3)}), el("td", {text: c.tokens}), el("td", {text: c.status})));
      });
      recalls.appendChild(el("details", {"class": "recall"},
        el("summary", null, day(r.created_at) + " " + String(r.created_at).slice(11, 16) + " \u00b7 \u201c" + r.query + "\u201d \u00b7 " +
          chosen + " of " + r.candidates.length + " candidates chosen \u00b7 budget " + r.budget + " tokens" +
          (r.as_of ? " \u00b7 as of " + day(r.as_of) : "") + (r.task ? " \u00b7 task " + r.task : "") +
          " \u00b7 outcome " + (r.outcome || "none")),
        table));
    });
    if (!all.length) recalls.appendChild(el("p", {"class": "hint", text: "No recalls yet."}));
  }

  // links inside the page select memories
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a[data-memory]") : null;
    if (a) { e.preventDefault(); open(a.getAttribute("data-memory")); }
  });
  function fromHash() {
    var h;
    try { h = decodeURIComponent(location.hash || ""); } catch (err) { h = ""; }  // a broken %-escape: nothing selected
    if (h.indexOf("#m-") === 0 && h.length > 3) select(h.slice(3));
    else clearSelection();
  }
  window.addEventListener("hashchange", fromHash);
  source.summary(showSummary);
  loadList(true);
  fromHash();
})();
