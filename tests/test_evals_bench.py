"""The scale benchmark (issue 13) runs end to end at tiny sizes and reports every ratio it promises."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals import bench


def test_bench_reports_ratios_and_a_plot(tmp_path: Path) -> None:
    turns = list(bench.generated_turns(50, seed=3))
    assert len({t["text"] for t in turns}) > 40 and turns[0]["time"] < turns[-1]["time"]
    result = bench.run((40, 80), data=None, out=tmp_path)
    rows = result["rows"]
    assert [r["size"] for r in rows] == [40, 80] and rows[1]["memories"] >= rows[0]["memories"] > 0
    for row in rows:
        assert row["ingest_vs_chroma"] > 0 and row["recall_vs_floor"] > 0 and row["open_s"] >= 0
        assert row["recall_p95_ms"] >= row["recall_p50_ms"] > 0 and row["disk_bytes_per_memory"] > 0
        assert row["recall_after_write_p50_ms"] > 0 and row["store_rss_mb"] > 50 and row["build_s"] > 0
    assert rows[1]["build_s"] > rows[0]["build_s"]  # from an empty store, so it grows with the size
    assert (tmp_path / "bench.json").is_file() and (tmp_path / "bench.png").stat().st_size > 1000
    worse = {**result, "rows": [{**rows[0], "recall_vs_floor": 100.0}]}
    assert bench.regressions(worse) and not bench.regressions({**result, "rows": [
        {**rows[0], "recall_vs_floor": 1.0, "ingest_vs_chroma": 1.0}]})


def test_a_target_not_met_yet_is_held_to_the_committed_result() -> None:
    baseline = {"rows": [{"size": 10, "recall_vs_floor": 1.2, "ingest_vs_chroma": 3.0}]}
    assert not bench.regressions({"rows": [{"size": 10, "recall_vs_floor": 1.0, "ingest_vs_chroma": 4.0}]}, baseline)
    assert bench.regressions({"rows": [{"size": 10, "recall_vs_floor": 1.0, "ingest_vs_chroma": 4.6}]}, baseline)
    # a met target is held to itself, not to a better recorded figure
    assert not bench.regressions({"rows": [{"size": 10, "recall_vs_floor": 2.2, "ingest_vs_chroma": 1.0}]}, baseline)
    assert bench.regressions({"rows": [{"size": 10, "recall_vs_floor": 2.3, "ingest_vs_chroma": 1.0}]}, baseline)


@pytest.mark.server
def test_the_server_backend_is_measured_the_same_way(servers: Any, tmp_path: Path) -> None:
    result = bench.run((30,), data=None, out=None, database_url=servers.new_database(), chroma_url=servers.chroma_url)
    row = result["rows"][0]
    assert row["memories"] > 0 and row["recall_vs_floor"] > 0 and row["ingest_vs_chroma"] > 0 and row["open_s"] >= 0
