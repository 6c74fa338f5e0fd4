"""The exact knapsack against brute force on random small cases, and its speed."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_graph.knapsack import knapsack


def brute_force(values: list[float], weights: list[int], budget: int, limit: int | None) -> float:
    best = 0.0
    for r in range(len(values) + 1):
        if limit is not None and r > limit:
            break
        for combo in itertools.combinations(range(len(values)), r):
            if sum(weights[i] for i in combo) <= budget:
                best = max(best, sum(values[i] for i in combo))
    return best


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(st.tuples(st.floats(-0.5, 1.0, allow_nan=False), st.integers(0, 40)), max_size=9),
    budget=st.integers(0, 80),
    limit=st.one_of(st.none(), st.integers(0, 6)),
)
def test_matches_brute_force(items: list[tuple[float, int]], budget: int, limit: int | None) -> None:
    values = [v for v, _ in items]
    weights = [w for _, w in items]
    chosen = knapsack(values, weights, budget, limit)
    assert sum(weights[i] for i in chosen) <= budget
    assert limit is None or len(chosen) <= limit
    assert len(set(chosen)) == len(chosen)
    assert sum(values[i] for i in chosen) == pytest.approx(brute_force(values, weights, budget, limit), abs=1e-6)


def test_not_greedy() -> None:
    # greedy by value per token takes item 0 (0.6/16) and then nothing else fits; the optimum is 1+2
    assert knapsack([0.6, 0.5, 0.5], [16, 15, 15], 30) == [1, 2]


def test_errors() -> None:
    with pytest.raises(ValueError):
        knapsack([1.0], [1, 2], 10)
    with pytest.raises(ValueError):
        knapsack([1.0], [-1], 10)
    with pytest.raises(ValueError):
        knapsack([1.0], [1], -1)


def test_under_a_millisecond_for_100_items() -> None:
    import random

    rng = random.Random(0)
    values = [rng.random() for _ in range(100)]
    weights = [rng.randint(8, 40) for _ in range(100)]
    knapsack(values, weights, 400, 12)
    timings = []
    for _ in range(30):
        start = time.perf_counter()
        knapsack(values, weights, 400, 12)
        timings.append(time.perf_counter() - start)
    best_ms = min(timings) * 1000  # the best of 30: other processes on a loaded machine only add time
    assert best_ms < 5.0  # design target 1 ms; generous bound for loaded CI machines
