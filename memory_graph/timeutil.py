"""Time handling: parsing caller times (UTC), and resolving relative dates in text with ``dateparser``.

All times are stored as ISO-8601 UTC strings of the fixed form ``YYYY-MM-DDTHH:MM:SSZ`` (always a 4-digit,
zero-padded year) so that SQL string comparison orders them; Chroma metadata carries the same instants as
integer seconds since the epoch. The store holds any second from ``0001-01-01T00:00:00Z`` to
``9999-12-31T23:59:59Z`` (:data:`MIN_TIME` .. :data:`MAX_TIME`).

Older versions wrote years below 1000 unpadded (``999-05-01T00:00:00Z``); :func:`from_iso` still reads them.

Caller-supplied times (:func:`parse_time`) are strict: ISO-8601, a phrase that names a day, a month (by
name) and a year, or a relative phrase ("yesterday", "last week", "3 days ago"). Anything else (a bare name,
a bare number) is an :class:`~memory_graph.errors.InvalidInputError`, never a guess.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Any

from memory_graph.errors import InvalidInputError

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # the stored shape, for strptime-style readers; write with to_iso (pads years)
MIN_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)
MAX_TIME = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_RANGE = "0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z"

# a stored time: what to_iso writes, and what strftime("%Y") wrote before (1 to 4 digit years)
_STORED_RE = re.compile(r"([0-9]{1,4})-([0-9]{1,2})-([0-9]{1,2})T([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})Z")
# an ISO-8601 caller time (extended form, 4-digit year): never handed to dateparser's guessing
_ISO_SHAPED_RE = re.compile(r"[0-9]{4}-[0-9]")
_MONTH_NAMES_RE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|"
    r"august|september|october|november|december)\b\.?",
    re.IGNORECASE,
)
_COUNT_WORDS = "a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
# the relative phrases a caller may give (resolved against now); dateparser does the arithmetic
_CALLER_RELATIVE_RE = re.compile(
    rf"now|today|yesterday|(?:last|past|this past) (?:week|month|year)|"
    rf"(?:[0-9]{{1,4}}|{_COUNT_WORDS}) (?:second|minute|hour|day|week|month|year)s? ago",
    re.IGNORECASE,
)
_DATEPARSER_SETTINGS: dict[str, Any] = {"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True}
_ACCEPTED = ("use ISO-8601 (2024-06-02, 2024-06-02T09:00:00+02:00), a date naming day, month and year "
             "('8 May 2023', '1:56 pm on 8 May, 2023') or 'yesterday', 'last week', '3 days ago'")


def _as_utc(dt: datetime) -> datetime:
    """``dt`` in UTC (naive = UTC), whole seconds, inside the store's range.

    Raises:
        InvalidInputError: the instant falls outside ``0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z``.
    """
    if dt.tzinfo is None or dt.utcoffset() is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        utc = dt.astimezone(timezone.utc)
    except (OverflowError, OSError, ValueError):  # the offset moves it past year 1 or 9999
        raise InvalidInputError(f"time {dt.isoformat()} is outside the range the store holds ({_RANGE})") from None
    return utc.replace(microsecond=0)


def parse_time(value: datetime | date | str | None, *, default_now: bool = True) -> datetime | None:
    """Parse a caller-supplied time into an aware UTC datetime (whole seconds).

    Accepts:
        - a ``datetime`` (naive = UTC) or a ``date`` (midnight UTC);
        - an ISO-8601 string, date or date-time, with an optional offset or ``Z`` ("2024-06-02",
          "2024-06-02T11:00:00+02:00"), and the stored form of :func:`to_iso` (legacy unpadded years too);
        - a phrase naming a day, a month by name and a year, in any order ("8 May 2023",
          "1:56 pm on 8 May, 2023", LoCoMo's session dates), parsed by ``dateparser`` with
          ``STRICT_PARSING`` (day, month and year required) and English only;
        - a relative phrase, resolved against now: "now", "today", "yesterday", "last week|month|year",
          "N seconds|minutes|hours|days|weeks|months|years ago" (N a number or "a", "one" ... "twelve").

    Anything else ("Ben", "1.27", "2023", "8 May", "1/2/2023") is rejected, never guessed. ``None`` gives the
    current time when ``default_now`` else ``None``.

    Raises:
        InvalidInputError: (a ``ValueError``) the value is empty, of the wrong type, not one of the forms
            above (the message names it), or outside what the store holds (``0001-01-01T00:00:00Z`` ..
            ``9999-12-31T23:59:59Z`` once converted to UTC). No other exception escapes.
    """
    if value is None:
        return datetime.now(timezone.utc).replace(microsecond=0) if default_now else None
    if isinstance(value, datetime):
        return _as_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    if not isinstance(value, str):
        raise InvalidInputError(f"time must be a datetime or ISO-8601 string, got {type(value).__name__}")
    text = " ".join(value.split())
    if not text:
        raise InvalidInputError("time is empty")
    if _STORED_RE.fullmatch(text):
        return from_iso(text)
    if _ISO_SHAPED_RE.match(text):  # ISO-shaped but invalid (month 13, 31 June): no guessing
        iso = text[:-1] + "+00:00" if text[-1] in "Zz" else text
        try:
            dt = datetime.fromisoformat(iso)
        except ValueError:
            raise InvalidInputError(f"not a valid ISO-8601 time: {text!r}") from None
        return _as_utc(dt)
    if _CALLER_RELATIVE_RE.fullmatch(text):
        parsed = _dateparse(text, {"PARSERS": ["relative-time"]})
    elif _MONTH_NAMES_RE.search(text):
        parsed = _dateparse(text, {"STRICT_PARSING": True, "PARSERS": ["absolute-time"]})
    else:
        parsed = None
    if parsed is None:
        raise InvalidInputError(f"not a valid time: {text!r}; {_ACCEPTED}")
    return _as_utc(parsed)


def _dateparse(text: str, settings: dict[str, Any]) -> datetime | None:
    """``dateparser.parse`` in English with ``settings``; None when it finds no date or fails."""
    import dateparser  # imported on first use (0.1-0.2 s): a recall that parses no date does not pay for it

    try:
        return dateparser.parse(text, languages=["en"], settings={**_DATEPARSER_SETTINGS, **settings})
    except Exception:  # noqa: BLE001 - a third-party heuristic: any failure means "not a time we accept"
        return None


def to_iso(dt: datetime | None) -> str | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` in UTC (4-digit zero-padded year, microseconds dropped), or None.

    A naive ``dt`` is taken as UTC. Strings of instants in the store's range sort in time order.

    Raises:
        InvalidInputError: ``dt`` is aware and its UTC instant falls outside year 1 .. 9999.
    """
    if dt is None:
        return None
    u = _as_utc(dt)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def from_iso(text: str | None) -> datetime | None:
    """Inverse of :func:`to_iso`: an aware UTC datetime, or None for None / "".

    Also reads what older versions wrote for years below 1000 (``999-05-01T00:00:00Z``): any year 1 .. 9999,
    padded or not.

    Raises:
        InvalidInputError: ``text`` is not of the form ``Y-MM-DDTHH:MM:SSZ`` (1 to 4 digit year) or names no
            real instant (year 0, month 13, 30 February).
    """
    if not text:
        return None
    match = _STORED_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidInputError(f"not a stored time (YYYY-MM-DDTHH:MM:SSZ): {text!r}")
    try:
        year, month, day, hour, minute, second = (int(g) for g in match.groups())
        return datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    except ValueError:
        raise InvalidInputError(f"not a valid stored time (YYYY-MM-DDTHH:MM:SSZ): {text!r}") from None


def to_epoch(text: str | None, default: int) -> int:
    """Whole seconds since 1970-01-01T00:00:00Z of a stored time (any year 1 .. 9999; negative before 1970),
    or ``default`` when ``text`` is None or "".

    Raises:
        InvalidInputError: ``text`` is not a stored time (see :func:`from_iso`).
    """
    dt = from_iso(text)
    return (dt - _EPOCH) // timedelta(seconds=1) if dt else default


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

    Returns ``(absolute_utc_datetime, matched_phrase)`` (whole seconds) or ``(None, None)`` when the text
    names no date, or names one the store cannot hold (before year 1 or after 9999, "3 days ago" said on
    0001-01-01) or that does not exist ("2024-13-01"). "last week" said on 2024-06-10 gives 2024-06-03. ISO
    dates in the text are read exactly (years 0001 .. 9999); ``dateparser`` does the other arithmetic.

    Never raises: message text is data, and a date in it that cannot be resolved is simply not used.
    """
    try:
        return _resolve_relative(text, base)
    except Exception:  # noqa: BLE001 - documented: a date that cannot be resolved is no date
        return None, None


def _resolve_relative(text: str, base: datetime) -> tuple[datetime | None, str | None]:
    match = RELATIVE_RE.search(text)
    if not match:
        return None, None
    phrase = match.group(0)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", phrase):  # exact, never dateparser's guess (2024-13-01 -> 13 Jan)
        try:
            day = date.fromisoformat(phrase)
        except ValueError:
            return None, None
        return datetime(day.year, day.month, day.day, tzinfo=timezone.utc), phrase
    cleaned = re.sub(r"^(?:in|on|since) ", "", phrase, flags=re.IGNORECASE)
    cleaned = re.sub(r"^(?:this past|past) ", "last ", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\ba few\b", "3", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\ba couple of\b", "2", cleaned, flags=re.IGNORECASE)
    cleaned = {"tonight": "today", "this morning": "today", "last night": "yesterday"}.get(cleaned.lower(), cleaned)
    naive_base = _as_utc(base).replace(tzinfo=None)
    import dateparser

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
    return _as_utc(parsed), phrase
