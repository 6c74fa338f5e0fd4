"""Token counting with a real BPE tokenizer (bpe-openai, tiktoken-compatible, vocabularies bundled offline)."""

from __future__ import annotations

from functools import lru_cache

import bpe_openai

from memory_graph.errors import InvalidInputError


@lru_cache(maxsize=4)
def _encoding(name: str) -> bpe_openai.Encoding:
    return bpe_openai.get_encoding(name)


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """Number of tokens of ``text`` under ``encoding`` (``o200k_base`` or ``cl100k_base``).

    Raises:
        InvalidInputError: unknown encoding name.
    """
    try:
        enc = _encoding(encoding)
    except Exception as exc:  # bpe_openai raises its own error types
        raise InvalidInputError(f"unknown token encoding {encoding!r}") from exc
    return len(enc.encode(text))
