"""The ``memory-graph`` CLI with the test embedder (``fakes.StemBagEmbedder``) in place of MiniLM, for tests that
run a command as a subprocess and must not load the model (seconds per process):

    python tests/fake_embedder_cli.py mcp --store STORE --user alice

A store written this way holds 256-dimension vectors: open it with this launcher again, never with the real CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import StemBagEmbedder  # noqa: E402

import memory_graph.store as store_module  # noqa: E402

_EMBEDDER = StemBagEmbedder()
store_module.get_embedder = lambda model="": _EMBEDDER  # type: ignore[assignment,misc]

if __name__ == "__main__":
    from memory_graph.cli import main

    sys.argv[0] = "memory-graph"
    main()
