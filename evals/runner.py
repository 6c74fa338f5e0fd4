"""Run a suite end to end and write ``results.json``, ``table.md`` and PNG plots; the ``eval`` CLI command.

``memory-graph eval SUITE [--quick] [--seeds ...] [--out DIR] [--data DIR] [--systems a,b] [--budget N]``
(or ``python -m evals SUITE ...``). SUITE is ``supersession``, ``locomo``, ``outcome`` or ``all``. Results go
to ``OUT/<suite>/`` (default ``evals/results`` for full runs, ``evals/results/_scratch`` for ``--quick``). The
exit status is 1 when any suite raised.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer

from evals import locomo, outcome, supersession, unseen
from evals.common import TEST_SEEDS, parse_seeds
from evals.report import write_json
from evals.systems import (
    ALL_SYSTEMS,
    MEMORY_GRAPH_VARIANTS,
    QUICK_SYSTEMS,
    make_system,
    memory_graph_available,
    warm_up,
)

SUITES = ("supersession", "locomo", "outcome", "unseen")
MODULES: dict[str, Any] = {"supersession": supersession, "locomo": locomo, "outcome": outcome,
                          "unseen": unseen}
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "evals" / "results"


def default_data() -> Path:
    """LoCoMo folder: ``$MEMORY_GRAPH_LOCOMO``, else ``../shared/data/locomo`` next to the repository."""
    env = os.environ.get("MEMORY_GRAPH_LOCOMO")
    return Path(env) if env else (ROOT.parent / "shared" / "data" / "locomo")


def resolve_systems(systems: Sequence[str] | None, quick: bool) -> tuple[list[str], dict[str, str]]:
    """The systems to run and those left out (name -> reason, e.g. memory_graph not importable yet).

    Raises:
        ValueError: an unknown system name.
    """
    wanted = list(systems) if systems else list(QUICK_SYSTEMS if quick else ALL_SYSTEMS)
    unknown = [s for s in wanted if s not in ALL_SYSTEMS]
    if unknown:
        raise ValueError(f"unknown systems {unknown}; choose from {', '.join(ALL_SYSTEMS)}")
    ok, reason = memory_graph_available()
    skipped = {s: reason for s in wanted if s in MEMORY_GRAPH_VARIANTS and not ok}
    return [s for s in wanted if s not in skipped], skipped


def pin_threads() -> int:
    """Pin torch to ``$MEMORY_GRAPH_EVAL_THREADS`` intra-op threads (default 1) for the eval process.

    On a shared 2-core machine, torch's default thread pool spin-waits against any other busy process: one
    query embedding took ~150 ms instead of ~7-20 ms with two eval processes running. One thread keeps every
    system's timings stable; it applies to all systems alike. Returns the thread count set.
    """
    threads = int(os.environ.get("MEMORY_GRAPH_EVAL_THREADS", "1"))
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:  # sentence-transformers always brings torch; be lenient anyway
        pass
    return threads


def code_version() -> dict[str, str | None]:
    """What was measured: the git commit (None outside a repository or before the first commit) and a SHA-1
    over the ``memory_graph`` and ``evals`` sources, so results of uncommitted code stay traceable."""
    import hashlib
    import subprocess

    digest = hashlib.sha1()
    for pkg in ("memory_graph", "evals"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"git_commit": commit, "sources_sha1": digest.hexdigest()}


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    def bar(items: Iterable[Any], desc: str) -> Any:
        items = list(items)
        return tqdm(items, desc=desc, total=len(items), file=sys.stderr, mininterval=1.0, leave=False,
                    dynamic_ncols=True)

    return bar


def _command(name: str, quick: bool, seeds: str | None, out: Path | None, data: Path | None,
             systems: Sequence[str] | None, budget: int | None, templates: str = "dev") -> str:
    parts = ["memory-graph", "eval", name]
    if name == "supersession" and templates != "dev":
        parts += ["--templates", templates]
    if quick:
        parts.append("--quick")
    if seeds:
        parts += ["--seeds", seeds]
    if out:
        parts += ["--out", str(out)]
    if data and name == "locomo":
        parts += ["--data", str(data)]
    if systems:
        parts += ["--systems", ",".join(systems)]
    if budget:
        parts += ["--budget", str(budget)]
    return " ".join(parts)


def run_suite(
    name: str,
    quick: bool = False,
    seeds: str | Sequence[int] | None = None,
    out: Path | str | None = None,
    data: Path | str | None = None,
    systems: Sequence[str] | None = None,
    budget: int | None = None,
    progress: bool = True,
    options: dict[str, Any] | None = None,
    templates: str = "dev",
) -> dict[str, Any]:
    """Run suite ``name`` and write ``results.json``, ``table.md`` and plots under ``out/<name>/``.

    Args:
        name: ``supersession`` | ``locomo`` | ``outcome`` | ``unseen``.
        quick: small counts (all four suites in a few minutes on 2 cores).
        seeds: a seed spec (see :func:`evals.common.parse_seeds`) or a list; default per suite (test seeds).
        out: results root; default ``evals/results`` (``evals/results/_scratch`` when ``quick``).
        data: LoCoMo folder (locomo only); default :func:`default_data`.
        systems: names from ``evals.systems.ALL_SYSTEMS``; default all (quick: the baselines + memory_graph).
        budget: token budget; default per suite (supersession 120, locomo 400, outcome 60).
        progress: show progress bars on stderr.
        options: extra keyword arguments for the suite's ``run`` (e.g. ``counts``, ``episodes``, ``families``).
        templates: supersession only: the wording set, ``dev`` or ``unseen`` (written by a helper who read neither
            the linker nor the dev templates); unseen results go to ``out/supersession-unseen/``.
    Returns:
        the results dict (also written as JSON), with ``wall_s``, ``command`` and ``code``.
    Side effect: pins torch's intra-op threads for the process (see :func:`pin_threads`).
    Raises:
        ValueError: unknown suite or system; FileNotFoundError: missing LoCoMo data.
    """
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; choose from {', '.join(SUITES)} or all")
    threads = pin_threads()
    version = code_version()  # before the run: the code that was loaded
    started = time.perf_counter()
    root = Path(out) if out else (RESULTS / "_scratch" if quick else RESULTS)
    suite_dir = root / (f"{name}-{templates}" if name == "supersession" and templates != "dev" else name)
    names, skipped = resolve_systems(systems, quick)
    seed_spec = seeds if isinstance(seeds, str) or seeds is None else ",".join(str(s) for s in seeds)
    bar = _progress(progress)
    workdir = Path(tempfile.mkdtemp(prefix=f"mg-eval-{name}-"))

    def make(system_name: str) -> Any:
        return warm_up(make_system(system_name, workdir))

    mod: Any = MODULES[name]
    extra: dict[str, Any] = dict(options or {})
    if name == "locomo":
        extra["data"] = Path(data) if data else default_data()
    elif name == "unseen":  # the frozen conversations of evals/unseen/ (or --data: another folder of them); no seeds
        if data:
            extra["data"] = Path(data)
    else:
        default = (TEST_SEEDS[0],) if name == "supersession" else (outcome.QUICK_SEEDS if quick else outcome.FULL_SEEDS)
        extra["seeds"] = parse_seeds(seed_spec, default)
        if name == "supersession":
            extra["templates"] = templates
    try:
        results = mod.run(make, names, quick=quick, budget=budget or mod.DEFAULT_BUDGET, progress=bar, **extra)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    wall = time.perf_counter() - started
    command = _command(name, quick, seed_spec, Path(out) if out else None, Path(data) if data else None, systems, budget,
                       templates)
    results["skipped_systems"] = skipped
    results["command"] = command
    results["wall_s"] = round(wall, 1)
    results["finished_at"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    results["machine"] = {"cpus": os.cpu_count(), "torch_threads": threads, "python": platform.python_version(),
                          "platform": platform.platform()}
    results["code"] = version
    write_json(suite_dir / "results.json", results)
    render(results, suite_dir)
    return results


def render(results: dict[str, Any], suite_dir: Path) -> None:
    """Write ``table.md`` and the PNG plots of a suite's results dict into ``suite_dir`` (results.json is
    written by :func:`run_suite`; call this alone to redraw from a saved ``results.json``)."""
    name = results["suite"]
    mod: Any = MODULES[name]
    suite_dir.mkdir(parents=True, exist_ok=True)
    pngs = mod.plots(results, suite_dir)
    header = [f"# {name}: {results['protocol']}", "", f"Command: `{results['command']}`  ",
              f"Wall time: {results['wall_s']:.0f} s on {results['machine']['cpus']} CPUs, "
              f"{results['machine'].get('torch_threads', '?')} torch thread(s) ({results['finished_at']})  ",
              f"Config: `{results['config']}`" + ("  " if results.get("code") else "")]
    if results.get("code"):
        header.append(f"Code: `{results['code']}`")
    if results.get("skipped_systems"):
        reason = next(iter(results["skipped_systems"].values()))
        header.append(f"Skipped (not importable): {', '.join(results['skipped_systems'])} — {reason}")
    figs = "\n".join(f"![{p}]({p})" for p in pngs)
    text = "\n".join(header) + "\n\n" + mod.table(results) + "\n\n" + figs + "\n"
    (suite_dir / "table.md").write_text(text, encoding="utf-8")


# Mount into the project CLI with ``app.add_typer(eval_app)`` (no name: its ``eval`` command joins the app)
# or ``app.command("eval")(eval_command)``.
eval_app = typer.Typer(help="Benchmarks of memory quality against plain similarity memory.", no_args_is_help=True)


@eval_app.command("eval")
def eval_command(
    suite: str = typer.Argument(..., help="supersession | locomo | outcome | unseen | all"),
    quick: bool = typer.Option(False, "--quick", help="Small counts: all four suites in a few minutes."),
    seeds: str | None = typer.Option(None, "--seeds", help="e.g. test:10, dev, 1000-1009, 5,6,7"),
    out: Path | None = typer.Option(None, "--out", help="Results root (default evals/results; with --quick evals/results/_scratch)."),
    data: Path | None = typer.Option(None, "--data", help="LoCoMo folder (default ../shared/data/locomo); with the "
                                     "unseen suite alone, a folder of conversations in its format (default evals/unseen)."),
    systems: str | None = typer.Option(None, "--systems", help=f"Comma-separated, from {','.join(ALL_SYSTEMS)}."),
    budget: int | None = typer.Option(None, "--budget", help="Token budget (default per suite)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bars on stderr."),
    templates: str = typer.Option("dev", "--templates", help="supersession wording: dev | unseen (never tuned on)."),
) -> None:
    """Run one suite (or all) and write results.json, table.md and PNG plots under OUT/SUITE/."""
    names = list(SUITES) if suite == "all" else [suite]
    if any(n not in SUITES for n in names):
        typer.echo(f"unknown suite {suite!r}; choose from {', '.join(SUITES)} or all", err=True)
        raise typer.Exit(2)
    chosen = [s.strip() for s in systems.split(",") if s.strip()] if systems else None
    failed = []
    for n in names:
        t0 = time.perf_counter()
        try:
            res = run_suite(n, quick=quick, seeds=seeds, out=out, data=None if n == "unseen" and suite == "all" else data,
                            systems=chosen, budget=budget, progress=progress, templates=templates)
        except (FileNotFoundError, ValueError) as exc:  # bad input (missing LoCoMo data, unknown system): one line
            failed.append(n)
            typer.echo(f"[eval] {n}: error: {exc}", err=True)
            continue
        except Exception:
            traceback.print_exc()
            failed.append(n)
            typer.echo(f"[eval] {n}: FAILED after {time.perf_counter() - t0:.0f} s", err=True)
            continue
        root = Path(out) if out else (RESULTS / "_scratch" if quick else RESULTS)
        folder = f"{n}-{templates}" if n == "supersession" and templates != "dev" else n
        typer.echo(f"[eval] {n}: done in {res['wall_s']:.0f} s -> {root / folder / 'table.md'}")
        if res["skipped_systems"]:
            typer.echo(f"[eval] {n}: skipped {', '.join(res['skipped_systems'])} (memory_graph not importable)")
    if failed:
        raise typer.Exit(1)


def main() -> None:
    """``python -m evals``: the ``eval`` command on its own."""
    typer.run(eval_command)
