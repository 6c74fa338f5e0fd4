"use strict";
// memory-graph inspector. Every stored string reaches the page as a text node (el() below), never as markup.
(function () {
  var data = JSON.parse(document.getElementById("page-data").textContent);
  var byId = {};
  data.memories.forEach(function (m) { byId[m.id] = m; });

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
    if (!byId[id]) return el("code", {text: id === "forget-request" ? "forget request" : id});
    return el("a", {href: "#m-" + id, "data-memory": id, text: "m:" + id});
  }
  function bar(value) {
    var fill = el("span");
    fill.style.width = Math.round(Math.max(0, Math.min(1, value)) * 100) + "%";
    return el("span", {"class": "bar", title: num(value, 3)}, fill);
  }

  // ---- summary ----------------------------------------------------------------------------------------------
  var counts = data.counts.memories;
  document.getElementById("summary").textContent = "user " + data.user + " \u00b7 " + data.counts.observations +
    " observations \u00b7 " + data.memories.length + " memories (" +
    Object.keys(counts).sort().map(function (k) { return k + " " + counts[k]; }).join(", ") + ") \u00b7 " +
    data.recalls.length + " recent recalls \u00b7 generated " + data.generated_at;

  // ---- memory list --------------------------------------------------------------------------------------------
  var list = document.getElementById("memory-list");
  var items = {};
  data.memories.forEach(function (m) {
    var li = el("li", {"data-id": m.id, tabindex: "0", id: "item-" + m.id},
      el("div", {"class": "text"}, badge(m.status), m.text),
      el("div", {"class": "meta"},
        "valid " + day(m.valid_from) + " \u2192 " + day(m.valid_to) + " \u00b7 recorded " + day(m.recorded) +
        " \u00b7 " + m.retention + " \u00b7 usefulness ", bar(m.usefulness), " " + num(m.usefulness, 2) +
        " \u00b7 source " + m.source + " \u00b7 m:" + m.id));
    li.addEventListener("click", function () { location.hash = "#m-" + m.id; select(m.id); });
    li.addEventListener("keydown", function (e) { if (e.key === "Enter") { location.hash = "#m-" + m.id; select(m.id); } });
    items[m.id] = li;
    list.appendChild(li);
  });
  if (!data.memories.length) list.appendChild(el("li", {"class": "hint", text: "No memories for this user."}));

  var search = document.getElementById("search");
  var statusFilter = document.getElementById("status-filter");
  function applyFilter() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var status = statusFilter.value;
    var shown = 0;
    data.memories.forEach(function (m) {
      var ok = (!status || m.status === status) && words.every(function (w) { return m.search.indexOf(w) >= 0; });
      if (items[m.id].hidden === ok) items[m.id].hidden = !ok;  // touch only what changes: 10k rows re-laid out per key were 2 s
      if (ok) shown++;
    });
    document.getElementById("match-count").textContent = shown + " of " + data.memories.length + " memories";
  }
  var pending = null;
  search.addEventListener("input", function () {  // once typing pauses, not per key
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () { pending = null; applyFilter(); }, 150);
  });
  statusFilter.addEventListener("change", applyFilter);
  applyFilter();

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
  function chainView(m) {
    var ol = el("ol", {"class": "timeline", id: "chain"});
    m.chain.forEach(function (id) {
      var c = byId[id];
      if (!c) return;
      var li = el("li", {"class": (c.status === "current" ? "current-step" : "") + (id === m.id ? " this" : ""), "data-id": id},
        el("div", null, badge(c.status), el("strong", {text: c.value || c.text}), " ", memLink(id)),
        el("div", {"class": "meta"}, "valid " + day(c.valid_from) + " \u2192 " + day(c.valid_to) + " \u00b7 recorded " + day(c.recorded)),
        el("div", {"class": "text", text: c.text}),
        c.superseded_by ? el("div", {"class": "meta superseded-by"}, "superseded by ", memLink(c.superseded_by)) : null);
      ol.appendChild(li);
    });
    return ol;
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
  function select(id) {
    var m = byId[id];
    if (!m) return;
    Object.keys(items).forEach(function (k) { items[k].classList.toggle("selected", k === id); });
    pane.textContent = "";
    pane.appendChild(el("h2", {"class": "text", id: "detail-title"}, badge(m.status), m.text));
    pane.appendChild(facts(m));
    pane.appendChild(el("h3", {text: "Supersession chain (oldest first)"}));
    pane.appendChild(m.chain.length > 1 ? chainView(m) : el("p", {"class": "hint", text: "Not part of a supersession chain."}));
    if (m.chain_total > m.chain.length) {
      pane.appendChild(el("p", {"class": "hint", text: "Showing the " + m.chain.length + " versions nearest this one of " + m.chain_total + "."}));
    }
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
    data.recalls.forEach(function (r) {
      r.candidates.forEach(function (c) {
        if (c.id === m.id) seen.push(el("div", {"class": "meta"}, badge(c.chosen ? "chosen" : "dropped"),
          day(r.created_at) + " \u201c" + r.query + "\u201d \u2014 " + c.reason));
      });
    });
    appendAll(pane, listOr(seen, "Not a candidate of the recent recalls."));
  }

  // ---- recent recalls ---------------------------------------------------------------------------------------
  var recalls = document.getElementById("recall-list");
  data.recalls.forEach(function (r) {
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
  if (!data.recalls.length) recalls.appendChild(el("p", {"class": "hint", text: "No recalls yet."}));

  // links inside the page select memories
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a[data-memory]") : null;
    if (a) { e.preventDefault(); location.hash = "#m-" + a.getAttribute("data-memory"); select(a.getAttribute("data-memory")); }
  });
  function fromHash() { var h = decodeURIComponent(location.hash || ""); if (h.indexOf("#m-") === 0) select(h.slice(3)); }
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
