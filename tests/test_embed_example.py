"""The embedding example runs offline and shows the memory subgraph inside a parent graph of another schema."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_embed_subgraph_example_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "embed_subgraph.py")],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Traceback" not in proc.stderr
    direct, wrapped = out.split("== wrapper node (mapped keys) ==")
    assert "<memory-context>" in direct and "</memory-context>" in direct
    assert "lives in Porto" in direct  # the newer fact is recalled...
    assert "lives in Lisbon" not in direct  # ...and the one it superseded is not presented as current
    assert "[T-1001]" in direct and "draft:" in direct
    assert "acme-data" in wrapped and "[T-1002]" in wrapped
