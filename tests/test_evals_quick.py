"""Tiny end-to-end runs of every suite: truth-driven test systems prove the pipelines can report both perfect
and failing scores, and the real systems (baselines + memory_graph when importable) run on small inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from evals import locomo, outcome, supersession
from evals.runner import eval_app, run_suite
from evals.systems import BASELINES, RecalledItem, RecallResult, make_system, memory_graph_available

MG_OK, MG_REASON = memory_graph_available()
REAL = [*BASELINES, "memory_graph"] if MG_OK else list(BASELINES)


@pytest.fixture(autouse=True)
def _one_torch_thread() -> Any:
    """As the eval runner does (``pin_threads``): stable timings on a busy machine; restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class TruthSystem:
    """A test double that answers from the generator's truth: ``oracle`` shows exactly the right item, ``wrong``
    shows only what a broken memory would (replaced decisions, look-alikes, no evidence)."""

    shows_dates = True

    def __init__(self, answer: Any, links: Any = None, name: str = "truth") -> None:
        self.name = name
        self._answer = answer  # (session_id, query, as_of) -> list[RecalledItem]
        self._links = links  # session_id -> set of (new_ref, old_ref)
        self.session: str | None = None
        self.feedbacks: list[tuple[str | None, bool, list[str]]] = []

    def reset(self) -> None:
        self.session = None

    def ingest(self, turns: Any) -> None:
        self.session = turns[0].session_id if turns else None

    def recall(self, query: str, budget: int, as_of: str | None = None, task: str | None = None) -> RecallResult:
        items = self._answer(self.session, query, as_of)
        return RecallResult("r", items, "", sum(i.tokens for i in items), 0, 0.0, self.shows_dates)

    def feedback(self, recall_id: str | None, success: bool, used_ids: Any) -> None:
        self.feedbacks.append((recall_id, success, list(used_ids)))

    def links(self) -> set[tuple[str, str]] | None:
        return self._links(self.session) if self._links else None

    def close(self) -> None:
        pass


def _item(ref: str, time: str | None, text: str = "x") -> RecalledItem:
    return RecalledItem(id=ref, text=text, refs=(ref,), time=time, tokens=5)


# ---- supersession -------------------------------------------------------------------------------------------


def _supersession_doubles(seed: int, n: int) -> tuple[TruthSystem, TruthSystem]:
    scenarios = {s.id: s for s in supersession.generate(seed, n, n)}
    questions = {(s.id, q.text, q.as_of): q for s in scenarios.values() for q in s.questions}

    def answer(good: bool) -> Any:
        def fn(session: str, query: str, as_of: str | None) -> list[RecalledItem]:
            chain = questions[(session, query, as_of)].chain
            held = chain.held_at(as_of) or 0
            picked = [chain.versions[held]] if good else list(chain.versions[:held])
            return [_item(v.ref, v.time, v.value) for v in picked]

        return fn

    def links(good: bool) -> Any:
        def fn(session: str) -> set[tuple[str, str]]:
            pairs = set()
            for c in scenarios[session].chains:
                for a, b in zip(c.versions, c.versions[1:], strict=False):
                    pairs.add((b.ref, a.ref) if good else (a.ref, b.ref))
            return pairs

        return fn

    return TruthSystem(answer(True), links(True), "oracle"), TruthSystem(answer(False), links(False), "wrong")


def test_supersession_judges_perfect_and_broken_systems() -> None:
    oracle, wrong = _supersession_doubles(7, 6)
    systems = {"oracle": oracle, "wrong": wrong}
    res = supersession.run(lambda n: systems[n], ["oracle", "wrong"], seeds=[7], counts=(6, 6))
    good, bad = res["systems"]["oracle"], res["systems"]["wrong"]
    assert good["odr"] == 0 and good["odr_dated"] == 0 and good["current_found"] == 1
    assert good["vdr_hidden"] == 0 and good["asof_correct"] == 1 and good["asof_stale"] == 0
    assert good["link_precision"] == 1 and good["link_recall"] == 1
    assert bad["odr"] == 1 and bad["odr_dated"] == 1 and bad["current_found"] == 0
    assert bad["vdr_hidden"] == 6 and bad["asof_correct"] == 0
    assert bad["link_precision"] == 0 and bad["link_recall"] == 0


def test_supersession_real_systems_tiny(tmp_path: Path) -> None:
    res = supersession.run(lambda n: make_system(n, tmp_path), REAL, seeds=[1000], counts=(2, 2))
    for name in REAL:
        m = res["systems"][name]
        assert m["questions"] == 6 and 0 <= m["odr"] <= 1 and m["vdr_total"] == 2
    assert res["systems"]["flat"]["link_precision"] is None
    assert supersession.table(res).count("\n") > 4


# ---- outcome -----------------------------------------------------------------------------------------------


def _outcome_doubles(seeds: tuple[int, ...], families: tuple[str, ...], episodes: int) -> tuple[TruthSystem, TruthSystem]:
    worlds = {f"{f}{s}": outcome.make_world(s, f, episodes=episodes) for s in seeds for f in families}

    def answer(good: bool) -> Any:
        def fn(session: str, query: str, as_of: str | None) -> list[RecalledItem]:
            w = worlds[session]
            q = next(q for q in w.queries if q.text == query and q.as_of == as_of)
            roles = w.roles(q)
            times = {t.ref: t.time for t in w.turns}
            if good:
                return [_item(r, times[r]) for r, role in roles.items() if role == "gold"]
            noise = next(t.ref for t in w.turns if t.ref not in roles)
            return [_item(r, times[r]) for r, role in roles.items() if role != "gold"] + [_item(noise, None)]

        return fn

    return TruthSystem(answer(True), name="oracle"), TruthSystem(answer(False), name="wrong")


def test_outcome_rewards_gold_and_punishes_its_absence() -> None:
    seeds, families = (3, 4), ("distractor", "state_change", "contradiction")
    oracle, wrong = _outcome_doubles(seeds, families, 10)
    systems = {"oracle": oracle, "wrong": wrong}
    res = outcome.run(lambda n: systems[n], ["oracle", "wrong"], seeds=seeds, families=families, episodes=10)
    for mode in ("position", "timestamp"):
        good = res["readers"][mode]["oracle"]["overall"]
        bad = res["readers"][mode]["wrong"]["overall"]
        assert good["success"]["mean"] > 0.85 and good["gold_recall"]["mean"] == 1 and good["precision"]["mean"] == 1
        assert good["stale_rate"]["mean"] == 0
        assert bad["success"]["mean"] == 0 and bad["gold_recall"]["mean"] == 0 and bad["stale_rate"]["mean"] > 0
    assert len(oracle.feedbacks) == 2 * len(seeds) * len(families) * 10
    assert all(used for _, ok, used in oracle.feedbacks if ok)


def test_outcome_real_systems_tiny(tmp_path: Path) -> None:
    names = [n for n in REAL if n != "flat_dates"]
    res = outcome.run(lambda n: make_system(n, tmp_path), names, seeds=(1000, 1001),
                      families=("distractor", "state_change"), episodes=3, readers=("position",))
    per = res["readers"]["position"]
    assert set(per) == set(names)
    for name in names:
        assert 0 <= per[name]["overall"]["success"]["mean"] <= 1
        if name != "flat":
            assert "success" in per[name]["paired_vs_flat"]
    assert "Reader: position" in outcome.table(res)


# ---- locomo -----------------------------------------------------------------------------------------------


def _locomo_folder(tmp: Path) -> Path:
    conv = {
        "sample_id": "tiny",
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat last week."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "I am training for a marathon in Berlin."}],
        "session_2_date_time": "10:00 am on 9 June, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "The cat is called Miso."},
                      {"speaker": "Bo", "dia_id": "D2:2", "text": "My knee hurts after the long run."}],
        "qa": [{"question": "What is Ann's cat called?", "answer": "Miso", "evidence": ["D2:1"], "category": 4},
               {"question": "Where is Bo's marathon?", "answer": "Berlin", "evidence": ["D1:2"], "category": 1},
               {"question": "What pet did Ann adopt, and its name?", "answer": "a cat, Miso",
                "evidence": ["D1:1", "D2:1"], "category": 1}],
    }
    folder = tmp / "locomo"
    folder.mkdir()
    (folder / "tiny.json").write_text(json.dumps(conv))
    return folder


def test_locomo_evidence_recall_perfect_and_empty(tmp_path: Path) -> None:
    folder = _locomo_folder(tmp_path)
    evidence = {q.question: q.evidence for q in locomo.load_folder(folder)[0].questions}
    oracle = TruthSystem(lambda s, q, a: [_item(e, None) for e in evidence[q]], name="oracle")
    empty = TruthSystem(lambda s, q, a: [], name="empty")
    systems = {"oracle": oracle, "empty": empty}
    res = locomo.run(lambda n: systems[n], ["oracle", "empty"], data=folder)
    assert res["systems"]["oracle"]["evidence_recall"] == 1 and res["systems"]["oracle"]["all_evidence"] == 1
    assert res["systems"]["empty"]["evidence_recall"] == 0 and res["systems"]["empty"]["all_evidence"] == 0
    assert res["systems"]["oracle"]["by_category"]["multi-hop"]["n"] == 2


def test_locomo_real_systems_tiny(tmp_path: Path) -> None:
    res = locomo.run(lambda n: make_system(n, tmp_path / "work"), REAL, data=_locomo_folder(tmp_path), budget=30)
    for name in REAL:
        m = res["systems"][name]
        assert m["n"] == 3 and 0 <= m["evidence_recall"] <= 1 and m["tokens_per_question"] <= 30
    assert res["systems"]["flat"]["evidence_recall"] > 0


# ---- runner and CLI ---------------------------------------------------------------------------------------


def test_run_suite_writes_results(tmp_path: Path) -> None:
    res = run_suite("supersession", out=tmp_path, systems=["flat", "flat_dates"], progress=False,
                    options={"counts": (2, 1)})
    folder = tmp_path / "supersession"
    assert json.loads((folder / "results.json").read_text())["systems"]["flat"]["questions"] == 5
    table = (folder / "table.md").read_text()
    assert "Wall time" in table and res["command"] in table
    assert (folder / "supersession.png").stat().st_size > 1000


def test_cli_reports_errors(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("version")(lambda: None)
    app.add_typer(eval_app)  # how the project CLI mounts it
    runner = CliRunner()
    unknown = runner.invoke(app, ["eval", "nonsense"])
    assert unknown.exit_code == 2 and "unknown suite" in unknown.output
    bad = runner.invoke(app, ["eval", "locomo", "--quick", "--systems", "flat", "--data", str(tmp_path / "none"),
                                   "--out", str(tmp_path), "--no-progress"])
    assert bad.exit_code == 1
    with pytest.raises(ValueError):
        run_suite("supersession", systems=["nope"], out=tmp_path)


TIMING = ("latency", "ingest", "wall")


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if not any(t in k for t in TIMING)}
    return obj


def test_same_seed_same_results(tmp_path: Path) -> None:
    def sup() -> Any:
        return supersession.run(lambda n: make_system(n, tmp_path / "s"), ["flat", "recency"], seeds=[5], counts=(3, 2))

    def out() -> Any:
        return outcome.run(lambda n: make_system(n, tmp_path / "o"), ["recency"], seeds=(5, 6),
                           families=("useless_frequent",), episodes=4, readers=("timestamp",))

    assert _strip(sup()) == _strip(sup())
    first, second = out(), out()
    assert _strip(first["readers"]) == _strip(second["readers"])
