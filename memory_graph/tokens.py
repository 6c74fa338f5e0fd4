"""Token counting with a real BPE tokenizer (bpe-openai, tiktoken-compatible, vocabularies bundled offline).

Counting uses bpe-openai's Rust tokenizer (``bpe_openai._bindings``) directly, loaded without importing the
``bpe_openai`` package: the package's ``__init__`` decodes the cl100k, o200k and voyage3 vocabularies in Python
when imported (about 0.6 s of every CLI call, issue 22), although counting needs none of them (the Rust side
holds its own). The counts are those of ``bpe_openai.get_encoding(name).encode(text, disallowed_special=())``
(tested equal). When the extension cannot be loaded that way (another bpe-openai layout), the public API is used.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from functools import lru_cache
from typing import Any

from memory_graph.errors import InvalidInputError

_BINDINGS = "bpe_openai._bindings"


def _load_bindings() -> Any:
    """bpe-openai's Rust extension module, imported without running the ``bpe_openai`` package ``__init__``
    (``importlib.util.find_spec`` of a top-level name locates it without importing it). Raises ``ImportError``
    when it is not there."""
    module = sys.modules.get(_BINDINGS)
    if module is not None:
        return module
    package = importlib.util.find_spec("bpe_openai")
    if package is None or not package.submodule_search_locations:
        raise ImportError("bpe_openai is not installed")
    spec = importlib.machinery.PathFinder.find_spec(_BINDINGS, list(package.submodule_search_locations))
    if spec is None or spec.loader is None:
        raise ImportError(f"{_BINDINGS} not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[_BINDINGS] = module  # an extension module is initialised once per process: share it
    return module


class _PublicCounter:
    """The fallback: bpe-openai's public ``Encoding``, special-token text counted as text (as the Rust path)."""

    def __init__(self, name: str) -> None:
        import bpe_openai

        self._encoding = bpe_openai.get_encoding(name)

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


@lru_cache(maxsize=4)
def _counter(name: str) -> Any:
    """An object with ``count(text) -> int`` for encoding ``name`` (the Rust tokenizer, else the public API)."""
    try:
        bindings = _load_bindings()
    except Exception:  # noqa: BLE001 - any failure of the private path falls back to the public one
        return _PublicCounter(name)
    if name not in bindings.supported_encodings():
        raise ValueError(f"unsupported encoding {name!r}")
    return bindings.tokenizer_for_encoding(name)


def _count(counter: Any, text: str) -> int:
    try:
        return int(counter.count(text))
    except UnicodeEncodeError:  # lone surrogates: replaced, as bpe-openai's own encode does
        return int(counter.count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")))


PIECE_CHARS = 50_000
"""Longer texts are counted in pieces of this many characters: bpe-openai refuses one input of more than 200,000
tokens or 1,000,000 characters, and a stored text of any length must be countable (breaker run, issue 14)."""


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """Number of tokens of ``text`` under ``encoding`` (``o200k_base`` or ``cl100k_base``). A text longer than
    ``PIECE_CHARS`` is counted piece by piece, cut at whitespace where there is some: exact except for a token
    a cut may split (at most one per piece, counted twice). Special-token text (``<|endoftext|>``) counts as
    ordinary text. Never raises for any text.

    Raises:
        InvalidInputError: unknown encoding name.
    """
    try:
        counter = _counter(encoding)
    except Exception as exc:  # bpe_openai raises its own error types
        raise InvalidInputError(f"unknown token encoding {encoding!r}") from exc
    if len(text) <= PIECE_CHARS:
        return _count(counter, text)
    total, start = 0, 0
    while start < len(text):
        end = min(len(text), start + PIECE_CHARS)
        if end < len(text):
            space = text.rfind(" ", start + PIECE_CHARS // 2, end)
            end = space if space > start else end
        total += _count(counter, text[start:end])
        start = end
    return total
