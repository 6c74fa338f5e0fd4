"""Exact 0/1 knapsack with a count limit: choose items maximising total value under a token budget.

Dynamic programming over (items chosen, tokens used), vectorised with NumPy: O(n * K * B) time where n is
the number of candidates (<= 100), K the count limit and B the budget in tokens. Exact, unlike the greedy
value-per-token heuristic (ReMem uses 0/1 knapsack with a word-count proxy; here weights are real tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd

import numpy as np


def knapsack(values: Sequence[float], weights: Sequence[int], budget: int, max_items: int | None = None) -> list[int]:
    """Indices (ascending) of the subset with the largest total value whose weights sum to <= ``budget``
    and whose size is <= ``max_items``. Items with value <= 0 are never chosen; ties prefer fewer tokens.

    Args:
        values: expected usefulness of each item (any real number).
        weights: cost of each item in tokens (non-negative integers).
        budget: token budget (>= 0).
        max_items: count limit (None = no limit).

    Raises:
        ValueError: lengths differ, a weight is negative, or the budget is negative.
    """
    if len(values) != len(weights):
        raise ValueError("values and weights must have the same length")
    if budget < 0:
        raise ValueError("budget must be >= 0")
    if any(w < 0 for w in weights):
        raise ValueError("weights must be >= 0")
    items = [i for i, (v, w) in enumerate(zip(values, weights, strict=True)) if v > 0 and w <= budget]
    if not items:
        return []
    limit = len(items) if max_items is None else min(max_items, len(items))
    if limit <= 0:
        return []
    g = 0
    for i in items:
        g = gcd(g, int(weights[i]))
    g = max(g, 1)
    cap = budget // g
    w = np.array([int(weights[i]) // g for i in items], dtype=np.int64)
    # tiny tie-break: among equal values prefer fewer tokens
    v = np.array([float(values[i]) for i in items], dtype=np.float64) - 1e-9 * w
    neg = -np.inf
    dp = np.full((limit + 1, cap + 1), neg)
    dp[0, :] = 0.0
    keep = np.zeros((len(items), limit + 1, cap + 1), dtype=bool)
    for idx in range(len(items)):
        wi, vi = int(w[idx]), v[idx]
        candidate = np.full_like(dp, neg)
        candidate[1:, wi:] = dp[:-1, : cap + 1 - wi] + vi
        better = candidate > dp
        keep[idx] = better
        dp = np.where(better, candidate, dp)
    k, c = np.unravel_index(int(np.argmax(dp)), dp.shape)
    chosen: list[int] = []
    for idx in range(len(items) - 1, -1, -1):
        if keep[idx, k, c]:
            chosen.append(items[idx])
            k -= 1
            c -= int(w[idx])
    return sorted(chosen)
