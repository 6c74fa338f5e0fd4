"""Index-layout equivalence check (issue 22): replay LoCoMo turns into a fresh store and write what linking formed
(every memory's status, validity and links) and what 50 recalls returned (items, in order), keyed by content, not
by the random ids, so two runs of different code can be compared line by line.

Usage::

    python -m evals.index_equivalence --out /tmp/before.json     # on the old code
    python -m evals.index_equivalence --out /tmp/after.json      # on the new code
    python -m evals.index_equivalence --compare /tmp/before.json /tmp/after.json

Replay: the first ``BATCHED`` turns of the conversations (in file order; each conversation its own namespace,
``sample_id``, or with ``--one-namespace`` all in one) through ``Memory.observe_many`` in batches of ``BATCH``, then the next ``SINGLE`` turns one
``Memory.observe`` at a time; then ``QUERIES`` questions of those conversations recalled in their namespace
(every fifth with ``include_history``, every seventh ``as_of`` the middle of the replay). Uses the default
(MiniLM) embedder and the update model, as a user would.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evals.locomo import load_folder

BATCHED = 1_500
SINGLE = 300
BATCH = 50
QUERIES = 50
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"


def replay(
    data: Path = DATA,
    batched: int = BATCHED,
    single: int = SINGLE,
    queries: int = QUERIES,
    one_namespace: bool = False,
) -> dict[str, Any]:
    """Replay the turns into a temporary store and return ``{"memories", "links", "recalls", "ingest_s"}`` keyed by
    content (see the module docstring)."""
    from memory_graph import Memory
    from memory_graph.store import Store

    conversations = load_folder(data)
    if one_namespace:
        for c in conversations:
            c.sample_id = "locomo"
    turns = [(c.sample_id, t) for c in conversations for t in c.turns][: batched + single]
    root = Path(tempfile.mkdtemp(prefix="mg-equiv-"))
    started = time.perf_counter()
    try:
        store = Store.open(root / "store")
        mems: dict[str, Memory] = {
            ns: Memory(store=store, user_id=ns) for ns in dict.fromkeys(c.sample_id for c in conversations)
        }
        head = turns[:batched]
        for start in range(0, len(head), BATCH):
            chunk = head[start : start + BATCH]
            for ns in dict.fromkeys(ns for ns, _ in chunk):
                mems[ns].observe_many(
                    [
                        {
                            "text": t.text,
                            "speaker": t.speaker,
                            "time": t.time,
                            "ref": t.ref,
                            "session_id": t.session_id,
                        }
                        for n, t in chunk
                        if n == ns
                    ]
                )
        for ns, t in turns[batched:]:
            mems[ns].observe(t.text, speaker=t.speaker, time=t.time, ref=t.ref, session_id=t.session_id)
        ingest_s = time.perf_counter() - started
        middle = turns[len(turns) // 2][1].time
        seen = {ns for ns, _ in turns}
        asked = [(c.sample_id, q.question) for c in conversations if c.sample_id in seen for q in c.questions]
        step = max(1, len(asked) // queries)
        recalls = []
        for k, (ns, question) in enumerate(asked[::step][:queries]):
            options: dict[str, Any] = {}
            if k % 5 == 4:
                options["include_history"] = True
            if k % 7 == 6:
                options["as_of"] = middle
            r = mems[ns].recall(question, **options)
            recalls.append(
                {
                    "namespace": ns,
                    "query": question,
                    "options": options,
                    "items": [_item_key(store, ns, it) for it in r.items],
                }
            )
        memories, links = _ledger_dump(store)
        for mem in mems.values():
            mem.close()
        store.release()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"memories": memories, "links": links, "recalls": recalls, "ingest_s": round(ingest_s, 1)}


def _memory_key(text: str, refs: list[str], valid_from: str) -> str:
    return f"{'+'.join(sorted(refs))}|{valid_from}|{text}"


def _refs(store: Any, ns: str, memory_ids: list[str]) -> dict[str, list[str]]:
    prov = store.ledger.provenance(ns, memory_ids)
    return {m: [p["ref"] or p["observation_id"] for p in prov.get(m, [])] for m in memory_ids}


def _item_key(store: Any, ns: str, item: Any) -> str:
    if item.kind == "observation":
        return f"o:{item.provenance[0]['ref'] if item.provenance else item.text}|{item.status}"
    row = store.ledger.memory(ns, item.id)
    refs = _refs(store, ns, [item.id])[item.id]
    return f"m:{_memory_key(row['text'], refs, row['valid_from'])}|{item.status}"


def _ledger_dump(store: Any) -> tuple[list[str], list[str]]:
    """Every memory as ``key|status|valid_to`` and every link as ``src key -> dst key (type)``, sorted."""
    memories: list[str] = []
    links: list[str] = []
    for ns in store.ledger.namespaces():
        rows = store.ledger.query("SELECT * FROM memories WHERE namespace=?", (ns,))
        refs = _refs(store, ns, [r["id"] for r in rows])
        key = {r["id"]: _memory_key(r["text"], refs[r["id"]], r["valid_from"]) for r in rows}
        memories += [f"{ns}|{key[r['id']]}|{r['status']}|{r['valid_to']}|{r['retention']}" for r in rows]
        for link in store.ledger.query("SELECT src_id, dst_id, type FROM links WHERE namespace=?", (ns,)):
            links.append(
                f"{ns}|{key.get(link['src_id'], link['src_id'])} -> {key.get(link['dst_id'], link['dst_id'])} "
                f"({link['type']})"
            )
    return sorted(memories), sorted(links)


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The differences between two replays (empty when they formed and recalled the same)."""
    out: list[str] = []
    for name in ("memories", "links"):
        a, b = set(before[name]), set(after[name])
        out += [f"{name}: only before: {x}" for x in sorted(a - b)[:20]]
        out += [f"{name}: only after: {x}" for x in sorted(b - a)[:20]]
    for k, (x, y) in enumerate(zip(before["recalls"], after["recalls"], strict=True)):
        if x["items"] != y["items"]:
            out.append(f"recall {k} ({x['query']!r}, {x['options']}): {x['items']} != {y['items']}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the replay's result here")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--one-namespace", action="store_true", help="every conversation in one namespace")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        diffs = compare(before, after)
        print(
            "\n".join(diffs)
            if diffs
            else f"identical: {len(before['memories'])} memories, {len(before['links'])} links, "
            f"{len(before['recalls'])} recalls"
        )
        return 1 if diffs else 0
    result = replay(args.data, one_namespace=args.one_namespace)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps({k: (len(v) if isinstance(v, list) else v) for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
