"""Usefulness model study: does P(memory helps | features at recall time) beat similarity alone?

    python -m evals.usefulness_model [--train 0-9] [--dev 100-104] [--out evals/results]

Traces: ``memory_graph`` with the heuristic usefulness (the behaviour policy) plays the outcome suite's worlds (all eight families, position reader) on TRAIN seeds
and, separately, on DEV seeds, exactly as ``memory-graph eval outcome`` does (feedback after every episode, so
the posteriors learn). For every item shown, the features it had *at recall time* are recorded, before that
episode's feedback, with the label "credited": the reader used it and the answer was right.

Features: ``memory_graph.usefulness.FEATURES``, as the recall record kept them for each candidate — static
(cosine similarity, rank among the candidates, gap to the best similarity, recency against the pool's newest
candidate, extraction confidence, tokens), outcome (Beta posterior mean and spread for the task class,
overall mean, blame rate) and contradiction (stale, contested).

Models, all scikit-learn logistic regressions fitted on the TRAIN traces and scored on the DEV traces:
``similarity`` (similarity alone, calibrated by the regression), ``heuristic`` (the shipped transparent score,
``memory_graph.usefulness``, calibrated the same way) and ``logistic`` (all features, standardised). Reported:
ROC AUC, Brier score and expected calibration error (10 equal-width bins), and a reliability plot.
Test seeds are never read.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evals.common import DEV_SEEDS, TRAIN_SEEDS, parse_seeds
from evals.outcome import FAMILIES, make_world, play_world
from memory_graph.usefulness import FEATURES


def shown_features(recall: Any) -> list[list[float]]:
    """The ``memory_graph.usefulness.FEATURES`` rows the recall record kept for the items it showed."""
    by_id = {c["id"]: c["features"] for c in recall.candidates}
    return [list(by_id[it.id]) for it in recall.items]


def traces(seeds: Sequence[int], workdir: Path, families: Sequence[str] = FAMILIES) -> dict[str, np.ndarray]:
    """Play ``families`` of ``seeds`` with ``memory_graph`` and return ``{"x", "y", "heuristic"}`` arrays:
    one feature row (len(FEATURES)), label (1 = credited) and shipped heuristic score per item shown."""
    from evals.systems import MemoryGraphSystem

    system = MemoryGraphSystem(workdir, overrides={"usefulness": "heuristic"})  # the behaviour policy of the traces
    xs: list[list[float]] = []
    ys: list[int] = []
    heur: list[float] = []
    try:
        for seed in seeds:
            for family in families:
                for ep in play_world(system, make_world(seed, family), "position"):
                    recall, verdict = system.last_recall, ep.verdict
                    for i, (row, it) in enumerate(zip(shown_features(recall), recall.items, strict=True)):
                        xs.append(row)
                        ys.append(int(verdict.success and verdict.picked == i))
                        heur.append(float(it.score))
                    used = [ep.result.items[verdict.picked].id] if verdict.picked is not None else []
                    system.feedback(ep.result.id, verdict.success, used)
    finally:
        system.close()
    return {"x": np.asarray(xs, dtype=np.float64), "y": np.asarray(ys, dtype=np.int64),
            "heuristic": np.asarray(heur, dtype=np.float64)}


def expected_calibration_error(y: np.ndarray, p: np.ndarray, bins: int = 10) -> float:
    """Mean |observed rate - mean prediction| over equal-width probability bins, weighted by bin size."""
    if len(y) == 0:
        return 0.0
    idx = np.minimum((p * bins).astype(int), bins - 1)
    err = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            err += sel.sum() / len(y) * abs(float(y[sel].mean()) - float(p[sel].mean()))
    return err


def study(train: dict[str, np.ndarray], dev: dict[str, np.ndarray]) -> dict[str, Any]:
    """Fit the three models on ``train`` traces and score them on ``dev`` traces."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import brier_score_loss, roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    inputs = {
        "similarity": (train["x"][:, :1], dev["x"][:, :1]),
        "heuristic": (train["heuristic"][:, None], dev["heuristic"][:, None]),
        "logistic": (train["x"], dev["x"]),
    }
    out: dict[str, Any] = {"models": {}, "train_items": len(train["y"]), "dev_items": len(dev["y"]),
                           "train_positive_rate": float(train["y"].mean()), "dev_positive_rate": float(dev["y"].mean())}
    for name, (x_tr, x_dev) in inputs.items():
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)).fit(x_tr, train["y"])
        p = model.predict_proba(x_dev)[:, 1]
        entry: dict[str, Any] = {"auc": float(roc_auc_score(dev["y"], p)), "brier": float(brier_score_loss(dev["y"], p)),
                                 "ece": expected_calibration_error(dev["y"], p), "predictions": p.tolist()}
        if name == "logistic":
            scaler, lr = model[0], model[-1]
            entry["coefficients"] = {f: round(float(c), 3) for f, c in zip(FEATURES, lr.coef_[0], strict=True)}
            entry["constants"] = (tuple(round(float(v), 4) for v in scaler.mean_),
                                  tuple(round(float(v), 4) for v in scaler.scale_),
                                  tuple(round(float(v), 4) for v in lr.coef_[0]), round(float(lr.intercept_[0]), 4))
        out["models"][name] = entry
    return out


def reliability_plot(result: dict[str, Any], y: np.ndarray, path: Path) -> None:
    """Observed credited rate against predicted probability (10 bins) per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", label="perfect")
    for name, entry in result["models"].items():
        p = np.asarray(entry["predictions"])
        idx = np.minimum((p * 10).astype(int), 9)
        xs = [float(p[idx == b].mean()) for b in range(10) if (idx == b).any()]
        ys = [float(y[idx == b].mean()) for b in range(10) if (idx == b).any()]
        ax.plot(xs, ys, marker="o", label=f"{name} (AUC {entry['auc']:.3f})")
    ax.set_xlabel("predicted P(credited)")
    ax.set_ylabel("observed credited rate (dev seeds)")
    ax.set_title("Usefulness model calibration")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(result: dict[str, Any]) -> str:
    """Markdown table of the study."""
    lines = ["| model | AUC | Brier | ECE |", "|---|---|---|---|"]
    for name, e in result["models"].items():
        lines.append(f"| {name} | {e['auc']:.3f} | {e['brier']:.4f} | {e['ece']:.4f} |")
    coef = result["models"]["logistic"].get("coefficients", {})
    lines.append("")
    lines.append(f"Items shown: train {result['train_items']} (credited {result['train_positive_rate']:.3f}), "
                 f"dev {result['dev_items']} (credited {result['dev_positive_rate']:.3f}).")
    lines.append("Logistic coefficients (standardised features): " + ", ".join(f"{k} {v:+.2f}" for k, v in coef.items()))
    if "constants" in result["models"]["logistic"]:
        lines.append("")
        lines.append(f"`memory_graph.usefulness.LOGISTIC` = `{result['models']['logistic']['constants']}`")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import json
    import time

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", default=f"{TRAIN_SEEDS[0]}-{TRAIN_SEEDS[9]}")
    ap.add_argument("--dev", default=f"{DEV_SEEDS[0]}-{DEV_SEEDS[4]}")
    ap.add_argument("--out", default="evals/results")
    args = ap.parse_args(argv)
    train_seeds, dev_seeds = parse_seeds(args.train, ()), parse_seeds(args.dev, ())
    if set(train_seeds) - set(TRAIN_SEEDS) or set(dev_seeds) - set(DEV_SEEDS):
        ap.error("--train must be TRAIN seeds and --dev DEV seeds (evals/common.py)")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        train, dev = traces(train_seeds, Path(tmp) / "train"), traces(dev_seeds, Path(tmp) / "dev")
    result = study(train, dev)
    out = Path(args.out) / "usefulness"
    out.mkdir(parents=True, exist_ok=True)
    reliability_plot(result, dev["y"], out / "calibration.png")
    command = f"python -m evals.usefulness_model --train {args.train} --dev {args.dev}"
    md = f"# Usefulness model study\n\n`{command}` ({time.perf_counter() - started:.0f} s)\n\n{table(result)}\n"
    (out / "table.md").write_text(md, encoding="utf-8")
    for entry in result["models"].values():
        entry.pop("predictions")
    (out / "results.json").write_text(json.dumps({"command": command, **result}, indent=2), encoding="utf-8")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
