"""Token counting with a real BPE tokenizer (bpe-openai, tiktoken-compatible, vocabularies bundled offline)."""

from __future__ import annotations

from functools import lru_cache

import bpe_openai

from memory_graph.errors import InvalidInputError


@lru_cache(maxsize=4)
def _encoding(name: str) -> bpe_openai.Encoding:
    return bpe_openai.get_encoding(name)


PIECE_CHARS = 50_000
"""Longer texts are counted in pieces of this many characters: bpe-openai refuses one input of more than 200,000
tokens or 1,000,000 characters, and a stored text of any length must be countable (breaker run, issue 14)."""


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """Number of tokens of ``text`` under ``encoding`` (``o200k_base`` or ``cl100k_base``). A text longer than
    ``PIECE_CHARS`` is counted piece by piece, cut at whitespace where there is some: exact except for a token
    a cut may split (at most one per piece, counted twice). Never raises for any text.

    Raises:
        InvalidInputError: unknown encoding name.
    """
    try:
        enc = _encoding(encoding)
    except Exception as exc:  # bpe_openai raises its own error types
        raise InvalidInputError(f"unknown token encoding {encoding!r}") from exc
    if len(text) <= PIECE_CHARS:
        return len(enc.encode(text))
    total, start = 0, 0
    while start < len(text):
        end = min(len(text), start + PIECE_CHARS)
        if end < len(text):
            space = text.rfind(" ", start + PIECE_CHARS // 2, end)
            end = space if space > start else end
        total += len(enc.encode(text[start:end]))
        start = end
    return total
