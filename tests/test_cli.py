"""End-to-end tests of the ``memory-graph`` CLI, run as subprocesses against a temporary store.

Each subprocess that touches embeddings loads the embedder (several seconds), so checks are bundled:
one ingest of ``examples/conversation.jsonl`` is shared by the read-only checks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_checks import one_error_line

ROOT = Path(__file__).resolve().parents[1]
CONVERSATION = ROOT / "examples" / "conversation.jsonl"
ROW_ID = r"│ ([a-z0-9]{8,12}) +│"


def run_cli(*args: str | Path, store: Path, stdin: str | None = None, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_GRAPH_USER": "dana", "PYTHONUNBUFFERED": "1"}
    env.pop("MEMORY_GRAPH_MODEL", None)
    env.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "memory_graph.cli", *map(str, args), "--store", str(store)],
        input=stdin, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode in (1, 2), (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout
    one_error_line(proc.stderr, *needles)


def rows_with(output: str, pattern: str) -> list[str]:
    """Table rows whose text matches the regex ``pattern``."""
    return [ln for ln in output.splitlines() if re.search(pattern, ln) and ln.startswith("│")]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "store"
    proc = run_cli("ingest", CONVERSATION, store=path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    assert re.search(r"turns\s+│\s+116", out), out
    formed = int(re.search(r"memories formed\s+│\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    superseded = int(re.search(r"superseded\s+│\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    assert formed > 20 and superseded >= 3, out
    assert "duplicates" in out
    return path


def test_ask_current_and_as_of(store: Path) -> None:
    now = run_cli("ask", "Where do I live?", store=store)
    assert now.returncode == 0, now.stderr
    berlin = rows_with(now.stdout, "lives? in Berlin")
    assert berlin and "current" in berlin[0], now.stdout
    for old in ("lives? in Lisbon", "lives? in Porto"):
        assert all("current" not in row for row in rows_with(now.stdout, old)), now.stdout
    assert "answer" in now.stdout and "Berlin" in now.stdout.split("answer", 1)[1]

    past = run_cli("ask", "--as-of", "2025-03-01", "--explain", "--budget", "300", "Where do I live?", store=store)
    assert past.returncode == 0, past.stderr
    lisbon = rows_with(past.stdout, "lives? in Lisbon")
    assert lisbon and "current" in lisbon[0], past.stdout
    assert not any("current" in row for row in rows_with(past.stdout, "lives? in Berlin")[:1] if "2025-09" in row)
    assert "candidates" in past.stdout and "chosen" in past.stdout
    assert "/300" in past.stdout  # the budget is reported


def _observations(store: Path) -> int:
    from memory_graph import Memory

    with Memory(store, user_id="dana", create=False) as mem:
        return int(mem.inspect()["observations"])


HEAVY = ("langgraph", "langchain_core", "bpe_openai", "wordfreq", "pysbd", "dateparser", "sklearn", "agent.graph")
"""Modules an offline ``ask`` does not need (issue 22): LangGraph and the agent, the extractors' word lists, bpe-openai's
Python vocabularies (counting uses its Rust extension), date parsing, scikit-learn."""


def test_ask_is_a_read_unless_remember(store: Path) -> None:
    """``ask`` stores no observation and imports none of ``HEAVY`` (it ran the agent, which observed the question,
    before); ``--remember`` stores the question as the user's message, once, and answers the same."""
    before = _observations(store)
    code = ("import sys\nfrom memory_graph.cli import main\n"
            f"sys.argv = ['memory-graph', 'ask', 'Where do I live?', '--store', {str(store)!r}, '--user', 'dana']\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
            f"print('LOADED', [m for m in {HEAVY!r} if m in sys.modules])\n")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("MEMORY_GRAPH_MODEL", None)
    read = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert read.returncode == 0, read.stderr
    assert "Berlin" in read.stdout.split("answer", 1)[1]
    assert _observations(store) == before
    assert "LOADED []" in read.stdout, read.stdout.splitlines()[-1]

    kept = run_cli("ask", "--remember", "Where do I live?", store=store)
    assert kept.returncode == 0, kept.stderr
    assert "Berlin" in kept.stdout.split("answer", 1)[1]
    assert _observations(store) == before + 1

    dated = run_cli("ask", "--remember", "--as-of", "2025-03-01", "Where did I live then?", store=store)
    assert dated.returncode == 0, dated.stderr  # no agent run (--as-of): the question is still stored
    assert _observations(store) == before + 2


def test_inspect_forget_reindex(store: Path) -> None:
    summary = run_cli("inspect", store=store)
    assert summary.returncode == 0, summary.stderr
    assert "observations" in summary.stdout and "recent memories" in summary.stdout
    berlin = rows_with(summary.stdout, "lives? in Berlin")
    assert berlin, summary.stdout
    berlin_id = re.search(ROW_ID, berlin[0]).group(1)  # type: ignore[union-attr]

    one = run_cli("inspect", berlin_id, store=store)
    assert one.returncode == 0, one.stderr
    for needle in ("status", "provenance", "s6-t01", "supersedes", "history", "Lisbon", "Porto", "shown"):
        assert needle in one.stdout, (needle, one.stdout)

    for missing in (["inspect", "nosuchid"], ["forget", "nosuchid"]):
        unknown = run_cli(*missing, store=store)
        assert_one_line_error(unknown, "nosuchid")
        assert unknown.returncode == 1

    preview = run_cli("forget", berlin_id, "--hard", "--dry-run", store=store)
    assert preview.returncode == 0, preview.stderr
    assert "would erase" in preview.stdout and "nothing erased" in preview.stdout and "Berlin" in preview.stdout
    assert_one_line_error(run_cli("forget", berlin_id, "--dry-run", store=store), "hard")

    gone = run_cli("forget", berlin_id, store=store)
    assert gone.returncode == 0, gone.stderr
    assert "retracted 1" in gone.stdout and berlin_id in gone.stdout

    rebuilt = run_cli("reindex", store=store)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert re.search(r"index now holds \d+ memories and \d+ observations", rebuilt.stdout), rebuilt.stdout


def test_bad_inputs_write_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"speaker": "user", "text": "I live in Lisbon.", "time": "2025-01-01T10:00:00"}\n'
                   '{"speaker": "user", "text": "broken\n', encoding="utf-8")
    assert_one_line_error(run_cli("ingest", bad, store=store), "bad.jsonl:2", "malformed JSON")
    surrogate = tmp_path / "surrogate.jsonl"  # a lone surrogate escape: valid JSON, not storable UTF-8
    surrogate.write_text('{"speaker": "user", "text": "I live in Lisbon.", "time": "2025-01-01T10:00:00"}\n'
                         '{"speaker": "user", "text": "bad \\ud800 text", "time": "2025-01-02T10:00:00"}\n', encoding="utf-8")
    assert_one_line_error(run_cli("ingest", surrogate, "--batch-size", "1", store=store), "surrogate.jsonl:2", "not valid Unicode")

    # every file is validated before the store is opened: not even the folder was created
    assert_one_line_error(run_cli("inspect", store=store), "does not exist")
    assert not store.exists()


def test_bad_inputs_in_process(tmp_path: Path) -> None:
    """The same one-line errors, through typer's runner (no subprocess start-up; nothing is embedded)."""
    from typer.testing import CliRunner

    from memory_graph.cli import app

    store = str(tmp_path / "store")
    runner = CliRunner()

    def check(args: list[str], *needles: str) -> None:
        result = runner.invoke(app, [*args, "--store", store])
        assert result.exit_code in (1, 2), (result.exit_code, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        one_error_line(result.stderr, *needles)

    bad_time = tmp_path / "time.jsonl"
    bad_time.write_text('{"text": "I live in Oslo."}\n{"text": "x", "time": "not a time at all"}\n', encoding="utf-8")
    check(["ingest", str(bad_time)], "time.jsonl:2")
    no_text = tmp_path / "notext.jsonl"
    no_text.write_text('{"speaker": "user", "time": "2025-01-01"}\n', encoding="utf-8")
    check(["ingest", str(no_text)], "notext.jsonl:1", "text")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    check(["ingest", str(empty)], "empty")
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"user: hello\n\x89PNG\x00\x01\x02\xff")
    check(["ingest", str(binary)], "blob.txt:2", "binary")
    plain = tmp_path / "plain.txt"
    plain.write_text("Dana: I live in Oslo.\nno speaker here\n", encoding="utf-8")
    check(["ingest", str(plain)], "plain.txt:2", "Speaker: text")
    check(["ingest", str(tmp_path / "missing.jsonl")], "no such file")
    check(["ask", "--as-of", "notadate", "Where do I live?"], "--as-of", "'notadate'")
    check(["ask", "--as-of", "Ben", "Where do I live?"], "--as-of", "'Ben'")
    check(["ask", "--budget", "0", "Where do I live?"], "--budget")
    # the read-only commands report a missing store instead of creating an empty one
    check(["ask", "Where do I live?"], "does not exist")
    check(["forget", "nosuchid"], "does not exist")
    check(["inspect", "nosuchid"], "does not exist")
    check(["reindex"], "does not exist")
    assert not (tmp_path / "store").exists()  # nothing was opened or written


def test_chat_piped_stdin(tmp_path: Path) -> None:
    store = tmp_path / "store"
    proc = run_cli("chat", "--thread", "t1", store=store,
                   stdin="I live in Oslo.\nWhere do I live?\n/good\n/inspect nope\n/quit\nnever read\n")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    answers = [ln for ln in proc.stdout.splitlines() if ln.startswith("assistant>")]
    assert len(answers) == 2, proc.stdout
    assert "Oslo" in proc.stdout.split("assistant>")[-1]
    assert re.search(r"feedback good on recall \w+: credited [1-9]", proc.stdout), proc.stdout
    assert "error: no memory 'nope'" in proc.stderr  # a bad slash command does not end the chat
    assert (store / "threads.sqlite3").exists()


def test_ingest_reads_at_most_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Breaker run (issue 21): ``ingest /dev/urandom`` read without end (18 GB, killed by the kernel). The file is
    read up to ``MAX_INGEST_BYTES`` and refused past it, with one error line and no store made."""
    from typer.testing import CliRunner

    from memory_graph import cli

    monkeypatch.setattr(cli, "MAX_INGEST_BYTES", 1 << 20)
    store = tmp_path / "store"
    result = CliRunner().invoke(cli.app, ["ingest", "/dev/zero", "--store", str(store)])  # endless
    assert result.exit_code == 1, result.output
    one_error_line(result.stderr, "/dev/zero", "larger than 1 MiB")
    assert not store.exists()
