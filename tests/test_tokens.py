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
    """When neither the compact counter nor the extension on its own can be loaded, the public ``bpe_openai`` API
    counts the same."""
    from memory_graph import bpe, tokens

    def broken(*_: object) -> None:
        raise ImportError("no bindings")

    tokens._counter.cache_clear()
    monkeypatch.setattr(tokens, "_load_bindings", broken)
    monkeypatch.setattr(bpe, "compact_counter", broken)
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


def _generated_texts() -> list[str]:
    """Text of every kind the pre-tokenizer distinguishes: letters of many scripts and cases, marks, digits,
    punctuation, apostrophe suffixes, every kind of whitespace, emoji, astral planes; and long pieces (the heap)."""
    import random

    r = random.Random(22)
    ranges = [
        (0x20, 0x7F),
        (0xA0, 0x250),
        (0x300, 0x370),
        (0x370, 0x500),
        (0x590, 0x700),
        (0x900, 0x980),
        (0xE00, 0xE80),
        (0x1100, 0x1200),
        (0x2000, 0x2070),
        (0x3000, 0x3100),
        (0x4E00, 0x4F00),
        (0xAC00, 0xAD00),
        (0x1F300, 0x1F700),
        (0xFE00, 0xFE10),
        (0x1D400, 0x1D500),
        (0x20000, 0x20100),
    ]
    plain = " \n\r\t'sSdDlLvVeErRmMtT0123456789.,;:!?-_/\\()[]<>\"abcXYZ "
    out = [
        "".join(
            chr(r.randint(*r.choice(ranges))) if r.random() < 0.5 else r.choice(plain)
            for _ in range(r.randint(1, 40))
        )
        for _ in range(1500)
    ]
    out += [
        "".join(r.choice(alphabet) for _ in range(r.randint(60, 1500)))
        for alphabet in ("ab", "abc", "xyz ", "aaaa", "0123456789", "éa", "th e", "ing")
        for _ in range(5)
    ]
    return out + [
        "[m:fadahajo] 2023-01-01 to 2023-02-01, superseded by m:kokokoko, scope: staging Caroline: "
        "I'd say it's the LGBTQ support group — it's great! 🌟",
        "It'S ThE'LL we'RE I'M",
    ]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_the_compact_counter_counts_as_bpe_openai(encoding: str) -> None:
    """The compact table (``memory_graph.bpe``, what counts by default) gives bpe-openai's Rust tokenizer's counts
    (checked on 58,862 texts with LoCoMo and the update corpus while it was written; generated ones here)."""
    from memory_graph import bpe, tokens

    tokens._counter.cache_clear()
    assert isinstance(tokens._counter(encoding), bpe.CompactCounter)
    rust = tokens._load_bindings().tokenizer_for_encoding(encoding)
    texts = TEXTS + _generated_texts()
    assert [count_tokens(t, encoding) for t in texts] == [rust.count(t) for t in texts]


def test_the_heap_merges_as_the_scan() -> None:
    import random

    from memory_graph import bpe

    rank = bpe.compact_counter("o200k_base")._table.rank
    r = random.Random(7)
    for _ in range(500):
        piece = "".join(r.choice("abcde fgé0") for _ in range(r.randint(2, bpe.HEAP_FROM - 1))).encode()
        assert bpe._merge_count_heap(piece, rank) == bpe.merge_count(piece, rank), piece


def test_the_token_table_is_cached_and_a_bad_cache_rebuilt(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from memory_graph import bpe

    monkeypatch.setenv("MEMORY_GRAPH_CACHE", str(tmp_path))
    built = bpe.load_table("cl100k_base")
    cached = Path(str(tmp_path)) / "bpe" / "cl100k_base.table"
    assert cached.is_file()
    again = bpe.load_table("cl100k_base")
    assert (again.blob, again.offsets, again.slots) == (built.blob, built.offsets, built.slots)
    assert built.rank(b"hello") >= 0 and built.rank(b"\x00hello\x00") == -1
    cached.write_bytes(cached.read_bytes()[:-10])  # a truncated write
    assert bpe.load_table("cl100k_base").blob == built.blob
    assert bpe.Table.load(cached.read_bytes(), "another vocabulary file") is None


def test_counting_loads_no_rust_tokenizer() -> None:
    """A process that counts tokens holds the compact table (about 4 MB), not bpe-openai's Rust tokenizer (65 MB
    for o200k_base: the largest part of a recall-only process's peak memory beside the embedder, issue 22)."""
    import subprocess
    import sys

    code = (
        "import sys; from memory_graph.tokens import count_tokens; n = count_tokens('hello world'); "
        "print(n, 'bpe_openai._bindings' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "False"]
