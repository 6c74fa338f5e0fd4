"""Check one writer's folder of the update corpus (format, counts, dates, annotations).

Usage: ``python -m training.validate_corpus training/corpus/w01`` (or the file path). Prints ``OK`` or one
line per problem; exit 1 when there is a problem. The checks are the data card's format (training/DATA_CARD.md).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import date, datetime
from pathlib import Path

LABELS = ("replaces", "corrects", "ends", "restates", "adds", "unrelated", "hypothetical", "forget")
CHANGE_RELATIONS = ("replaces", "corrects", "ends", "forget")
QUESTION_TYPES = ("current", "as_of", "forgotten", "hypothetical", "retracted")
SPEAKERS = ("user", "assistant")


def _side_problems(side: object, where: str) -> list[str]:
    if not isinstance(side, dict):
        return [f"{where}: not an object"]
    out = []
    if side.get("speaker") not in SPEAKERS:
        out.append(f"{where}.speaker must be one of {SPEAKERS}")
    try:
        date.fromisoformat(str(side.get("date")))
    except ValueError:
        out.append(f"{where}.date is not YYYY-MM-DD: {side.get('date')!r}")
    text = side.get("text")
    if not isinstance(text, str) or not text.strip():
        out.append(f"{where}.text is empty")
    return out


def check_pairs(path: Path) -> tuple[list[str], Counter[str]]:
    """Problems of one ``pairs.jsonl`` and its label counts."""
    problems: list[str] = []
    labels: Counter[str] = Counter()
    seen: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            problems.append(f"{path.name}:{n}: not JSON ({exc})")
            continue
        problems += [f"{path.name}:{n}: {p}" for p in _side_problems(row.get("earlier"), "earlier")]
        problems += [f"{path.name}:{n}: {p}" for p in _side_problems(row.get("later"), "later")]
        if row.get("label") not in LABELS:
            problems.append(f"{path.name}:{n}: label {row.get('label')!r} not in {LABELS}")
        else:
            labels[row["label"]] += 1
        try:
            if str(row["later"]["date"]) < str(row["earlier"]["date"]):
                problems.append(f"{path.name}:{n}: later date before earlier date")
        except (KeyError, TypeError):
            pass
        for side in ("earlier", "later"):
            text = str((row.get(side) or {}).get("text", "")).strip().lower()
            if side == "later" and text in seen:
                problems.append(f"{path.name}:{n}: later text repeats an earlier line's")
            seen.add(text)
    return problems, labels


def check_conversation(path: Path) -> list[str]:
    """Problems of one conversation file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        return [f"{path.name}: not JSON ({exc})"]
    problems = []
    turns = raw.get("turns") or []
    if not 40 <= len(turns) <= 80:
        problems.append(f"{path.name}: {len(turns)} turns (40-80 wanted)")
    last = ""
    kinds: Counter[str] = Counter()
    texts = " ".join(str(t.get("text", "")) for t in turns).lower()
    for i, t in enumerate(turns):
        if t.get("speaker") not in SPEAKERS:
            problems.append(f"{path.name}: turn {i}: speaker must be one of {SPEAKERS}")
        if not str(t.get("text", "")).strip():
            problems.append(f"{path.name}: turn {i}: empty text")
        try:
            datetime.fromisoformat(str(t.get("time")).replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{path.name}: turn {i}: time is not ISO-8601: {t.get('time')!r}")
        if str(t.get("time")) < last:
            problems.append(f"{path.name}: turn {i}: time goes backwards")
        last = str(t.get("time"))
        for rel in t.get("relations") or []:
            kind, target = rel.get("relation"), rel.get("target")
            if kind not in CHANGE_RELATIONS:
                problems.append(f"{path.name}: turn {i}: relation {kind!r} not in {CHANGE_RELATIONS}")
            kinds[str(kind)] += 1
            if not isinstance(target, int) or not 0 <= target < i:
                problems.append(f"{path.name}: turn {i}: target {target!r} is not an earlier turn index")
    if sum(kinds.values()) < 10:
        problems.append(f"{path.name}: {sum(kinds.values())} annotated changes (at least 10 wanted)")
    qs = raw.get("questions") or []
    if not 8 <= len(qs) <= 14:
        problems.append(f"{path.name}: {len(qs)} questions (8-12 wanted)")
    for q in qs:
        if q.get("type") not in QUESTION_TYPES:
            problems.append(f"{path.name}: question {q.get('id')}: type {q.get('type')!r}")
        if q.get("type") == "as_of" and not q.get("as_of"):
            problems.append(f"{path.name}: question {q.get('id')}: as_of question without as_of")
        for s in list(q.get("accept") or []) + list(q.get("replaced") or []):
            if str(s).lower() not in texts:
                problems.append(f"{path.name}: question {q.get('id')}: {s!r} appears in no turn")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m training.validate_corpus FOLDER")
        return 2
    folder = Path(argv[0])
    problems: list[str] = []
    pairs = folder / "pairs.jsonl"
    labels: Counter[str] = Counter()
    if pairs.exists():
        found, labels = check_pairs(pairs)
        problems += found
    else:
        problems.append("pairs.jsonl missing")
    convs = sorted((folder / "conversations").glob("*.json"))
    if len(convs) < 4:
        problems.append(f"{len(convs)} conversations (4 wanted)")
    for c in convs:
        problems += check_conversation(c)
    allowed = {folder / "pairs.jsonl", folder / "conversations", *convs}
    stray = sorted(p for p in folder.rglob("*") if p not in allowed)
    problems += [f"remove {p} when you are done (only pairs.jsonl and conversations/*.json belong here)" for p in stray]
    for line in problems[:200]:
        print(line)
    print(f"pairs: {sum(labels.values())} {dict(labels)}; conversations: {len(convs)}")
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
