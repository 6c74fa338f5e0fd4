"""Token counting never raises for a stored text of any length (breaker run: 1M characters broke every recall)."""

from __future__ import annotations

import pytest

from memory_graph.errors import InvalidInputError
from memory_graph.tokens import PIECE_CHARS, count_tokens


def test_long_texts_are_counted_in_pieces() -> None:
    import bpe_openai

    words = "lorem ipsum dolor sit amet, 4921 Zürich " * ((3 * PIECE_CHARS) // 40)
    exact = len(bpe_openai.get_encoding("o200k_base").encode(words))  # short enough to count whole
    assert abs(count_tokens(words) - exact) <= len(words) // (PIECE_CHARS // 2) + 1
    assert count_tokens("x" * 1_200_000) > 0  # no whitespace to cut at
    assert count_tokens("a " * 600_000) == 600_001


def test_unknown_encoding_is_invalid_input() -> None:
    with pytest.raises(InvalidInputError):
        count_tokens("hi", encoding="nope")
