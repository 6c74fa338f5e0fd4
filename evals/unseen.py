"""Unseen-conversation suite: what is true now, on conversations nobody tuned for (issue 11).

Data: ``evals/unseen/*.json`` (set 1) and ``evals/unseen/set2/*.json`` (set 2), each one conversation (30-60
turns, one domain) with its questions and correct answers, written by a helper that had not read the code,
before anything was run on it (``written_by``). The files are frozen: a rule is never written against them. New
conversations are added as a new *set* (a new folder); results are reported per set (``by_set``) so old and new
material stay apart. Set 1 (2026-12-01, morning) has since been read to diagnose failures (so it is now
development material); set 2 (2026-12-01, afternoon) was written before the timeline order and every later
change, and is the held-out figure.

Each question is asked once per system through ``recall`` (``as_of`` for as-of questions) at the suite's
budget. The judge reads the recalled items in the order the system presents them; a string *matches* a line
when it is a case-insensitive substring of it. A line is **marked outdated** when the system says so (status
``superseded`` or ``retracted``, or a ``valid_to`` at or before the question's time); ``contested`` is not
outdated (honest uncertainty shows both, and must still rank the right one first). Per question:

- ``shown``: some line that is not marked outdated matches an ``accept`` string;
- ``first``: of the lines that match an ``accept`` or a ``replaced`` string and are not marked outdated, the
  first one matches an ``accept`` string (for ``current``, ``hypothetical`` and ``retracted`` questions it is the
  *current value first* figure; for ``as_of`` questions the *as-of value first* figure);
- ``first_line`` (issue 20): the very first line shown matches an ``accept`` string and is not marked outdated
  (questions with an accept string: current, hypothetical, retracted, as-of): the reader's first line answers;
- ``replaced_as_current``: some line matches a ``replaced`` string, matches no ``accept`` string ("moved from
  MySQL to PostgreSQL 16" names both and presents the old one as old) and is not marked outdated. For
  ``forgotten`` questions (no accept string) this is the whole test: the forgotten value must not come back.

Targets of issue 11 (offline, default configuration): current value first >= 90% of questions, a replaced
value shown as current on <= 2% of the questions that have one, as-of value first >= 90%.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.common import Turn
from evals.systems import RecalledItem, System, fresh_ingest

DEFAULT_BUDGET = 400
DATA = Path(__file__).resolve().parent / "unseen"
TYPES = ("current", "as_of", "forgotten", "hypothetical", "retracted")
FIRST_TYPES = ("current", "hypothetical", "retracted")


@dataclass(frozen=True)
class Question:
    """One question with its answer strings (see the module docstring)."""

    id: str
    type: str
    question: str
    accept: tuple[str, ...]
    replaced: tuple[str, ...]
    as_of: str | None = None


@dataclass
class Conversation:
    """One frozen conversation file: its turns (as ``Turn``) and questions."""

    name: str
    domain: str
    turns: list[Turn]
    questions: list[Question] = field(default_factory=list)


def load_conversation(path: Path) -> Conversation:
    """Read one conversation file.

    Raises:
        ValueError: the file is not a conversation of this suite (names the file and what is wrong).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        turns = [Turn(text=str(t["text"]), speaker=str(t["speaker"]), time=str(t["time"]), ref=f"{path.stem}:{i}")
                 for i, t in enumerate(raw["turns"])]
        questions = [Question(id=str(q["id"]), type=str(q["type"]), question=str(q["question"]),
                              accept=tuple(str(a) for a in q.get("accept") or ()),
                              replaced=tuple(str(r) for r in q.get("replaced") or ()), as_of=q.get("as_of"))
                     for q in raw["questions"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not an unseen-conversation file ({type(exc).__name__}: {exc})") from None
    bad = [q.id for q in questions if q.type not in TYPES or (q.type == "as_of" and not q.as_of)]
    if bad:
        raise ValueError(f"{path}: questions of unknown type or without as_of: {bad}")
    return Conversation(name=str(raw.get("name") or path.stem), domain=str(raw.get("domain", "")), turns=turns,
                        questions=questions)


def load_folder(folder: Path = DATA) -> list[Conversation]:
    """Every ``*.json`` conversation of ``folder``, sorted by name. Raises ``FileNotFoundError`` when none."""
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise FileNotFoundError(f"no unseen conversations (*.json) in {folder}")
    return [load_conversation(p) for p in paths]


def load_sets(folder: Path = DATA) -> dict[str, list[Conversation]]:
    """``{"set-1": the *.json of folder, "set-2": those of folder/set2, ...}`` (each ``setN`` subfolder)."""
    sets = {"set-1": load_folder(folder)}
    for sub in sorted(p for p in folder.glob("set*") if p.is_dir()):
        sets[f"set-{sub.name[3:]}"] = load_folder(sub)
    return sets


def _matches(text: str, strings: Sequence[str]) -> bool:
    low = text.lower()
    return any(s.lower() in low for s in strings if s)


def outdated(item: RecalledItem, at: str | None) -> bool:
    """Whether the system marks ``item`` as no longer held (at ``at``, ISO UTC, or now)."""
    if item.status in ("superseded", "retracted"):
        return True
    return item.valid_to is not None and (at is None or item.valid_to <= at)


def judge(items: Sequence[RecalledItem], q: Question) -> dict[str, bool]:
    """``{"shown", "first", "first_line", "replaced_as_current"}`` for one question (see the module docstring)."""
    live = [it for it in items if not outdated(it, q.as_of)]
    relevant = [it for it in live if _matches(it.text, q.accept) or _matches(it.text, q.replaced)]
    return {
        "shown": bool(q.accept) and any(_matches(it.text, q.accept) for it in live),
        "first": bool(q.accept) and bool(relevant) and _matches(relevant[0].text, q.accept),
        "first_line": bool(q.accept) and bool(items) and _matches(items[0].text, q.accept) and not outdated(items[0], q.as_of),
        "replaced_as_current": any(_matches(it.text, q.replaced) and not _matches(it.text, q.accept) for it in live),
    }


def run(
    make: Callable[[str], System],
    systems: Sequence[str],
    *,
    quick: bool = False,
    budget: int = DEFAULT_BUDGET,
    progress: Callable[..., Any] | None = None,
    data: Path = DATA,
) -> dict[str, Any]:
    """Ingest each conversation into each system, ask its questions, judge; return the results dict.
    ``quick`` changes nothing (the suite is small: six conversations, about 100 questions)."""
    sets = load_sets(Path(data))
    convs = [c for group in sets.values() for c in group]
    set_of = {c.name: label for label, group in sets.items() for c in group}
    results: dict[str, Any] = {}
    for name in systems:
        system = make(name)
        rows: list[dict[str, Any]] = []
        try:
            for conv in convs:
                fresh_ingest(system, conv.turns)
                bar = progress(conv.questions, desc=f"unseen {name} {conv.name}") if progress else conv.questions
                for q in bar:
                    res = system.recall(q.question, budget, as_of=q.as_of)
                    verdict = judge(res.items, q)
                    rows.append({"conversation": conv.name, "set": set_of[conv.name], "id": q.id, "type": q.type, **verdict,
                                 "has_replaced": bool(q.replaced), "has_accept": bool(q.accept), "items": len(res.items),
                                 "context_tokens": res.context_tokens,
                                 "shown_lines": [f"[{it.status}] {it.text}"[:200] for it in res.items[:6]]})
        finally:
            system.close()
        results[name] = summarize(rows)
    return {
        "suite": "unseen",
        "protocol": "Unseen conversations written with their answers before any run (issue 11)",
        "config": {"data": str(data), "budget": budget, "conversations": [c.name for c in convs],
                   "sets": {label: [c.name for c in group] for label, group in sets.items()},
                   "turns": sum(len(c.turns) for c in convs), "questions": sum(len(c.questions) for c in convs)},
        "systems": results,
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The suite's figures for one system, overall and per conversation, plus the per-question rows."""

    def rate(sel: list[dict[str, Any]], key: str) -> float | None:
        return statistics.fmean(1.0 if r[key] else 0.0 for r in sel) if sel else None

    def block(sel: list[dict[str, Any]]) -> dict[str, Any]:
        firsts = [r for r in sel if r["type"] in FIRST_TYPES]
        as_of = [r for r in sel if r["type"] == "as_of"]
        changed = [r for r in sel if r["has_replaced"]]
        return {"questions": len(sel), "current_first": rate(firsts, "first"), "n_current": len(firsts),
                "as_of_first": rate(as_of, "first"), "n_as_of": len(as_of),
                "first_line": rate([r for r in sel if r["type"] in (*FIRST_TYPES, "as_of") and r.get("has_accept", True)],
                                   "first_line"),
                "replaced_as_current": rate(changed, "replaced_as_current"), "n_changed": len(changed),
                "shown": rate([r for r in sel if r["type"] != "forgotten"], "shown"),
                "forgotten_back": sum(1 for r in sel if r["type"] == "forgotten" and r["replaced_as_current"]),
                "hypothetical_as_fact": sum(1 for r in sel if r["type"] == "hypothetical" and r["replaced_as_current"])}

    out = block(rows)
    out["by_set"] = {s: block([r for r in rows if r.get("set", "set-1") == s])
                     for s in dict.fromkeys(r.get("set", "set-1") for r in rows)}
    out["by_conversation"] = {c: block([r for r in rows if r["conversation"] == c])
                              for c in dict.fromkeys(r["conversation"] for r in rows)}
    out["context_tokens_per_question"] = statistics.fmean(r["context_tokens"] for r in rows) if rows else 0.0
    out["rows"] = rows
    return out


def table(results: dict[str, Any]) -> str:
    """Markdown tables: overall per system, then per conversation."""
    from evals.report import markdown_table

    def fmt(m: dict[str, Any]) -> dict[str, Any]:
        return {k: m.get(k) for k in ("current_first", "as_of_first", "first_line", "replaced_as_current", "shown",
                                      "forgotten_back", "hypothetical_as_fact")}

    rows = [{"system": name, "set": label, **fmt(b), "tokens": m["context_tokens_per_question"] if label == "all" else None}
            for name, m in results["systems"].items()
            for label, b in [("all", m), *m.get("by_set", {}).items()]]
    cols = [("system", "system"), ("set", "set"), ("current_first", "current value first"), ("as_of_first", "as-of value first"),
            ("first_line", "first line answers"), ("replaced_as_current", "replaced shown as current"),
            ("shown", "answer shown at all"),
            ("forgotten_back", "forgotten shown"), ("hypothetical_as_fact", "hypothetical as fact"),
            ("tokens", "context tokens/q")]
    text = markdown_table(rows, cols)
    per = [{"system": name, "conversation": conv, **fmt(b)}
           for name, m in results["systems"].items() for conv, b in m["by_conversation"].items()]
    return text + "\n\nBy conversation:\n\n" + markdown_table(per, [("system", "system"), ("conversation", "conversation")] + cols[2:-1])


def plots(results: dict[str, Any], out: Path) -> list[str]:
    """Bar chart of the three headline figures per system."""
    from evals.report import bar_chart

    labels = ["current first", "as-of first", "replaced as current"]
    series = {n: [m["current_first"], m["as_of_first"], m["replaced_as_current"]] for n, m in results["systems"].items()}
    bar_chart(out / "unseen.png", labels, series, title=f"Unseen conversations at {results['config']['budget']} tokens",
              ylabel="share of questions")
    return ["unseen.png"]
