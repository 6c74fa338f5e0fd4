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
