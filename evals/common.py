"""Shared pieces of the eval suites: the turn record, seed sets, deterministic random streams, time helpers.

Seed sets (disjoint, fixed; the suites report on TEST seeds unless ``--seeds`` says otherwise):

- ``TRAIN_SEEDS`` = 0..99: free for anyone tuning the system (thresholds, weights, priors).
- ``DEV_SEEDS`` = 100..199: for checking a tuned setting before it is frozen.
- ``TEST_SEEDS`` = 1000..1099: for reported numbers only; never look at them while tuning.

A generator or reader never uses Python's ``hash`` (salted per process) or the global ``random`` state: every
stream comes from :func:`rng`, keyed by integers and strings through CRC-32, so one seed gives one result.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

TRAIN_SEEDS: tuple[int, ...] = tuple(range(0, 100))
DEV_SEEDS: tuple[int, ...] = tuple(range(100, 200))
TEST_SEEDS: tuple[int, ...] = tuple(range(1000, 1100))

ISO = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class Turn:
    """One message given to a system's ``ingest``.

    Attributes:
        text: the message text.
        speaker: who said it.
        time: ISO-8601 UTC, ``YYYY-MM-DDTHH:MM:SSZ``.
        ref: the caller's id for the message (the generator's statement id, or LoCoMo's ``dia_id``).
        session_id: optional conversation session.
    """

    text: str
    speaker: str
    time: str
    ref: str
    session_id: str | None = None


def rng(*key: int | str) -> random.Random:
    """A ``random.Random`` seeded from ``key`` deterministically across processes and platforms."""
    text = "\x1f".join(str(k) for k in key)
    return random.Random(zlib.crc32(text.encode("utf-8")) * 1_000_003 + len(text))


def iso(dt: datetime) -> str:
    """``dt`` (naive = UTC) as ``YYYY-MM-DDTHH:MM:SSZ``."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime(ISO)


def parse_iso(text: str) -> datetime:
    """Inverse of :func:`iso`; also accepts any ``datetime.fromisoformat`` string (naive = UTC)."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def epoch(text: str) -> int:
    """Seconds since the epoch of an ISO time."""
    return int(parse_iso(text).timestamp())


def shift(text: str, *, days: float = 0.0, seconds: float = 0.0) -> str:
    """ISO time ``text`` moved by ``days`` and ``seconds``."""
    return iso(parse_iso(text) + timedelta(days=days, seconds=seconds))


def parse_seeds(spec: str | None, default: tuple[int, ...]) -> tuple[int, ...]:
    """Seeds from a CLI string: ``"train"``/``"dev"``/``"test"`` (whole sets, optionally ``test:10`` for the
    first 10), ``"1000,1001"`` or ``"1000-1009"`` ranges; ``None`` or ``""`` gives ``default``.

    Raises:
        ValueError: malformed spec.
    """
    if not spec:
        return default
    named = {"train": TRAIN_SEEDS, "dev": DEV_SEEDS, "test": TEST_SEEDS}
    out: list[int] = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        name, _, count = part.partition(":")
        if name in named:
            seeds = named[name]
            out.extend(seeds[: int(count)] if count else seeds)
        elif "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    if not out:
        raise ValueError(f"no seeds in {spec!r}")
    return tuple(dict.fromkeys(out))
