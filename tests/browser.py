"""A real browser for the inspector tests: Debian's Chromium (``apt-get install chromium``) driven by Playwright
(``pip install playwright``; its own browser downloads are never used).

Without them the tests that need a browser are skipped with the reason; with ``MEMORY_GRAPH_REQUIRE_SERVERS=1`` (CI)
they fail instead, like the server-backend tests (``tests/servers.py``). ``MEMORY_GRAPH_CHROMIUM`` names another
Chromium binary.
"""

from __future__ import annotations

import os
import shutil


def chromium_path() -> str | None:
    """The Chromium binary to drive: ``$MEMORY_GRAPH_CHROMIUM``, else ``/usr/bin/chromium``, else one on PATH."""
    for candidate in (os.environ.get("MEMORY_GRAPH_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing() -> str | None:
    """Why a browser cannot be driven here (None when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if chromium_path() is None:
        return "Chromium is not installed (apt-get install chromium)"
    return None
