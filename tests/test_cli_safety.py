"""The CLI is safe to point at untrusted memories and mistyped paths (issue 10).

- every expected error is one ``error:`` line (``InvalidInputError`` exits 2, other ``MemoryGraphError`` 1);
- stored text never reaches the terminal with control characters (ESC, C1) or bidi/format characters;
- read-only commands never create a store at a mistyped path;
- ``--as-of`` is strict (no silent "now" for a name or a number);
- help shows no ``<bool>`` type for flags;
- a chat thread belongs to one user: another user passing any ``--thread`` neither resumes nor copies it.

Checks that need a store share one real store per test (the embedder loads once per process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import typer
from cli_checks import one_error_line
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from memory_graph.cli import app, guarded, sanitize
from memory_graph.errors import (
    ClosedError,
    InvalidInputError,
    NotFoundError,
    StoreBusyError,
    StoreError,
    StoreNotFoundError,
)

ROOT = Path(__file__).resolve().parents[1]
PIN = "alpha247514q9"
HOSTILE = "\x1b[2J\x1b[31mred\u202e"
FORBIDDEN = ("\x1b", "\u202e", "\x9b", "\x07", "\r")


def run_cli(*args: str | Path, stdin: str | None = None, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for var in ("MEMORY_GRAPH_MODEL", "MEMORY_GRAPH_STORE", "MEMORY_GRAPH_USER", "COLUMNS"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-m", "memory_graph.cli", *map(str, args)], input=stdin,
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)


def invoke(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args, input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


# ---- sanitize -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[2J\x1b[31mred\x1b[0m", "red"),  # whole CSI sequences go, not only the ESC byte
        ("\x1b]0;pwned\x07title", "title"),  # OSC (window title) sequence
        ("a\x9b31mb", "ab"),  # C1 CSI
        ("a\x00b\x7fc\x85d", "abcd"),  # NUL, DEL, C1 NEL
        ("abc\u202edef\u2066g\u2069", "abcdefg"),  # bidi override and isolates (category Cf)
        ("zero\u200bwidth\ufeff\u00ad", "zerowidth"),
        ("over\rwrite", "overwrite"),
        ("tab\there", "tab here"),
        ("two\nlines\u2028three", "two lines three"),
        ("Zoë 東京 🙂 [bold]x[/bold]", "Zoë 東京 🙂 [bold]x[/bold]"),  # printable text is untouched (rich-escaping is separate)
        ("\ud800lone", "lone"),  # a lone surrogate cannot be printed
    ],
)
def test_sanitize(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean


def test_sanitize_multiline_keeps_newlines_only() -> None:
    assert sanitize("a\r\nb\n\x1b[2Jc\u202e", multiline=True) == "a\nb\nc"


@settings(max_examples=500, deadline=None)
@given(st.text(), st.booleans())
def test_sanitize_leaves_no_control_or_format_character(text: str, multiline: bool) -> None:
    clean = sanitize(text, multiline=multiline)
    allowed = "\n" if multiline else ""
    bad = [c for c in clean if c not in allowed and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")]
    assert not bad, (text, clean)
    printable = "".join(c for c in text if c.isprintable() and c not in "\x1b")
    if printable == text:  # nothing to remove: unchanged
        assert clean == text


# ---- guarded: the exception hierarchy -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "code", "needle"),
    [
        (InvalidInputError("bad \x1b[2Jvalue\u202e\nsecond line"), 2, "error: bad value second line"),
        (NotFoundError("no memory 'x\x1b[31m'"), 1, "error: no memory 'x'"),
        (StoreBusyError("store in use"), 1, "error: store in use"),
        (StoreNotFoundError("store '/x' does not exist"), 1, "error: store '/x' does not exist"),
        (StoreError("not a ledger"), 1, "error: not a ledger"),
        (ClosedError("closed"), 1, "error: closed"),
        (ValueError("plain value error"), 1, "error: plain value error"),
        (RuntimeError("boom"), 1, "error: RuntimeError: boom"),
    ],
)
def test_guarded_maps_the_hierarchy(exc: Exception, code: int, needle: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_GRAPH_DEBUG", raising=False)
    small = typer.Typer()

    @small.command()
    @guarded
    def fail() -> None:
        raise exc

    @small.command()
    def other() -> None:  # a second command, so typer keeps ``fail`` as a subcommand
        pass

    result = CliRunner().invoke(small, ["fail"])
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert isinstance(result.exception, SystemExit)
    assert one_error_line(result.stderr) == needle
    for ch in FORBIDDEN:
        assert ch not in result.stderr


# ---- help ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["ask"], ["ingest"], ["chat"], ["inspect"], ["forget"], ["reindex"]])
def test_help_shows_no_bool_type(command: list[str]) -> None:
    code, out, err = invoke([*command, "--help"])
    assert code == 0, err
    assert "--help" in out and "<bool>" not in out, out
    if command == ["ask"]:
        assert "--history" in out and "--explain" in out and "Include superseded memories." in out
    if not command:  # command help texts are kept whole, not cut with "..."
        assert "Summarise the namespace, or show one memory with its provenance, stats, events and history." in " ".join(out.split())


def test_help_subprocess() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0 and "<bool>" not in proc.stdout, proc.stdout


# ---- ingest -------------------------------------------------------------------------------------------


def test_ingest_long_line_names_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("Dana: hello\nDana: fine\nDana: " + "x" * 2_000_069 + "\n", encoding="utf-8")
    code, _, err = invoke(["ingest", str(path), "--store", str(tmp_path / "store")])
    assert code == 1
    line = one_error_line(err)
    assert "long.txt:3: line 3 is 2000075 characters; the limit is 2000000" in line, line
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"speaker":["a"],"text":"hi there"}', "'speaker' must be a string, got list"),
        ('{"speaker":"user","text":"hi there","ref":5}', "'ref' must be a string, got int"),
        ('{"speaker":"user","text":"hi there","session":{"id":1}}', "'session' must be a string, got dict"),
        ("[" * 100000 + "]" * 100000, "JSON nested too deeply"),
    ],
    ids=["speaker list", "ref number", "session object", "deep nesting"],
)
def test_ingest_names_a_field_of_the_wrong_type_and_writes_nothing(tmp_path: Path, line: str, expected: str) -> None:
    """Fifteenth breaker run of issue 21: ``"speaker": ["a"]`` was stored as the speaker "['a']", ``"ref": 5`` as
    "5", and a deeply nested line printed Python's RecursionError."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"speaker":"user","text":"I live in Porto."}\n' + line + "\n", encoding="utf-8")
    code, _, err = invoke(["ingest", str(path), "--store", str(tmp_path / "store")])
    assert code == 1, err
    assert f"bad.jsonl:2: {expected}" in one_error_line(err)
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("target", ["ledger.sqlite3", "threads.sqlite3", "chroma/chroma.sqlite3", "new.jsonl"])
@pytest.mark.parametrize("command", ["export", "inspect"])
def test_an_output_file_inside_the_store_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, command: str
) -> None:
    """Seventeenth breaker run (critical): ``export --out STORE/ledger.sqlite3`` and ``inspect --html`` on it wrote
    over the ledger, and every user's memories were gone (exit 0)."""
    from fakes import StemBagEmbedder

    monkeypatch.setattr("memory_graph.store.get_embedder", lambda model="": StemBagEmbedder())
    store = tmp_path / "store"
    chat = tmp_path / "chat.txt"
    chat.write_text("Dana: I live in Porto.\n", encoding="utf-8")
    assert invoke(["ingest", str(chat), "--store", str(store), "--user", "dana"])[0] == 0
    before = {f: f.read_bytes() for f in store.rglob("*.sqlite3")}
    option = "--out" if command == "export" else "--html"
    code, _, err = invoke([command, option, str(store / target), "--store", str(store), "--user", "dana"])
    assert code == 2 and "inside the store folder" in one_error_line(err)
    assert {f: f.read_bytes() for f in store.rglob("*.sqlite3")} == before and not (store / "new.jsonl").exists()
    code, out, _ = invoke(["export", "--store", str(store), "--user", "dana"])
    assert code == 0 and "I live in Porto." in out


@pytest.mark.parametrize("command", ["export", "inspect"])
def test_an_output_path_that_is_no_regular_file_is_refused_and_a_link_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """Eighteenth breaker run (medium): ``--out`` on a device node replaced the node by a regular file (as root,
    ``/dev/null`` itself), and a link to ``/proc/self/fd/1`` failed with a raw errno. A pipe, a folder or a device is
    refused (exit 2, one line, nothing replaced; a folder has its own message); a link to a file writes that file and stays a link."""
    from fakes import StemBagEmbedder

    monkeypatch.setattr("memory_graph.store.get_embedder", lambda model="": StemBagEmbedder())
    store = tmp_path / "store"
    chat = tmp_path / "chat.txt"
    chat.write_text("Dana: I live in Porto.\n", encoding="utf-8")
    assert invoke(["ingest", str(chat), "--store", str(store), "--user", "dana"])[0] == 0
    option = "--out" if command == "export" else "--html"
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code, _, err = invoke([command, option, str(pipe), "--store", str(store), "--user", "dana"])
    assert code == 2 and "not a regular file" in one_error_line(err)
    assert pipe.exists() and not pipe.is_file()
    real, link = tmp_path / "real.out", tmp_path / "link.out"
    real.write_text("old", encoding="utf-8")
    link.symlink_to(real)
    assert invoke([command, option, str(link), "--store", str(store), "--user", "dana"])[0] == 0
    assert link.is_symlink() and "Porto" in real.read_text(encoding="utf-8")


def test_import_reads_at_most_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seventeenth breaker run: ``import /dev/zero`` read until the machine ran out of memory."""
    monkeypatch.setattr("memory_graph.transfer.MAX_EXPORT_BYTES", 1000)
    big = tmp_path / "big.jsonl"
    big.write_text("x" * 5000, encoding="utf-8")
    code, _, err = invoke(["import", str(big), "--store", str(tmp_path / "s")])
    assert code == 2 and "larger than" in one_error_line(err)
    assert not (tmp_path / "s").exists()


def test_a_user_id_or_task_with_a_control_character_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seventeenth breaker run (low): ``--user $'a\\nb'`` and ``ask --task`` with a control character were taken."""
    from fakes import StemBagEmbedder

    monkeypatch.setattr("memory_graph.store.get_embedder", lambda model="": StemBagEmbedder())
    chat = tmp_path / "chat.txt"
    chat.write_text("Dana: I live in Porto.\n", encoding="utf-8")
    assert invoke(["ingest", str(chat), "--store", str(tmp_path / "s"), "--user", "dana"])[0] == 0
    code, _, err = invoke(["inspect", "--store", str(tmp_path / "s"), "--user", "a\nb"])
    assert code != 0 and "control characters" in one_error_line(err)
    code, _, err = invoke(["ask", "where?", "--task", "a\x07b", "--store", str(tmp_path / "s"), "--user", "dana"])
    assert code != 0 and "control characters" in one_error_line(err)


# ---- --as-of is strict --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["Ben", "1.27", "12", "tomorrowish"])
def test_as_of_rejects_guesses(value: str, tmp_path: Path) -> None:
    code, out, err = invoke(["ask", "--as-of", value, "Where do I live?", "--store", str(tmp_path / "s")])
    assert code == 2, (out, err)
    line = one_error_line(err)
    assert "--as-of" in line and repr(value) in line, line
    assert not (tmp_path / "s").exists()


# ---- read commands never create a store ---------------------------------------------------------------


@pytest.mark.parametrize("command", [["ask", "x"], ["inspect"], ["inspect", "someid"], ["forget", "someid"], ["reindex"]])
def test_read_commands_do_not_create_a_store(command: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "path"
    code, _, err = invoke([*command, "--store", str(missing)])
    assert code == 1
    line = one_error_line(err)
    assert "does not exist" in line and str(missing) in line, line
    assert not (tmp_path / "nonexistent").exists()


def test_ask_missing_store_subprocess(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "path"
    proc = run_cli("ask", "x", "--store", missing)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "does not exist" in one_error_line(proc.stderr)
    assert not (tmp_path / "nonexistent").exists()


# ---- stored text never carries terminal escapes --------------------------------------------------------


def test_escape_codes_never_reach_the_terminal(tmp_path: Path) -> None:
    from memory_graph import Memory

    store = tmp_path / "store"
    with Memory(store, user_id="eve") as m:
        m.observe(f"I live in Lisbon {HOSTILE} now.", source=f"\x1b]0;pwned\x07feed{HOSTILE}",
                  ref=f"ref{HOSTILE}", time="2024-01-01T10:00:00")
        m.observe(f"I moved to Porto {HOSTILE}.", ref=f"ref2{HOSTILE}", time="2024-06-01T10:00:00")
        ids = [r["id"] for r in m.inspect()["recent"]]
    assert ids
    base = ["--store", str(store), "--user", "eve"]
    outputs: list[str] = []
    for args, stdin in (
        (["ask", "Where do I live?", "--history", "--explain"], None),
        (["ask", "Where do I live?", "--as-of", "2024-03-01"], None),
        (["inspect"], None),
        *[(["inspect", i], None) for i in ids],
        (["chat", "--thread", f"t{HOSTILE}"], "Where do I live?\n/inspect nope\x1b[2J\u202e\n/quit\n"),
        (["inspect", f"nope{HOSTILE}"], None),
        (["forget", ids[0]], None),
    ):
        code, out, err = invoke([*args, *base], stdin)
        outputs.append(out + err)
        assert code == (2 if args[-1].startswith("nope") else 0), (args, out, err)  # a bad id is invalid input
    text = "\n".join(outputs)
    assert "red" in text and "Lisbon" in text and "Porto" in text  # the text is shown, only cleaned
    for ch in FORBIDDEN:
        assert ch not in text, (repr(ch), text)


# ---- chat threads belong to one user --------------------------------------------------------------------


def test_chat_threads_do_not_leak_across_users(tmp_path: Path) -> None:
    from memory_graph import Memory

    store = tmp_path / "S"
    alice = run_cli("chat", "--store", store, "--user", "alice", stdin="My pin code is alpha247514q9.\n/quit\n")
    assert alice.returncode == 0, alice.stderr
    bob = run_cli("chat", "--store", store, "--user", "bob", stdin="What is my pin code?\n/quit\n")
    assert bob.returncode == 0, bob.stderr
    assert "assistant>" in bob.stdout and PIN not in bob.stdout + bob.stderr, bob.stdout
    for thread in ("default", '["alice", "default"]', json.dumps(["alice", "default"], separators=(",", ":"))):
        code, out, err = invoke(["chat", "--store", str(store), "--user", "bob", "--thread", thread],
                                "What is my pin code?\nWhat did I say before?\n/quit\n")
        assert code == 0, err
        assert PIN not in out + err, (thread, out)
    with Memory(store, user_id="bob", create=False) as m:
        assert PIN not in json.dumps(m.inspect(), default=str)
        assert all(PIN not in o["text"] for o in m.search_observations("What is my pin code?", k=50))
        assert PIN not in m.recall("What is my pin code?", include_history=True).context
    # the test can fail: alice's own thread and memory still hold her pin
    code, out, _ = invoke(["chat", "--store", str(store), "--user", "alice"], "What is my pin code?\n/quit\n")
    assert code == 0 and PIN in out, out


def test_help_does_not_import_the_heavy_stack() -> None:
    """`memory-graph --help` and argument errors must not load torch, Chroma or LangGraph (issue 13: --help took
    10-13 s). Checked by module presence, not by timing."""
    import subprocess
    import sys

    code = ("import sys\nfrom memory_graph import cli\nsys.argv = ['memory-graph', '--help']\n"
            "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('torch', 'chromadb', 'langgraph', 'sentence_transformers', 'sklearn') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_an_empty_store_path_is_refused_not_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Third breaker run: ``--store ""`` silently used the current folder as the store."""
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(["inspect", "--store", "", "--user", "u"])
    assert code == 2 and "must be a folder path" in err
    assert list(tmp_path.iterdir()) == []
