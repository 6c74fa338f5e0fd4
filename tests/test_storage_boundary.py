"""One persistence boundary (issue 12): no module outside ``memory_graph/store`` writes SQL, opens a database
connection or touches a Chroma collection; they go through ``Store``, ``Ledger`` reads and ``Tx`` writes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|PRAGMA|BEGIN|VACUUM)\b|\b(FROM|INTO)\s+\w+\s+(WHERE|VALUES|SET)\b")
FORBIDDEN_CALLS = {"execute", "executemany", "executescript", "connect"}
FORBIDDEN_NAMES = {"sqlite3", "chromadb", "psycopg", "VectorIndex"}


def _product_modules() -> list[Path]:
    files = [*sorted((ROOT / "memory_graph").rglob("*.py")), *sorted((ROOT / "agent").rglob("*.py"))]
    return [f for f in files if "store" not in f.relative_to(ROOT).parts[1:-1] and f.parent.name != "store"]


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            found.append(f"{path.name}:{node.lineno} SQL text {node.value[:60]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_CALLS:
            found.append(f"{path.name}:{node.lineno} .{node.func.attr}()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = {a.name.split(".")[0] for a in node.names} | {(getattr(node, "module", None) or "").split(".")[0]}
            names |= {a.name for a in node.names}
            if names & FORBIDDEN_NAMES:
                found.append(f"{path.name}:{node.lineno} imports {sorted(names & FORBIDDEN_NAMES)}")
        elif isinstance(node, ast.Attribute) and node.attr in ("index", "_conn") and isinstance(node.value, ast.Name) \
                and node.value.id == "store":
            found.append(f"{path.name}:{node.lineno} store.{node.attr}")
    return found


def test_the_checker_sees_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('import sqlite3\ncur.execute("SELECT * FROM memories WHERE id=?")\nstore.index.memories\n', encoding="utf-8")
    assert len(_violations(bad)) == 4  # the import, the SQL text, the execute call, store.index


def test_no_sql_or_vector_index_outside_the_store_package() -> None:
    modules = _product_modules()
    assert len(modules) > 20 and not any(m.parent.name == "store" for m in modules)
    found = [v for m in modules for v in _violations(m)]
    assert found == []
