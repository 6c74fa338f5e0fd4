"""The usefulness-model study (evals/usefulness_model.py): calibration error, model comparison, traces."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evals.usefulness_model import FEATURES, expected_calibration_error, study, table, traces


def test_ece_is_zero_when_calibrated_and_large_when_not() -> None:
    y = np.array([1, 0, 1, 0])
    assert expected_calibration_error(y, np.full(4, 0.5)) == 0.0
    assert abs(expected_calibration_error(np.zeros(4, dtype=int), np.full(4, 0.9)) - 0.9) < 1e-9
    assert expected_calibration_error(np.array([], dtype=int), np.array([])) == 0.0


def _synthetic(n: int, seed: int) -> dict[str, np.ndarray]:
    """Items whose label follows the task posterior, not similarity (a look-alike world)."""
    r = np.random.default_rng(seed)
    x = r.uniform(0, 1, size=(n, len(FEATURES)))
    y = (x[:, FEATURES.index("help_task")] > 0.5).astype(int)
    return {"x": x, "y": y, "heuristic": r.uniform(0, 1, size=n)}


def test_study_tells_a_learned_model_from_similarity_alone() -> None:
    result = study(_synthetic(400, 0), _synthetic(200, 1))
    models = result["models"]
    assert models["logistic"]["auc"] > 0.95
    assert 0.35 < models["similarity"]["auc"] < 0.65
    assert models["logistic"]["brier"] < models["similarity"]["brier"]
    coef = models["logistic"]["coefficients"]
    assert max(coef, key=lambda k: abs(coef[k])) == "help_task"
    assert "| logistic |" in table(result)


def test_traces_record_features_at_recall_time(tmp_path: Path) -> None:
    t = traces([0], tmp_path, families=["distractor"])
    assert t["x"].shape == (len(t["y"]), len(FEATURES)) and len(t["y"]) > 10
    assert set(np.unique(t["y"])) <= {0, 1} and t["y"].sum() > 0
    sim = t["x"][:, FEATURES.index("similarity")]
    assert (sim <= 1.0001).all() and (t["x"][:, FEATURES.index("rank")] >= 0).all()
    first = t["x"][0]
    assert first[FEATURES.index("help_task")] == 0.5 and first[FEATURES.index("help_overall")] == 0.5  # nothing learned yet
    assert t["x"][:, FEATURES.index("help_task")].max() > 0.5  # credit reached the posteriors later on
