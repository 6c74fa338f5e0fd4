"""``python -m evals SUITE [--quick] ...``: same as ``memory-graph eval``."""

from evals.runner import main

main()
