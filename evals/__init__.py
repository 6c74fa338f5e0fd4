"""Benchmarks of memory quality against plain similarity memory, on public data and published protocols.

Suites (see ``evals/README.md`` for every metric and the protocol it follows):

- ``supersession``: ODR/VDR decision histories (EvoMem-MCP protocol), link precision/recall, as_of questions.
- ``locomo``: evidence recall on the LoCoMo conversations (Maharana et al., 2024) under a token budget.
- ``outcome``: recurring-query worlds with a simulated reader and feedback (ReMem protocol).

Run one with ``memory-graph eval SUITE [--quick]`` or ``python -m evals SUITE [--quick]``; from Python call
:func:`evals.runner.run_suite`.
"""

from __future__ import annotations

__all__ = ["run_suite"]


def run_suite(*args: object, **kwargs: object) -> dict:
    """Lazy alias of :func:`evals.runner.run_suite` (keeps ``import evals`` cheap)."""
    from evals.runner import run_suite as _run

    return _run(*args, **kwargs)  # type: ignore[arg-type]
