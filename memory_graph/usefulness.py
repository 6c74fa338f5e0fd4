"""Predicted usefulness of a memory at recall time: P(memory helps | features), the knapsack's value.

The transparent heuristic (documented weights; relevance gates everything, so an irrelevant memory is
never chosen however helpful it was elsewhere):

    relevance = clip((sim - (best_sim - 0.35)) / 0.35, 0, 1)      # cosine similarity relative to the pool's best
    u = relevance * (0.35 + 0.45 * helpfulness + 0.10 * confidence + 0.05 * recency + 0.10 * ucb)
        - 0.15 * contested
  helpfulness: Beta posterior mean of "credited when shown" (task class when it has evidence, else overall)
  ucb:         posterior standard deviation (exploration bonus, large for memories with little evidence)
  recency:     0.5 ** (age_days / 180), age from valid_from to now (or to as_of)
  confidence:  extraction confidence, raised by corroboration

The Beta posterior starts at Beta(1, 1); a credit adds its weight to alpha, a blame to beta, and a
showing without credit adds 0.25 to beta (exposure without reward, after ReMem's credit model).
Retrieval frequency alone never raises usefulness.

The learned alternative (``Context.usefulness="logistic"``): ``relevance * P(credited | features)``, a
logistic model over ``FEATURES`` (static: similarity, rank, gap to the best, recency against the pool's
newest candidate, confidence, tokens; outcome: task-class posterior mean and spread, overall mean, blame
rate; contradiction: stale, contested), fitted with scikit-learn on traces of the outcome worlds' TRAIN seeds
by ``python -m evals.usefulness_model`` (which prints ``LOGISTIC`` and scores it on DEV seeds against
similarity alone and the heuristic). Every recall record keeps each candidate's features.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

W_BASE, W_HELP, W_CONF, W_RECENCY, W_UCB, W_CONTESTED = 0.35, 0.45, 0.10, 0.05, 0.10, 0.15
RELEVANCE_WINDOW = 0.35
UNREWARDED_WEIGHT = 0.25


@dataclass(frozen=True)
class Posterior:
    """Beta(alpha, beta) belief that a memory helps when shown."""

    alpha: float = 1.0
    beta: float = 1.0

    @classmethod
    def from_stats(cls, credited: float, blamed: float, unrewarded: float) -> Posterior:
        return cls(1.0 + credited, 1.0 + blamed + UNREWARDED_WEIGHT * unrewarded)

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    @property
    def std(self) -> float:
        a, b = self.alpha, self.beta
        return math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))


def posterior_for(stats: dict[str, dict[str, float]] | None, task: str | None) -> Posterior:
    """The posterior for ``task``'s class when it has evidence, else the overall one."""
    if not stats:
        return Posterior()
    chosen = stats.get(task or "") if task else None
    if not chosen or (chosen["credited"] + chosen["blamed"] + chosen["unrewarded"]) == 0:
        chosen = stats.get("", {"credited": 0, "blamed": 0, "unrewarded": 0})
    return Posterior.from_stats(chosen["credited"], chosen["blamed"], chosen["unrewarded"])


def usefulness(
    relevance: float, posterior: Posterior, confidence: float, age_days: float, contested: bool, learning: bool = True
) -> float:
    """Expected usefulness in [-0.15, 1] of one candidate (see module docstring for the weights)."""
    help_mean = posterior.mean if learning else 0.5
    ucb = posterior.std if learning else 0.0
    recency = 0.5 ** (max(age_days, 0.0) / 180.0)
    gain = W_BASE + W_HELP * help_mean + W_CONF * confidence + W_RECENCY * recency + W_UCB * ucb
    return relevance * gain - (W_CONTESTED if contested else 0.0)


def relevance(similarity: float, best: float) -> float:
    """Similarity relative to the best candidate of the pool, in [0, 1] (window ``RELEVANCE_WINDOW``)."""
    return min(1.0, max(0.0, (similarity - (best - RELEVANCE_WINDOW)) / RELEVANCE_WINDOW))


FEATURES = ("similarity", "rank", "gap", "recency", "confidence", "tokens", "help_task", "spread_task", "help_overall",
            "blame_rate", "stale", "contested")
# (feature means, feature scales, coefficients on standardised features, intercept), from
# `python -m evals.usefulness_model` (train seeds 0-9 of the outcome worlds); see evals/README.md.
LOGISTIC: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], float] = (
    (0.7652, 0.3607, 0.0207, 0.7693, 0.5808, 22.3669, 0.5957, 0.2214, 0.5971, 0.0664, 0.0, 0.0),
    (0.0926, 1.196, 0.0715, 0.103, 0.1914, 1.6831, 0.1972, 0.0753, 0.196, 0.2435, 1.0, 1.0),
    (0.6692, -0.2953, -0.7924, 0.4292, 0.0546, -0.0075, 2.3369, 2.0231, 1.227, -0.1888, 0.0, 0.0),
    0.721,
)


def features(
    similarity: float, best: float, rank: int, age_days: float, confidence: float, tokens: int,
    stats: dict[str, dict[str, float]] | None, task: str | None, stale: bool, contested: bool,
) -> list[float]:
    """The ``FEATURES`` row of one candidate at recall time. ``age_days``: days before the pool's newest
    candidate; ``stats``: the ledger statistics by task class ('' = overall), None when not learning."""
    overall = (stats or {}).get("") or {"credited": 0.0, "blamed": 0.0, "unrewarded": 0.0, "shown": 0.0}
    p_task = posterior_for(stats, task)
    p_all = Posterior.from_stats(overall["credited"], overall["blamed"], overall["unrewarded"])
    return [
        similarity, float(rank), best - similarity, 0.5 ** (max(age_days, 0.0) / 180.0), confidence, float(tokens),
        p_task.mean, p_task.std, p_all.mean, overall["blamed"] / max(1.0, overall.get("shown", 0.0)),
        float(stale), float(contested),
    ]


def learned_usefulness(row: list[float], rel: float) -> float:
    """``rel * P(credited | row)`` under the ``LOGISTIC`` model (relevance gates it, as in the heuristic)."""
    mean, scale, coef, intercept = LOGISTIC
    z = intercept + sum(c * (x - m) / (s or 1.0) for x, m, s, c in zip(row, mean, scale, coef, strict=True))
    return rel / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
