"""The English stop-word list (``memory_graph.stopwords``): scikit-learn's list, read without importing
scikit-learn (issue 22: the import cost 1.4 s and about 60 MB the first time an observation linked anything)."""

from __future__ import annotations

import subprocess
import sys


def test_the_list_is_scikit_learns_and_reading_it_imports_no_scikit_learn() -> None:
    code = ("import sys\nfrom memory_graph.stopwords import english_stop_words\nwords = english_stop_words()\n"
            "print('IMPORTED', 'sklearn' in sys.modules)\n"
            "from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS\n"
            "print('SAME', words == frozenset(ENGLISH_STOP_WORDS), len(words))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "IMPORTED False" in out.stdout and "SAME True 318" in out.stdout, out.stdout + out.stderr


def test_linking_and_hard_delete_read_the_one_list() -> None:
    from memory_graph import linking
    from memory_graph.stopwords import english_stop_words
    from memory_graph.store import quoting

    assert linking.english_stop_words is english_stop_words and quoting.english_stop_words is english_stop_words
    assert not hasattr(linking, "_english_stop_words") and not hasattr(quoting, "_function_words")
