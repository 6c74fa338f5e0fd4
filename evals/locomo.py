"""LoCoMo suite: evidence recall of long conversations under a token budget.

Data: LoCoMo (Maharana et al., 2024, "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL),
one JSON file per conversation: ``session_N`` lists of turns (``speaker``, ``dia_id``, ``text``, optional
``blip_caption`` of a shared photo) with ``session_N_date_time``, and ``qa`` items (``question``, ``answer`` or
``adversarial_answer``, ``evidence`` = list of ``dia_id``, ``category``).

Protocol: every turn is ingested through the system (speaker; the session's date as time, turns 30 s apart in
order; ``dia_id`` as ref; the photo caption appended as ``[shares a photo: ...]``), then every question is asked
once with the same token budget (default 400). Judge: evidence recall = share of the question's evidence
``dia_id``s found among the refs (provenance) of the recalled items; all-evidence = share of questions with every
evidence turn found. Categories as numbered in the data: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial (the answer is not in the conversation; its evidence is the turn that refutes the premise).
Evidence ids are normalised ("D8:6; D9:17" is split, "D:11:26" mended); ids that name no turn of the
conversation are dropped and counted; a question left with no evidence is skipped and counted.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.common import Turn, iso, rng, shift
from evals.judges import judge_evidence, normalize_evidence
from evals.systems import System, fresh_ingest

DEFAULT_BUDGET = 400
QUICK_CONVERSATIONS = 1
QUICK_QUESTIONS = 30
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass(frozen=True)
class LocomoQuestion:
    """One LoCoMo question with its normalised evidence."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass
class Conversation:
    """A LoCoMo conversation: its turns in order and its questions."""

    sample_id: str
    turns: list[Turn]
    questions: list[LocomoQuestion]
    dropped_evidence: int = 0
    skipped_questions: int = 0


def _session_time(text: str) -> str:
    from memory_graph.timeutil import parse_time

    dt = parse_time(text, default_now=False)
    if dt is None:
        raise ValueError(f"unparseable session date {text!r}")
    return iso(dt)


def load_conversation(path: Path) -> Conversation:
    """Read one LoCoMo JSON file (top-level or under ``conversation``).

    Raises:
        ValueError: malformed JSON, a document of another shape, a session without a date, or no sessions.
    """
    try:
        return _parse_conversation(json.loads(Path(path).read_text(encoding="utf-8")), Path(path))
    except (json.JSONDecodeError, AttributeError, TypeError, KeyError) as exc:
        raise ValueError(f"{path}: not a LoCoMo conversation ({type(exc).__name__}: {exc})") from None


def _parse_conversation(raw: Any, path: Path) -> Conversation:
    conv = raw.get("conversation", raw)
    sample_id = str(raw.get("sample_id") or Path(path).stem)
    numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    if not numbers:
        raise ValueError(f"{path}: no sessions")
    turns: list[Turn] = []
    for n in numbers:
        when = conv.get(f"session_{n}_date_time")
        if not when:
            raise ValueError(f"{path}: session_{n} has no date")
        base = _session_time(when)
        for i, t in enumerate(conv[f"session_{n}"]):
            text = str(t.get("text", "")).strip()
            if t.get("blip_caption"):
                text = f"{text} [shares a photo: {t['blip_caption']}]".strip()
            if not text:
                continue
            turns.append(Turn(text=text, speaker=str(t["speaker"]), time=shift(base, seconds=30 * i),
                              ref=str(t["dia_id"]), session_id=f"{sample_id}/session_{n}"))
    known = {t.ref for t in turns}
    questions: list[LocomoQuestion] = []
    dropped = skipped = 0
    for q in raw.get("qa", []):
        raw_ev = [str(e) for e in q.get("evidence", [])]
        ev = normalize_evidence(raw_ev)
        kept = tuple(e for e in ev if e in known)
        dropped += len(ev) - len(kept) + sum(1 for e in raw_ev if not normalize_evidence([e]))
        if not kept:
            skipped += 1
            continue
        answer = q.get("answer", q.get("adversarial_answer", ""))
        questions.append(LocomoQuestion(str(q["question"]), str(answer), kept, int(q.get("category", 0))))
    return Conversation(sample_id, turns, questions, dropped, skipped)


def load_folder(data: Path) -> list[Conversation]:
    """Every ``*.json`` conversation in ``data``, sorted by file name.

    Raises:
        FileNotFoundError: the folder is missing or holds no JSON file.
    """
    files = sorted(Path(data).glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no LoCoMo *.json files in {data}")
    return [load_conversation(f) for f in files]


def _subset(conv: Conversation, n: int) -> Conversation:
    """A fixed, category-spread subset of ``n`` questions (same for every system and run)."""
    if len(conv.questions) <= n:
        return conv
    idx = sorted(rng("locomo-quick", conv.sample_id).sample(range(len(conv.questions)), n))
    return Conversation(conv.sample_id, conv.turns, [conv.questions[i] for i in idx], conv.dropped_evidence,
                        conv.skipped_questions)


def run(
    make: Callable[[str], System],
    systems: Sequence[str],
    *,
    data: Path,
    quick: bool = False,
    budget: int = DEFAULT_BUDGET,
    progress: Callable[..., Any] | None = None,
) -> dict[str, Any]:
    """Run the LoCoMo suite for ``systems`` on the conversations in ``data``; return the results dict."""
    convs = load_folder(data)
    if quick:
        smallest = sorted(convs, key=lambda c: len(c.turns))[:QUICK_CONVERSATIONS]
        convs = [_subset(c, QUICK_QUESTIONS) for c in smallest]
    results: dict[str, Any] = {}
    for name in systems:
        system = make(name)
        rows: list[dict[str, Any]] = []
        ingest_s = 0.0
        n_turns = 0
        try:
            for conv in convs:
                ingest_s += fresh_ingest(system, conv.turns)
                n_turns += len(conv.turns)
                bar = progress(conv.questions, desc=f"locomo {name} {conv.sample_id}") if progress else conv.questions
                for q in bar:
                    res = system.recall(q.question, budget)
                    v = judge_evidence(res.items, q.evidence)
                    rows.append({"conversation": conv.sample_id, "category": q.category, "recall": v.recall,
                                 "all_found": v.all_found, "evidence": v.total, "items": len(res.items),
                                 "tokens": res.tokens, "context_tokens": res.context_tokens,
                                 "latency_s": res.latency_s})
        finally:
            system.close()
        results[name] = summarize(rows, ingest_s, n_turns)
    return {
        "suite": "locomo",
        "protocol": "LoCoMo evidence recall under a token budget (Maharana et al., 2024)",
        "config": {"data": str(data), "budget": budget, "quick": quick,
                   "conversations": [c.sample_id for c in convs], "turns": sum(len(c.turns) for c in convs),
                   "questions": sum(len(c.questions) for c in convs),
                   "dropped_evidence_ids": sum(c.dropped_evidence for c in convs),
                   "skipped_questions": sum(c.skipped_questions for c in convs)},
        "systems": results,
    }


def summarize(rows: list[dict[str, Any]], ingest_s: float, n_turns: int) -> dict[str, Any]:
    """Overall and per-category evidence recall, all-evidence rate, tokens and latency of one system."""

    def block(sel: list[dict[str, Any]]) -> dict[str, Any]:
        if not sel:
            return {"n": 0, "evidence_recall": None, "all_evidence": None}
        return {"n": len(sel), "evidence_recall": sum(r["recall"] for r in sel) / len(sel),
                "all_evidence": sum(r["all_found"] for r in sel) / len(sel)}

    lat = sorted(1000 * r["latency_s"] for r in rows) or [0.0]
    n = max(1, len(rows))
    out = block(rows)
    out.update({
        "non_adversarial": block([r for r in rows if r["category"] != 5]),
        "by_category": {CATEGORIES.get(c, str(c)): block([r for r in rows if r["category"] == c])
                        for c in sorted({r["category"] for r in rows})},
        "items_per_question": sum(r["items"] for r in rows) / n,
        "tokens_per_question": sum(r["tokens"] for r in rows) / n,
        "context_tokens_per_question": sum(r["context_tokens"] for r in rows) / n,
        "latency_ms_mean": statistics.fmean(lat),
        "latency_ms_p50": lat[len(lat) // 2],
        "latency_ms_p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))],
        "ingest_ms_per_turn": 1000 * ingest_s / max(1, n_turns),
    })
    return out


def table(results: dict[str, Any]) -> str:
    """Markdown table of a LoCoMo results dict."""
    from evals.report import markdown_table

    cats = sorted({c for m in results["systems"].values() for c in m["by_category"]},
                  key=lambda c: list(CATEGORIES.values()).index(c) if c in CATEGORIES.values() else 99)
    rows = []
    for name, m in results["systems"].items():
        row = {"system": name, "recall": m["evidence_recall"], "all": m["all_evidence"],
               "recall_na": m["non_adversarial"]["evidence_recall"], **{f"cat:{c}": m["by_category"][c]["evidence_recall"] for c in cats},
               **{k: m[k] for k in ("tokens_per_question", "context_tokens_per_question", "items_per_question",
                                    "latency_ms_mean", "latency_ms_p95", "ingest_ms_per_turn")}}
        rows.append(row)
    cols = [("system", "system"), ("recall", "evidence recall"), ("all", "all evidence found"),
            ("recall_na", "recall (cat. 1-4)")]
    cols += [(f"cat:{c}", f"{c} (n={next(iter(results['systems'].values()))['by_category'][c]['n']})") for c in cats]
    cols += [("tokens_per_question", "tokens/q"), ("context_tokens_per_question", "context tokens/q"),
             ("items_per_question", "items/q"), ("latency_ms_mean", "recall ms"), ("latency_ms_p95", "recall ms p95"),
             ("ingest_ms_per_turn", "ingest ms/turn")]
    return markdown_table(rows, cols)


def plots(results: dict[str, Any], out: Path) -> list[str]:
    """PNG plot of evidence recall per category and system."""
    from evals.report import bar_chart

    names = list(results["systems"])
    cats = list(next(iter(results["systems"].values()))["by_category"])
    labels = ["all", *cats]
    series = {n: [results["systems"][n]["evidence_recall"]]
              + [results["systems"][n]["by_category"][c]["evidence_recall"] for c in cats] for n in names}
    bar_chart(out / "evidence_recall.png", labels, series,
              title=f"LoCoMo evidence recall at {results['config']['budget']} tokens", ylabel="evidence recall")
    return ["evidence_recall.png"]
