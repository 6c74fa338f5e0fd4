"""Can a paraphrased update be linked offline? A study on the supersession generator's TRAIN seeds.

For every statement of an ODR scenario, each live statement before it (the latest version of every other
chain, and the true predecessor) is a candidate pair. The scores are MiniLM cosines of the whole texts
(``text``), of the topic frames (``frame``, ``topic_frame`` below: the removed topic-frame linker's) and of the texts with their values
masked (``masked``). For each wording of the new statement the study prints how often the true predecessor
is the best-scoring candidate, and, for thresholds on the best score, how many updates would be linked
correctly and how many first mentions ("decide": nothing to replace) would be linked wrongly.

Run: ``python -m evals.paraphrase_study --seed 0 --scenarios 60`` (train seeds only; about 40 s).
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from wordfreq import zipf_frequency

from evals.common import TRAIN_SEEDS
from evals.supersession import generate
from memory_graph.embeddings import Embedder, get_embedder

# The topic frame and value tokens of the topic-frame linker this study measured (issue 20 replaced that linker by
# the update model and removed it from memory_graph/linking.py; the study keeps its own copy of what it measures).
COMMON_WORD_ZIPF = 3.8


def topic_frame(text: str) -> str:
    """The topic words of a statement: names, products, numbers (the values) and stop words removed
    (scikit-learn's English stop-word list), e.g. "We use Postgres for the billing database" -> "use billing database"."""
    masked = re.sub(r"\b[A-Z][\w.+#-]*|(?<![\w'-])[\w-]*\d[\w.-]*", " ", text)
    words = [w for w in re.findall(r"[a-z][a-z'-]+", masked.lower()) if w not in ENGLISH_STOP_WORDS]
    return " ".join(words)


def _values(text: str) -> set[str]:
    """The value tokens of a statement: names, products, versions (capitalised or with digits/inner capitals).
    A sentence-initial capitalised word counts only when it is not a common English word (wordfreq Zipf
    frequency below COMMON_WORD_ZIPF), so "Sorry", "Wow" or "Billing" are not values but "Kafka" is."""
    values: set[str] = set()
    for m in re.finditer(r"(?<![\w'-])(?:[A-Z][\w.+#-]*|[\w-]*\d[\w.-]*)", text):
        token = m.group(0).rstrip(".")
        initial = m.start() == len(text) - len(text.lstrip()) or text[: m.start()].rstrip().endswith((".", ":", "!", "?"))
        plain = token[1:].islower() and token.isalpha()
        if initial and plain and zipf_frequency(token.lower(), "en") >= COMMON_WORD_ZIPF:
            continue
        values.add(token.lower())
    return values


SCORES = ("text", "frame", "masked")
KINDS = ("decide", "restate", "change", "plain", "paraphrase")


def _masked(text: str) -> str:
    for value in sorted(_values(text), key=len, reverse=True):
        text = re.sub(re.escape(value), " ", text, flags=re.I)
    return re.sub(r"\s+", " ", text).strip() or "-"


def candidate_pairs(seed: int, n: int) -> list[dict[str, Any]]:
    """One row per (new statement, earlier live statement) of the first ``n`` ODR scenarios of ``seed``."""
    rows: list[dict[str, Any]] = []
    for sc in generate(seed, n, 0):
        live: dict[str, Any] = {}
        for st in sc.statements:
            if st.chain is None:
                continue
            rows.extend({"new": (sc.id, st.turn.text), "old": old.turn.text, "kind": st.kind, "y": chain == st.chain}
                        for chain, old in live.items())
            live[st.chain] = st
    return rows


def score(rows: list[dict[str, Any]], embedder: Embedder) -> None:
    """Add the three cosines to each row."""
    texts = sorted({r["new"][1] for r in rows} | {r["old"] for r in rows})
    index = {t: i for i, t in enumerate(texts)}
    views = {"text": texts, "frame": [topic_frame(t) or "-" for t in texts], "masked": [_masked(t) for t in texts]}
    for name, view in views.items():
        vectors = embedder.embed(view)
        for r in rows:
            r[name] = float(vectors[index[r["new"][1]]] @ vectors[index[r["old"]]])


def report(rows: list[dict[str, Any]]) -> str:
    """Markdown: argmax accuracy per wording, and linked-right / linked-wrong counts per threshold."""
    by_new: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_new[r["new"]].append(r)
    out = ["| score | " + " | ".join(f"{k}: best is true predecessor" for k in KINDS[1:]) + " |",
           "|---" * (len(KINDS)) + "|"]
    for name in SCORES:
        cells = []
        for kind in KINDS[1:]:
            groups = [g for g in by_new.values() if g[0]["kind"] == kind]
            cells.append(f"{sum(max(g, key=lambda r: r[name])['y'] for g in groups)}/{len(groups)}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "| score >= threshold | " + " | ".join(f"{k} right / wrong" if k != "decide" else "decide wrong (first mentions)"
                                                     for k in KINDS) + " |", "|---" * (len(KINDS) + 1) + "|"]
    for name in SCORES:
        for threshold in np.arange(0.4, 0.81, 0.1):
            cells = []
            for kind in KINDS:
                best = [max(g, key=lambda r: r[name]) for g in by_new.values() if g[0]["kind"] == kind]
                right = sum(b[name] >= threshold and b["y"] for b in best)
                wrong = sum(b[name] >= threshold and not b["y"] for b in best)
                cells.append(f"{wrong}/{len(best)}" if kind == "decide" else f"{right} / {wrong} of {len(best)}")
            out.append(f"| {name} >= {threshold:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=TRAIN_SEEDS[0], help="a TRAIN seed of the generator")
    parser.add_argument("--scenarios", type=int, default=60, help="ODR scenarios to read")
    args = parser.parse_args(argv)
    if args.seed not in TRAIN_SEEDS:
        parser.error(f"--seed must be a train seed ({TRAIN_SEEDS[0]}-{TRAIN_SEEDS[-1]})")
    rows = candidate_pairs(args.seed, args.scenarios)
    score(rows, get_embedder(""))
    print(f"Paraphrase study, train seed {args.seed}, {args.scenarios} ODR scenarios, {len(rows)} pairs\n")
    print(report(rows))


if __name__ == "__main__":
    main()
