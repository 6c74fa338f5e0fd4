"""Times at the edges of what the store can hold (issue 10).

``to_iso`` must always write a 4-digit year (older versions wrote ``999-05-01T00:00:00Z``, which ``from_iso``
then rejected, so the store could no longer be opened); ``from_iso`` still reads such legacy rows;
``parse_time`` turns every failure into ``InvalidInputError`` and rejects what the store cannot hold;
``resolve_relative`` never raises. Caller-supplied times are strict: ISO-8601, a phrase naming day, month
and year, or a relative phrase; a bare name or number is rejected, never guessed as "now".

The pure functions are tested without loading the embedder; one end-to-end test goes through ``Memory``.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.runner import default_data
from memory_graph.errors import InvalidInputError
from memory_graph.timeutil import (
    MAX_TIME,
    MIN_TIME,
    from_iso,
    parse_time,
    resolve_relative,
    to_epoch,
    to_iso,
)

UTC = timezone.utc
LOCOMO = default_data()  # $MEMORY_GRAPH_LOCOMO, else ../shared/data/locomo next to the repository

in_range = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)).map(
    lambda d: d.replace(microsecond=0, tzinfo=UTC)
)


# ---- to_iso / from_iso / to_epoch ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dt", "text"),
    [
        (datetime(999, 5, 1, tzinfo=UTC), "0999-05-01T00:00:00Z"),
        (datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00Z"),
        (datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), "9999-12-31T23:59:59Z"),
        (datetime(2024, 6, 2, 9, 0, 0, 750_000, tzinfo=UTC), "2024-06-02T09:00:00Z"),
        (datetime(2024, 6, 2, 11, 0, tzinfo=timezone(timedelta(hours=2))), "2024-06-02T09:00:00Z"),
        (datetime(2024, 6, 2, 9, 0), "2024-06-02T09:00:00Z"),  # naive = UTC, as everywhere in this module
    ],
)
def test_to_iso_pads_the_year(dt: datetime, text: str) -> None:
    assert to_iso(dt) == text
    assert from_iso(text) == dt.replace(microsecond=0) if dt.tzinfo else dt.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("legacy", "expected"),
    [
        ("999-05-01T00:00:00Z", datetime(999, 5, 1, tzinfo=UTC)),  # what strftime("%Y") wrote below 1000
        ("1-01-01T00:00:00Z", datetime(1, 1, 1, tzinfo=UTC)),
        ("99-12-29T10:20:30Z", datetime(99, 12, 29, 10, 20, 30, tzinfo=UTC)),
        ("0999-05-01T00:00:00Z", datetime(999, 5, 1, tzinfo=UTC)),
    ],
)
def test_from_iso_reads_legacy_unpadded_years(legacy: str, expected: datetime) -> None:
    assert from_iso(legacy) == expected
    assert to_iso(from_iso(legacy)) == to_iso(expected)
    assert to_epoch(legacy, 0) == int((expected - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds())


@pytest.mark.parametrize(
    "garbage", ["garbage", "0000-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-06-02", "12345-01-01T00:00:00Z",
                "2024-06-02T09:00:00+02:00", "２０２４-06-02T09:00:00Z"],
)
def test_from_iso_garbage_is_invalid_input(garbage: str) -> None:
    with pytest.raises(InvalidInputError, match="stored time"):
        from_iso(garbage)


def test_to_epoch_any_year() -> None:
    assert to_epoch("0001-01-01T00:00:00Z", 7) == -62135596800
    assert to_epoch("9999-12-31T23:59:59Z", 7) == 253402300799
    assert to_epoch("1970-01-01T00:00:00Z", 7) == 0
    assert to_epoch(None, 7) == 7 and to_epoch("", 7) == 7


@settings(max_examples=300, deadline=None)
@given(in_range)
def test_round_trip_any_time_in_range(dt: datetime) -> None:
    text = to_iso(dt)
    assert text is not None and len(text) == 20, text
    assert from_iso(text) == dt
    assert parse_time(text) == dt
    assert to_epoch(text, 0) == int((dt - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds())


@settings(max_examples=300, deadline=None)
@given(in_range, in_range)
def test_stored_strings_sort_in_time_order(a: datetime, b: datetime) -> None:
    ta, tb = to_iso(a), to_iso(b)
    assert ta is not None and tb is not None
    assert (ta < tb) == (a < b) and (ta == tb) == (a == b)


# ---- parse_time: range and errors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:59:59-01:00",  # 10000-01-01 in UTC
        "0001-01-01T00:00:00+01:00",  # year 0 in UTC
        datetime(9999, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-1))),
        datetime(1, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1))),
    ],
)
def test_parse_time_out_of_store_range_is_invalid_input(value: str | datetime) -> None:
    with pytest.raises(InvalidInputError, match="0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z"):
        parse_time(value)


def test_parse_time_edges_of_the_range() -> None:
    assert parse_time("0001-01-01T00:00:00Z") == MIN_TIME
    assert parse_time("9999-12-31T23:59:59Z") == MAX_TIME
    assert parse_time("9999-12-31T23:59:59.999999+00:00") == MAX_TIME
    assert parse_time("0001-01-01T01:00:00+01:00") == MIN_TIME
    assert parse_time(date(1, 1, 1)) == MIN_TIME
    assert parse_time("999-05-01T00:00:00Z") == datetime(999, 5, 1, tzinfo=UTC)  # a legacy stored time


@pytest.mark.parametrize("value", [3, 1.27, b"2024-06-02", ["2024"], object()])
def test_parse_time_wrong_type(value: object) -> None:
    with pytest.raises(InvalidInputError, match="must be a datetime"):
        parse_time(value)  # type: ignore[arg-type]


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60))
def test_parse_time_raises_only_invalid_input(text: str) -> None:
    try:
        dt = parse_time(text)
    except InvalidInputError:
        return
    assert dt is not None and dt.tzinfo is not None and MIN_TIME <= dt <= MAX_TIME


@settings(max_examples=150, deadline=None)
@given(st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?)?([+-][0-9]{2}:[0-9]{2}|Z)?\Z"))
def test_parse_time_iso_shaped_text_raises_only_invalid_input(text: str) -> None:
    try:
        dt = parse_time(text)
    except InvalidInputError:
        return
    assert dt is not None and MIN_TIME <= dt <= MAX_TIME


# ---- parse_time: strict caller times ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-06-02", datetime(2024, 6, 2, tzinfo=UTC)),
        ("2024-06-02T09:00:00", datetime(2024, 6, 2, 9, tzinfo=UTC)),
        ("2024-06-02T09:00:00Z", datetime(2024, 6, 2, 9, tzinfo=UTC)),
        ("2024-06-02T11:00:00+02:00", datetime(2024, 6, 2, 9, tzinfo=UTC)),
        ("2024-06-02 09:00", datetime(2024, 6, 2, 9, tzinfo=UTC)),
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),  # LoCoMo's session dates
        ("10:04 am on 19 January, 2023", datetime(2023, 1, 19, 10, 4, tzinfo=UTC)),
        ("8 May 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("May 8, 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("2023 May 8", datetime(2023, 5, 8, tzinfo=UTC)),
        ("8th of May 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("8 May 2023 10:00 +0200", datetime(2023, 5, 8, 8, tzinfo=UTC)),
    ],
)
def test_parse_time_accepts_explicit_dates(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize(
    ("text", "ago"),
    [
        ("now", timedelta(0)),
        ("today", timedelta(0)),
        ("yesterday", timedelta(days=1)),
        ("last week", timedelta(days=7)),
        ("3 days ago", timedelta(days=3)),
        ("a week ago", timedelta(days=7)),
        ("2 months ago", timedelta(days=61)),
        ("  Three  Days Ago ", timedelta(days=3)),
    ],
)
def test_parse_time_accepts_relative_phrases(text: str, ago: timedelta) -> None:
    now = datetime.now(UTC)
    got = parse_time(text)
    assert got is not None
    slack = timedelta(days=2) if "month" in text else timedelta(minutes=2)
    assert abs((now - got) - ago) <= slack, (text, got)


@pytest.mark.parametrize(
    "text",
    ["Ben", "1.27", "12", "2023", "1/27", "1 27", "8 May", "May 2023", "Monday", "noon", "3 days", "in 3 days",
     "1/2/2023", "2024-13-01", "2024-06-31", "999-05-01", "not a time at all", "yesterdayish", "x 3 days ago"],
)
def test_parse_time_rejects_guesses(text: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_time(text)
    assert repr(text.strip()) in str(info.value)


def test_parse_time_empty_and_none() -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        parse_time("   ")
    assert parse_time(None, default_now=False) is None
    now = parse_time(None)
    assert now is not None and abs(datetime.now(UTC) - now) < timedelta(minutes=1)


def test_every_locomo_session_date_parses() -> None:
    files = sorted(LOCOMO.glob("*.json"))
    if not files:
        pytest.skip(f"no LoCoMo data in {LOCOMO}")
    count = 0
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        conv = data.get("conversation", data)
        for key, value in conv.items():
            if key.endswith("_date_time"):
                dt = parse_time(value)
                assert dt is not None and 2020 <= dt.year <= 2030, (path.name, value)
                count += 1
    assert count > 100


# ---- resolve_relative ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "base", "expected"),
    [
        ("I moved to C++ 3 days ago.", datetime(1000, 1, 1, tzinfo=UTC), datetime(999, 12, 29, tzinfo=UTC)),
        ("I moved to Porto on 0999-05-01.", datetime(2024, 1, 1, tzinfo=UTC), datetime(999, 5, 1, tzinfo=UTC)),
        ("I moved to Porto on 0001-01-01.", datetime(2024, 1, 1, tzinfo=UTC), MIN_TIME),
        ("I moved last week.", datetime(2024, 6, 10, tzinfo=UTC), datetime(2024, 6, 3, tzinfo=UTC)),
    ],
)
def test_resolve_relative_far_dates(text: str, base: datetime, expected: datetime) -> None:
    when, phrase = resolve_relative(text, base)
    assert when == expected and phrase
    assert from_iso(to_iso(when)) == expected


@pytest.mark.parametrize(
    ("text", "base"),
    [
        ("I moved 3 days ago.", MIN_TIME),  # before year 1
        ("I moved last year.", datetime(1, 3, 1, tzinfo=UTC)),
        ("We met on 0000-01-01.", datetime(2024, 1, 1, tzinfo=UTC)),
        ("Due on 2024-13-01.", datetime(2024, 1, 1, tzinfo=UTC)),  # not a date: no guess (13 Jan)
        ("Due on 2024-02-30.", datetime(2024, 1, 1, tzinfo=UTC)),
    ],
)
def test_resolve_relative_unrepresentable_is_none(text: str, base: datetime) -> None:
    assert resolve_relative(text, base) == (None, None)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), in_range)
def test_resolve_relative_never_raises(text: str, base: datetime) -> None:
    when, phrase = resolve_relative(text, base)
    assert (when is None) == (phrase is None)
    if when is not None:
        assert MIN_TIME <= when <= MAX_TIME and to_iso(when) is not None


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["3 days ago", "a year ago", "last week", "yesterday", "on 0001-01-01", "on 9999-12-31",
                        "in May", "since June 3, 0999", "last month", "10 years ago"]), in_range)
def test_resolve_relative_phrases_at_any_base(phrase: str, base: datetime) -> None:
    when, found = resolve_relative(f"I moved {phrase}.", base)
    assert (when is None) == (found is None)
    if when is not None:
        assert MIN_TIME <= when <= MAX_TIME


# ---- end to end through the public API -----------------------------------------------------------------


def test_far_dates_do_not_brick_the_store(tmp_path: Path) -> None:
    from memory_graph import Memory

    store = tmp_path / "s"
    with Memory(store, user_id="mallory") as m:
        m.observe("I moved to Porto on 0999-05-01.")
        m.observe("I moved to Porto on 0001-01-01.")
        m.observe("I moved to C++ 3 days ago.", time="1000-01-01")
        with pytest.raises(InvalidInputError):
            m.observe("I moved to Oslo.", time="9999-12-31T23:59:59-01:00")
        with pytest.raises(InvalidInputError):
            m.observe("I moved to Oslo.", time="Ben")
        with pytest.raises(InvalidInputError):
            m.recall("Where do I live?", as_of="1.27")
        info = m.inspect()
        assert info["observations"] == 3, info
    with Memory(store, user_id="other") as other:  # reopening reconciles every stored row
        assert other.recall("Where do I live?").items == []
        assert other.inspect()["observations"] == 0
    with Memory(store, user_id="mallory") as m:
        recall = m.recall("Where did I move?", include_history=True)
        assert recall.items and any("Porto" in it.text for it in recall.items)
        for it in recall.items:
            assert it.valid_from is None or from_iso(it.valid_from) is not None
            if it.kind != "observation":  # raw messages are cited [o:ID]; inspect takes memory ids
                m.inspect(it.id)
        old = m.recall("Where did I move?", as_of="1000-01-01")
        assert old is not None
        stored = [r["valid_from"] for r in m.inspect()["recent"]]
        assert stored and all(len(v) == 20 for v in stored if v), stored
        assert "0999-12-29T00:00:00Z" in stored, stored
