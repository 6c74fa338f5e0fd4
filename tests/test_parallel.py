"""Reads run side by side (``memory_graph.parallel``, issue 22): results in the order asked, every read
waited for before an error is raised again, and a search's answer the same as read one part after another."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fakes import StemBagEmbedder

from memory_graph import Memory, parallel
from memory_graph.store.index import PARTS


def test_results_come_in_the_order_asked_and_the_first_call_runs_in_the_caller() -> None:
    caller = threading.get_ident()
    threads: list[int] = []

    def call(n: int, delay: float) -> int:
        threads.append(threading.get_ident())
        time.sleep(delay)
        return n

    assert parallel.side_by_side([lambda: call(1, 0.0), lambda: call(2, 0.05), lambda: call(3, 0.0)]) == [1, 2, 3]
    assert threads.count(caller) == 1
    assert parallel.side_by_side([]) == [] and parallel.side_by_side([lambda: 7]) == [7]


def test_an_error_is_raised_only_after_every_read_ended() -> None:
    finished = threading.Event()

    def slow() -> None:
        time.sleep(0.1)
        finished.set()

    def fail() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError):
        parallel.side_by_side([fail, slow])
    assert finished.is_set()  # the slow read did not outlive the call
    with pytest.raises(KeyError):
        parallel.side_by_side([slow, fail])


def test_the_parts_read_side_by_side_give_what_one_part_after_another_gives(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="dana") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        for i, text in enumerate(["I live in Porto.", "I moved to Lisbon.", "My cat is Tom.", "I play chess on Sundays."]):
            mem.observe(text, time=f"2024-0{i + 1}-01")
        vector = mem.store.embed(["where do I live?"])[0]
        with mem.store.session():
            index = mem.store.index
            together = parallel.side_by_side([lambda p=p: index.nearest("dana", p, vector, 10) for p in PARTS])
            alone = [index.nearest("dana", p, vector, 10) for p in PARTS]
            ids = [i for hits in alone for i, _ in hits]
            assert together == alone and ids
            stored = index.vectors("dana", ids)
            assert set(stored) == set(ids)
            for part in PARTS:
                one = index.vectors("dana", ids, (part,))
                assert all(np.array_equal(one[i], stored[i]) for i in one)
