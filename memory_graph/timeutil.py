"""Time handling: parsing caller times (UTC), and resolving relative dates in text with ``dateparser``.

All times are stored as ISO-8601 UTC strings of the fixed form ``YYYY-MM-DDTHH:MM:SSZ`` so that SQL string
comparison orders them; Chroma metadata carries the same instants as integer seconds since the epoch.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

import dateparser

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def parse_time(value: datetime | date | str | None, *, default_now: bool = True) -> datetime | None:
    """Parse ``value`` into an aware UTC datetime.

    Accepts a datetime (naive = UTC), a date (midnight UTC), an ISO-8601 string, or a date phrase that
    ``dateparser`` understands ("1:56 pm on 8 May, 2023", "2024-06-02"). ``None`` gives the current time
    when ``default_now`` else ``None``.

    Raises:
        ValueError: the value is not a time (empty, unparseable, wrong type).
    """
    if value is None:
        return datetime.now(timezone.utc).replace(microsecond=0) if default_now else None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError("time is empty")
        try:
            dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            if re.match(r"^\d{4}-\d{1,2}-\d{1,2}", text):  # ISO-shaped but invalid (month 13): no guessing
                raise ValueError(f"not a valid time: {value!r}") from None
            parsed = dateparser.parse(
                text, settings={"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True, "STRICT_PARSING": False}
            )
            if parsed is None:
                raise ValueError(f"not a valid time: {value!r}") from None
            dt = parsed
    else:
        raise ValueError(f"time must be a datetime or ISO-8601 string, got {type(value).__name__}")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).replace(microsecond=0)


def to_iso(dt: datetime | None) -> str | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC, or None."""
    if dt is None:
        return None
    return dt.astimezone(timezone.utc).strftime(ISO_FORMAT)


def from_iso(text: str | None) -> datetime | None:
    """Inverse of :func:`to_iso`."""
    if not text:
        return None
    return datetime.strptime(text, ISO_FORMAT).replace(tzinfo=timezone.utc)


def to_epoch(text: str | None, default: int) -> int:
    """Seconds since the epoch of an ISO UTC string, or ``default`` when absent."""
    dt = from_iso(text)
    return int(dt.timestamp()) if dt else default


_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_NUMBER = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of)"
RELATIVE_RE = re.compile(
    rf"\b(?:yesterday|today|tonight|this morning|last night|"
    rf"(?:last|this past|past) (?:week|weekend|month|year|{_WEEKDAYS})|"
    rf"{_NUMBER} (?:day|week|month|year)s? ago|"
    rf"(?:in|on|since) (?:{_MONTHS})(?: \d{{1,2}})?(?:,? \d{{4}})?|"
    rf"\d{{4}}-\d{{2}}-\d{{2}})\b",
    re.IGNORECASE,
)


def resolve_relative(text: str, base: datetime) -> tuple[datetime | None, str | None]:
    """Find the first date expression in ``text`` and resolve it against ``base`` (the observation's time).

    Returns ``(absolute_utc_datetime, matched_phrase)`` or ``(None, None)`` when the text names no date.
    "last week" said on 2024-06-10 gives 2024-06-03. Uses ``dateparser`` for the arithmetic.
    """
    match = RELATIVE_RE.search(text)
    if not match:
        return None, None
    phrase = match.group(0)
    cleaned = re.sub(r"^(?:in|on|since) ", "", phrase, flags=re.IGNORECASE)
    cleaned = re.sub(r"^(?:this past|past) ", "last ", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\ba few\b", "3", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\ba couple of\b", "2", cleaned, flags=re.IGNORECASE)
    cleaned = {"tonight": "today", "this morning": "today", "last night": "yesterday"}.get(cleaned.lower(), cleaned)
    naive_base = base.astimezone(timezone.utc).replace(tzinfo=None)
    parsed = dateparser.parse(
        cleaned,
        settings={
            "RELATIVE_BASE": naive_base,
            "PREFER_DATES_FROM": "past",
            "TIMEZONE": "UTC",
            "RETURN_AS_TIMEZONE_AWARE": True,
        },
    )
    if parsed is None:
        return None, None
    return parsed.astimezone(timezone.utc).replace(microsecond=0), phrase
