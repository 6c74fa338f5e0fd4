"""The English stop-word list the project reads words against: scikit-learn's (the Glasgow Information Retrieval
Group's list, 318 words), one place for every module that needs it (linking's content words, hard delete's
function words)."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path


@functools.lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS``, read from its module file without importing scikit-learn: importing
    the package (``sklearn/__init__`` and what it pulls in: scipy) cost 1.4 s and about 60 MB the first time an
    observation linked anything (issue 22), for a list of words. The file holds the one frozenset and imports
    nothing; where scikit-learn lays it out otherwise, the package is imported as before."""
    spec = importlib.util.find_spec("sklearn")  # finds the package, imports nothing
    path = Path(spec.origin).parent / "feature_extraction" / "_stop_words.py" if spec and spec.origin else None
    if path is not None and path.is_file():
        words: dict[str, object] = {}
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), words)  # noqa: S102 - the library's own file
        found = words.get("ENGLISH_STOP_WORDS")
        if isinstance(found, frozenset | set) and found:
            return frozenset(str(w) for w in found)
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)
