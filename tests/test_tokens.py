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


TEXTS = [
    "hello world",
    "<|endoftext|> x <|fim_prefix|>",
    "Zürich 東京 🎉🎉 naïve café",
    "  spaces\n\nnew\tline",
    "We upgraded Postgres to version 14.2 in production. [m:tujazane]",
    "a" * 5000,
    "",
    "\u200b\u202e x",
]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_counts_equal_bpe_openai_public_encode(encoding: str) -> None:
    """The Rust tokenizer loaded directly counts as bpe-openai's public ``Encoding.encode`` (special tokens as
    text), and a text holding special-token text is counted, never refused (it raised ValueError before)."""
    import bpe_openai

    enc = bpe_openai.get_encoding(encoding)
    for text in TEXTS:
        assert count_tokens(text, encoding) == len(enc.encode(text, disallowed_special=())), text
    assert count_tokens("\ud800 lone surrogate", encoding) > 0


def test_fallback_to_the_public_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the extension cannot be loaded on its own, the public ``bpe_openai`` API counts the same."""
    from memory_graph import tokens

    def broken() -> None:
        raise ImportError("no bindings")

    tokens._counter.cache_clear()
    monkeypatch.setattr(tokens, "_load_bindings", broken)
    try:
        assert isinstance(tokens._counter("o200k_base"), tokens._PublicCounter)
        import bpe_openai

        enc = bpe_openai.get_encoding("o200k_base")
        assert [count_tokens(t) for t in TEXTS] == [len(enc.encode(t, disallowed_special=())) for t in TEXTS]
        with pytest.raises(InvalidInputError):
            count_tokens("hi", encoding="nope")
    finally:
        tokens._counter.cache_clear()


def test_counting_does_not_import_the_bpe_openai_package() -> None:
    """bpe-openai's package ``__init__`` decodes three vocabularies in Python (about 0.6 s): counting skips it."""
    import subprocess
    import sys

    code = (
        "import sys; from memory_graph.tokens import count_tokens; n = count_tokens('hello world'); "
        "print(n, 'bpe_openai' in sys.modules, 'bpe_openai.compat' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "False", "False"]
