"""Credit assignment study: how precise is credit when the caller does not say which memory it used?

    python -m evals.credit_study [--seeds 1000-1009] [--out evals/results]

The outcome suite tells ``memory_graph`` which item the reader used (``used_ids``), like an agent whose
responder cites. Here the same worlds (all eight families, position reader, 40 episodes, the suite's seeds)
are played three ways:

- ``told``: ``feedback(recall_id, success, used_ids=[the item the reader used])`` (the suite's protocol);
- ``answer``: ``feedback(recall_id, success, answer=<the value the reader answered>)``: credit must come
  from the values named in the answer (``memory_graph.credit``);
- ``answer+replay``: the same plus leave-one-out replay: ``replay(ids)`` re-runs the simulated reader, with
  the episode's own random draws, on the shown items ``ids`` (the reader is replayable), and only for
  memories the answer leaves ambiguous (``credit.replay_candidates``, at most ``credit.MAX_REPLAYS``).

Metrics: credit precision = credited memories that the reader did use / memories credited; credit recall =
successful episodes whose used memory was credited / successful episodes that used a memory; extra reader
calls per task (replays / episodes); task success (each arm learns from its own credit).
ReMem (published) reports credit precision 0.99 with 0.41 extra reader calls per task.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.common import parse_seeds
from evals.judges import simulated_reader
from evals.outcome import FAMILIES, FULL_SEEDS, MAX_DRAWS, Episode, make_world, play_world

ARMS = ("told", "answer", "answer+replay")


def play(arm: str, seeds: Sequence[int], workdir: Path, families: Sequence[str] = FAMILIES) -> dict[str, Any]:
    """Play ``families`` of ``seeds`` with credit protocol ``arm``; returns the arm's counts and rates."""
    from evals.systems import MemoryGraphSystem

    system = MemoryGraphSystem(workdir / arm.replace("+", "_"))
    episodes = successes = credited_total = credited_right = used_successes = used_credited = replays = 0
    try:
        for seed in seeds:
            for family in families:
                for ep in play_world(system, make_world(seed, family), "position"):
                    res, verdict, items = ep.result, ep.verdict, system.last_recall.items
                    picked = items[verdict.picked] if verdict.picked is not None else None
                    answer = (picked.value or picked.text) if picked is not None else ""

                    def replay(ids: list[str], ep: Episode = ep, items: Any = items) -> bool:
                        keep = [s for s, it in zip(ep.seen, items, strict=True) if it.id in set(ids)]
                        return simulated_reader(keep[:MAX_DRAWS], "position", ep.draws, ep.query.as_of).success

                    if arm == "told":
                        out = system.memory.feedback(res.id, verdict.success, used_ids=[picked.id] if picked else None)
                    elif arm == "answer":
                        out = system.memory.feedback(res.id, verdict.success, answer=answer)
                    else:
                        out = system.memory.feedback(res.id, verdict.success, answer=answer, replay=replay)
                    credited = set(out.get("credited", {}))
                    episodes += 1
                    successes += verdict.success
                    replays += int(out.get("replays", 0))
                    credited_total += len(credited)
                    used = picked.id if picked is not None and picked.kind != "observation" else None
                    credited_right += int(used in credited)
                    if verdict.success and used is not None:
                        used_successes += 1
                        used_credited += int(used in credited)
    finally:
        system.close()
    return {
        "episodes": episodes, "task_success": successes / max(1, episodes),
        "credit_precision": credited_right / credited_total if credited_total else None,
        "credit_recall": used_credited / used_successes if used_successes else None,
        "credited": credited_total, "extra_reader_calls_per_task": replays / max(1, episodes),
    }


def table(results: dict[str, Any]) -> str:
    """Markdown table of the study."""
    lines = ["| credit protocol | task success | credit precision | credit recall | memories credited | extra reader calls/task |",
             "|---|---|---|---|---|---|"]
    for arm, m in results["arms"].items():
        prec = "–" if m["credit_precision"] is None else f"{m['credit_precision']:.3f}"
        rec = "–" if m["credit_recall"] is None else f"{m['credit_recall']:.3f}"
        lines.append(f"| {arm} | {m['task_success']:.3f} | {prec} | {rec} | {m['credited']} | "
                     f"{m['extra_reader_calls_per_task']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default=f"{FULL_SEEDS[0]}-{FULL_SEEDS[-1]}")
    ap.add_argument("--out", default="evals/results")
    args = ap.parse_args(argv)
    seeds = parse_seeds(args.seeds, FULL_SEEDS)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        arms = {arm: play(arm, seeds, Path(tmp)) for arm in ARMS}
    results = {"command": f"python -m evals.credit_study --seeds {args.seeds}", "seeds": list(seeds), "arms": arms,
               "wall_s": round(time.perf_counter() - started, 1)}
    out = Path(args.out) / "credit"
    out.mkdir(parents=True, exist_ok=True)
    md = f"# Credit assignment study\n\n`{results['command']}` ({results['wall_s']:.0f} s)\n\n{table(results)}\n"
    (out / "table.md").write_text(md, encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
