"""Exact token counts of the OpenAI vocabularies (``o200k_base``, ``cl100k_base``) in a few megabytes.

bpe-openai's Rust tokenizer holds 65 MB for ``o200k_base`` (its automata over all 200k tokens), more than
anything else a recall-only process loads beside the embedder and Chroma (issue 22: the peak RSS of a process
that opens a store and recalls was 1.37x a plain Chroma process's). Counting needs much less: the tokens' bytes
and their ranks. This module counts with tiktoken's own algorithm over a compact table:

- *pre-tokenization*: the vocabulary's regular expression (tiktoken's, as bpe-openai ships it), with the
  ``regex`` module (Unicode properties, possessive quantifiers);
- *byte pair merging* within each piece, as tiktoken's ``_byte_pair_merge``: repeatedly merge the adjacent pair
  whose concatenation has the lowest rank, the leftmost on ties, until no adjacent pair is a token; the count is
  the number of parts left. A long piece uses a heap that makes the same choices in O(n log n);
- *the table*: every token's bytes in one ``bytes`` object, in rank order (the vocabularies' ranks are
  0..n-1), their offsets, and an open-addressing hash table (CRC-32, linear probing) from bytes to rank: about
  4 MB for ``o200k_base``. Built once from bpe-openai's bundled ``<name>.tiktoken.gz`` (0.5-1 s) and kept in the
  cache folder (``embeddings.cache_dir()``, ``bpe/``), from which a later process loads it in milliseconds.

The counts equal bpe-openai's (``tests/test_tokens.py`` compares them on LoCoMo, the update corpus, rendered
context lines and generated Unicode). Special-token text (``<|endoftext|>``) is ordinary text here, as in
``memory_graph.tokens``.

Errors: :func:`compact_counter` raises ``FileNotFoundError`` when the vocabulary file is not where bpe-openai
keeps it and ``ImportError`` without ``regex``; ``memory_graph.tokens`` then uses bpe-openai itself.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import heapq
import importlib.util
import logging
import os
import struct
import tempfile
import zlib
from array import array
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PATTERNS = {
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
}
"""Each vocabulary's pre-tokenization pattern (tiktoken's; bpe-openai's ``registry.py`` ships the same)."""
FORMAT = b"MGBPE1\n"
"""The cache file's first bytes; a file that does not start with them (another format) is built again."""
HEAP_FROM = 64
"""Pieces of at least this many bytes are merged with a heap (tiktoken's quadratic scan for shorter ones)."""
PIECE_CACHE = 16384
"""Distinct pieces whose counts a counter keeps (most text is made of a few thousand common words)."""


def _vocabulary_file(name: str) -> Path:
    """bpe-openai's bundled ``<name>.tiktoken.gz`` (found without importing the package, whose ``__init__``
    decodes every vocabulary in Python)."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("bpe_openai is not installed")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "data" / f"{name}.tiktoken.gz"
        if path.is_file():
            return path
    raise FileNotFoundError(f"{name}.tiktoken.gz not found in bpe_openai")


class Table:
    """Every token of a vocabulary: ``blob`` (their bytes, in rank order), ``offsets`` (token r is
    ``blob[offsets[r]:offsets[r + 1]]``) and ``slots`` (open addressing: rank + 1 at ``crc32(bytes) & mask`` or the
    next free slot; 0 = empty)."""

    def __init__(self, blob: bytes, offsets: array, slots: array) -> None:  # type: ignore[type-arg]
        self.blob, self.offsets, self.slots = blob, offsets, slots
        self.mask = len(slots) - 1

    @classmethod
    def build(cls, tokens: list[bytes]) -> Table:
        """The table of ``tokens`` (rank = position)."""
        size = 1 << max(10, (2 * len(tokens)).bit_length())  # load factor below 1/2
        slots, offsets, blob = array("I", bytes(4 * size)), array("I", [0]), bytearray()
        mask = size - 1
        for rank, token in enumerate(tokens):
            blob += token
            offsets.append(len(blob))
            at = zlib.crc32(token) & mask
            while slots[at]:
                at = (at + 1) & mask
            slots[at] = rank + 1
        return cls(bytes(blob), offsets, slots)

    def rank(self, piece: bytes) -> int:
        """The rank of the token ``piece``, or -1 when it is not one."""
        at, slots, offsets, blob = zlib.crc32(piece) & self.mask, self.slots, self.offsets, self.blob
        while True:
            found = slots[at]
            if not found:
                return -1
            if blob[offsets[found - 1] : offsets[found]] == piece:
                return found - 1
            at = (at + 1) & self.mask

    def dump(self, source: str) -> bytes:
        """The cache file's bytes: ``FORMAT``, a digest of ``source``, the three lengths, then the arrays."""
        head = FORMAT + hashlib.sha256(source.encode()).digest()[:16]
        head += struct.pack("<III", len(self.offsets), len(self.slots), len(self.blob))
        return head + self.offsets.tobytes() + self.slots.tobytes() + self.blob

    @classmethod
    def load(cls, raw: bytes, source: str) -> Table | None:
        """The table a cache file holds, or None when it is not one for ``source`` (another format, a changed
        vocabulary file, a truncated write)."""
        start = len(FORMAT) + 16 + 12
        if (
            raw[: len(FORMAT)] != FORMAT
            or raw[len(FORMAT) : len(FORMAT) + 16] != hashlib.sha256(source.encode()).digest()[:16]
        ):
            return None
        n_offsets, n_slots, n_blob = struct.unpack("<III", raw[start - 12 : start])
        if len(raw) != start + 4 * (n_offsets + n_slots) + n_blob:
            return None
        offsets, slots = array("I"), array("I")
        offsets.frombytes(raw[start : start + 4 * n_offsets])
        slots.frombytes(raw[start + 4 * n_offsets : start + 4 * (n_offsets + n_slots)])
        return cls(raw[start + 4 * (n_offsets + n_slots) :], offsets, slots)


def _read_vocabulary(path: Path) -> list[bytes]:
    """The tokens of a ``.tiktoken.gz`` file (``base64 rank`` lines), in rank order.

    Raises:
        ValueError: the ranks are not 0..n-1 (a vocabulary this table cannot hold)."""
    pairs = []
    with gzip.open(path, "rb") as lines:
        for line in lines:
            if line.strip():
                token, rank = line.split()
                pairs.append((int(rank), base64.b64decode(token)))
    pairs.sort()
    if any(rank != i for i, (rank, _) in enumerate(pairs)):
        raise ValueError(f"{path}: ranks are not 0..{len(pairs) - 1}")
    return [token for _, token in pairs]


def load_table(name: str) -> Table:
    """The table of vocabulary ``name``: from the cache folder when it holds one for the same vocabulary file,
    else built from it and written there (atomically; a cache that cannot be written is only logged).

    Raises:
        FileNotFoundError: the vocabulary file is not installed."""
    from memory_graph.embeddings import cache_dir

    source_path = _vocabulary_file(name)
    stat = source_path.stat()
    source = f"{source_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    cached = cache_dir() / "bpe" / f"{name}.table"
    try:
        table = Table.load(cached.read_bytes(), source)
        if table is not None:
            return table
    except OSError:
        pass
    table = Table.build(_read_vocabulary(source_path))
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, prefix=f".{name}-")
        with os.fdopen(fd, "wb") as out:
            out.write(table.dump(source))
        os.replace(tmp, cached)
    except OSError as exc:
        log.warning("the token table of %s could not be cached in %s (%s)", name, cached.parent, exc)
    return table


class CompactCounter:
    """``count(text)``: the number of tokens of ``text`` in a vocabulary (see the module docstring).

    Raises (``count``): ``UnicodeEncodeError`` for text holding lone surrogates (as bpe-openai)."""

    def __init__(self, table: Table, pattern: str) -> None:
        import regex

        self._table = table
        self._split = regex.compile(pattern).findall
        self._pieces: dict[bytes, int] = {}

    def count(self, text: str) -> int:
        pieces = self._pieces
        total = 0
        for piece in self._split(text):
            raw = piece.encode("utf-8")
            n = pieces.get(raw)
            if n is None:
                n = self._count_piece(raw)
                if len(pieces) >= PIECE_CACHE:
                    pieces.clear()
                pieces[raw] = n
            total += n
        return total

    def _count_piece(self, piece: bytes) -> int:
        if len(piece) == 1 or self._table.rank(piece) >= 0:
            return 1
        return merge_count(piece, self._table.rank)


def merge_count(piece: bytes, rank: Any) -> int:
    """How many tokens byte pair merging leaves of ``piece`` (``rank(bytes) -> int``, -1 for a non-token): tiktoken's
    ``_byte_pair_merge`` (lowest-ranked adjacent pair first, leftmost on ties), by scanning for a short piece and
    with a heap of the same pairs for a long one."""
    n = len(piece)
    if n >= HEAP_FROM:
        return _merge_count_heap(piece, rank)
    none = 1 << 62
    parts = [[i, _or(rank(piece[i : i + 2]), none)] for i in range(n - 1)] + [[n - 1, none], [n, none]]

    def pair_rank(i: int) -> int:
        return _or(rank(piece[parts[i][0] : parts[i + 3][0]]), none) if i + 3 < len(parts) else none

    while True:
        best, at = none, -1
        for i in range(len(parts) - 1):
            if parts[i][1] < best:
                best, at = parts[i][1], i
        if at < 0:
            return len(parts) - 1
        if at > 0:
            parts[at - 1][1] = pair_rank(at - 1)
        parts[at][1] = pair_rank(at)
        del parts[at + 1]


def _or(rank: int, none: int) -> int:
    return none if rank < 0 else rank


def _merge_count_heap(piece: bytes, rank: Any) -> int:
    """``merge_count`` with a heap of ``(rank, start, middle, end)`` pairs, each checked when popped (a pair whose
    parts changed since it was pushed is dropped): the same merges, O(n log n)."""
    n = len(piece)
    after = list(range(1, n + 1))  # the start of the part after each part's start (n: none)
    before = list(range(-1, n))
    alive = [True] * n
    heap = [(r, i, i + 1, i + 2) for i in range(n - 1) if (r := rank(piece[i : i + 2])) >= 0]
    heapq.heapify(heap)
    parts = n
    while heap:
        _, start, middle, end = heapq.heappop(heap)
        if not alive[start] or after[start] != middle or after[middle] != end:
            continue
        alive[middle] = False
        after[start] = end
        if end < n:
            before[end] = start
        parts -= 1
        if end < n and (r := rank(piece[start : after[end]])) >= 0:
            heapq.heappush(heap, (r, start, end, after[end]))
        left = before[start]
        if left >= 0 and (r := rank(piece[left:end])) >= 0:
            heapq.heappush(heap, (r, left, start, end))
    return parts


@lru_cache(maxsize=4)
def compact_counter(name: str) -> CompactCounter:
    """The counter of vocabulary ``name`` (``PATTERNS``), its table loaded once per process.

    Raises:
        KeyError: an unknown vocabulary; FileNotFoundError, ImportError: see the module docstring."""
    return CompactCounter(load_table(name), PATTERNS[name])
