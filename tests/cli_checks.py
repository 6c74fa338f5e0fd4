"""Shared checks of the CLI's error contract: one ``error: ...`` line on stderr, never a traceback."""

from __future__ import annotations


def one_error_line(stderr: str, *needles: str) -> str:
    """The single ``error: ...`` line of ``stderr`` (asserted: exactly one non-blank line, no traceback, each of
    ``needles`` in it)."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
