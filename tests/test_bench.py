"""The speed benchmark (issue 22): LoCoMo turns really loaded, distinct queries, systems interleaved, every figure
it promises reported, regressions held to the committed result, and README.md's table rendered from it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evals import bench, bench_peers
from evals.locomo import load_folder

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
needs_locomo = pytest.mark.skipif(not any(LOCOMO.glob("*.json")), reason=f"no LoCoMo files in {LOCOMO}")


@needs_locomo
def test_every_locomo_turn_is_loaded_and_fed_in_order() -> None:
    texts = bench.locomo_texts(LOCOMO)
    assert len(texts) == sum(len(c.turns) for c in load_folder(LOCOMO)) > 1000
    turns = list(bench.generated_turns(2 * len(texts) + 10, locomo=texts))
    assert [t["text"] for t in turns[1 : 2 * len(texts) : 2]] == texts  # every other turn, none repeated
    assert len({t["ref"] for t in turns}) == len(turns) and turns[0]["time"] < turns[-1]["time"]


def test_both_locomo_layouts_are_read(tmp_path: Path) -> None:
    session = {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "A", "dia_id": "D1:1", "text": "I adopted a cat."},
            {"speaker": "B", "dia_id": "D1:2", "text": "What is its name?"},
        ],
    }
    (tmp_path / "a.json").write_text(json.dumps({**session, "qa": []}), encoding="utf-8")
    (tmp_path / "b.json").write_text(
        json.dumps(
            {
                "conversation": session,
                "qa": [
                    {"question": "What did A adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4}
                ],
            }
        ),
        encoding="utf-8",
    )
    assert bench.locomo_texts(tmp_path) == ["I adopted a cat.", "What is its name?"] * 2
    assert bench.locomo_questions(tmp_path) == ["What did A adopt?"]
    assert bench.locomo_texts(None) == [] and bench.locomo_texts(tmp_path / "missing") == []


def test_queries_are_distinct_and_never_a_stored_turn() -> None:
    turns = [t["text"] for t in bench.generated_turns(2000)]
    loco = ["Where did Caroline move?", "When did Melanie paint a sunrise?"] * 3
    pool = bench.query_pool(700, loco, exclude=turns + ["Where does Ana work?"])
    assert len(pool) == len(set(pool)) == 700 and not set(pool) & set(turns)
    assert "Where does Ana work?" not in pool and {
        "Where did Caroline move?",
        "When did Melanie paint a sunrise?",
    } < set(pool)
    with pytest.raises(ValueError):
        bench.query_pool(100_000)


def test_each_system_goes_first_equally_often() -> None:
    names = bench.RETRIEVERS
    rounds = [bench_peers.rotation(names, i) for i in range(3 * len(names))]
    assert all(sorted(r) == sorted(names) for r in rounds)
    assert set(Counter(r[0] for r in rounds).values()) == {3} and set(
        Counter(r[-1] for r in rounds).values()
    ) == {3}


def test_langgraph_stores_take_a_batch_that_repeats_a_text(tmp_path: Path) -> None:
    from memory_graph.embeddings import get_embedder

    turns = [{"text": text, "time": "2023-01-01T00:00:00Z", "ref": f"r{i}"} for i, text in enumerate("abab")]
    for peer in (
        bench_peers.inmemory_peer(get_embedder("")),
        bench_peers.sqlite_peer(tmp_path, get_embedder("")),
    ):
        peer.add_batch(turns)
        assert sorted(item.key for item in peer.query("a")) == ["r0", "r1", "r2", "r3"]
        peer.close()


def test_a_small_run_reports_every_system_and_ratio(tmp_path: Path) -> None:
    result = bench.run(
        (140,),
        LOCOMO if LOCOMO.is_dir() else None,
        tmp_path,
        agent_turns=3,
        recall_queries=3,
        rss_queries=2,
        ask_runs=1,
    )
    row = result["rows"][0]
    assert row["size"] == 140 and row["turns_stored"] == 143 and row["memories"] > 0
    for name in bench.INGESTERS:
        assert row["batch"][name]["turns"] == 40 and row["batch"][name]["turns_per_s"] > 0
        assert row["agent"][name]["turns"] == 3 and row["agent"][name]["p50_ms"] > 0
    for name in bench.RETRIEVERS:
        assert (
            row["recall"][name]["n"] == 3
            and row["recall"][name]["p95_ms"] >= row["recall"][name]["p50_ms"] > 0
        )
        assert row["recall_after_write_p50_ms"][name] > 0
    assert set(row["rss_mb"]) == {"memory-graph", "chroma", "sqlite"} and min(row["rss_mb"].values()) > 50
    assert row["ask"]["memory-graph"]["median_s"] > 0 and row["ask"]["chroma"]["median_s"] > 0
    assert (
        row["disk_mb"]["inmemory"] is None
        and row["disk_mb"]["memory-graph"] > 0
        and row["disk_mb"]["sqlite"] > 0
    )
    assert {t["key"] for t in bench.TARGETS} | {"recall_vs_filtered_floor", "observe_vs_sqlite"} <= set(
        row["ratios"]
    )
    assert result["config"]["queries_distinct"] == result["config"]["queries_used"] == 1 + 3 + 3 + 2 + 1
    assert result["config"]["locomo_turns"] == (len(bench.locomo_texts(LOCOMO)) if LOCOMO.is_dir() else 0)
    assert (
        json.loads((tmp_path / "bench.json").read_text(encoding="utf-8"))["rows"][0]["ratios"]
        == row["ratios"]
    )
    table = (tmp_path / "bench.md").read_text(encoding="utf-8")
    assert "| 140 turns | 1,000 turns | 10,000 turns | 100,000 turns |" in table and "not run" in table
    assert all(t["met"] is None for t in result["targets"])  # no target size was measured


def test_a_regression_is_a_cpu_ratio_well_past_its_target_or_the_committed_one() -> None:
    def result(**cpu: float) -> dict[str, Any]:
        return {"rows": [{"size": 1000, "ratios": {k: 100.0 for k in cpu}, "cpu_ratios": cpu}]}

    baseline = result(observe_vs_chroma=4.0, recall_vs_unfiltered_floor=1.0)
    assert not bench.regressions(result(observe_vs_chroma=5.9, recall_vs_unfiltered_floor=2.9), baseline)
    assert bench.regressions(result(observe_vs_chroma=6.1), baseline)  # 1.5 x the committed 4.0
    assert bench.regressions(result(recall_vs_unfiltered_floor=3.1), baseline)  # 1.5 x the target 2.0
    assert bench.regressions(result(rss_vs_chroma=1.9))  # no baseline: 1.5 x the target 1.2
    assert not bench.regressions(result(observe_vs_sqlite=100.0))  # not held
    wall_only = {"rows": [{"size": 1000, "ratios": {"observe_vs_chroma": 100.0}, "cpu_ratios": {}}]}
    assert not bench.regressions(wall_only, baseline)  # wall time moves with the load: not held


def test_the_readme_table_is_the_committed_result() -> None:
    committed = json.loads(bench.BASELINE.read_text(encoding="utf-8"))
    assert committed["version"] == 2 and committed["config"]["locomo_turns"] > 0 and not committed["dirty"]
    assert bench.readme_table() == bench.markdown(committed)


@pytest.mark.server
def test_the_server_backend_is_measured_the_same_way(servers: Any) -> None:
    result = bench.run(
        (130,),
        None,
        None,
        agent_turns=2,
        recall_queries=2,
        database_url=servers.new_database(),
        chroma_url=servers.chroma_url,
    )
    row = result["rows"][0]
    assert row["memories"] > 0 and row["ratios"]["recall_vs_unfiltered_floor"] > 0 and row["rss_mb"] == {}
    assert row["ratios"]["observe_many_vs_chroma"] > 0 and row["ratios"]["observe_vs_chroma"] > 0
