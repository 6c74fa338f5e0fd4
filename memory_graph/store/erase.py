"""Hard delete: erase a memory, what it came from and what carries or quotes it, from every file; nothing else.

``Store.erase(namespace, memory_ids, observation_ids)`` removes, in one ledger transaction, within ``namespace`` only
(:func:`plan`, :func:`apply`):

1. **by identity**: the memories asked for, the messages (observations) they were formed from and the messages
   asked for, the memories formed from those messages (one that another, surviving message also supports is kept
   without the erased source: ``Plan.kept``), and every record formed from or carrying them: provenance, links,
   events, statistics, index records, the ``BaseStore`` items whose text became an erased message, the recall
   records whose query *is* an erased message (``Plan.same``, :func:`same_text`: each chat turn's recall record;
   fourth breaker run) with their feedback, and the messages of the user's own chat threads that are, or were
   observed as, an erased message;
2. **by quotation**: every other message, memory, item, recall record, link reason and event detail of the
   namespace that quotes identifying parts of what 1 erased (:func:`needles_of`): a whole erased text of at least
   ``QUOTE_MIN_WORDS`` words and ``QUOTE_MIN_CHARS`` characters; an identifier of any erased text
   (:func:`identifiers`: an e-mail address, a phone number, an IBAN or account number, an SSN, a personal code of
   letters and digits in any script, written with or without separators; not a period, range, amount, version or
   product term); the value of a secret or identifying slot whatever its shape (:data:`IDENTIFYING`,
   :func:`secret_values`, :func:`value_needle`: "4471", "hunter2"); ``m:ID`` of an erased memory; and, for a
   ``forget`` (``slot_words``), a rare word of the forgotten memory's short slot value when the slot names someone
   (:func:`names_someone`: "Zorblax", not the employer "Northwind"), never of a whole sentence (a note);
3. **no cascade**: the needles come from 1 only, never from a text erased in 2 because it quoted them (erasing a
   locker code took the message naming it, then through that message's rare words two messages that did not).

Then a memory that only erased memories had superseded or retracted becomes current again (``_restore_heads``:
erasing "I moved to Porto" makes "I live in Lisbon" current again), unless a newer version survives above the
erased one (``chain_bridges``: erasing Porto in Lisbon -> Porto -> Berlin). The other versions of an erased
memory's chain are other statements and stay (forget each to erase it).

What is erased is remembered as salted digests of its ids and refs (``memory_graph.store.tombstones``, never the
text), so an import of an older export skips it.

Then the vectors: the index records are queued in ``index_drops`` inside the same transaction (so a crash
before they are dropped is finished by the next open) and dropped, Chroma's own log is purged of their vectors
(``Store._purge_index_files``), and both SQLite files are VACUUMed. Chat threads of the user in ``threads.sqlite3``
are rewritten without the messages that carry or quote erased content (``memory_graph.store.checkpoints``); a
thread of no known owner is left as it is (``Store.finish_erasures``).

Matching (:func:`quotes`): a whole text or ``m:ID`` as a substring, a word needle (an identifier, a rare word) as a
whole word whose separators are optional both ways ("7734-QK", "7734 QK" and "7734QK" are one code; "LH714" is not
in "LH7140"), both sides case folded with accents dropped (:func:`fold`). Every row of the namespace is judged by
that one function, with no SQL prefilter that could be stricter: O(namespace) per hard delete, like its index
compaction; a hard delete is rare and never on a hot path. Not identifiers: a time, a date, an amount, a count, a
year, a number with a unit ("10:30am", "2025-06-10", "1,200", "500mg"), a common word with a number ("covid19").
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_graph.store import tombstones
from memory_graph.store.items import path_ref, value_strings
from memory_graph.store.ledger import Ledger
from memory_graph.store.tx import Tx, now_iso

DISTINCTIVE_ZIPF = 2.0
QUOTE_MIN_CHARS = 40
QUOTE_MIN_WORDS = 8
"""An erased text is searched for in other rows only when it is at least this long (characters and words): a
shorter one ("Thank you very much!", "the meeting is at noon") opens unrelated messages too often."""
SLOT_MAX_WORDS = 3
"""A structured memory's value of at most this many words is a *slot value* ("Zorblax", "Ameli Brandt"): its rare
words are names, needles of a ``forget``. A longer value, and a note's value (its whole sentence), gives none."""
_LETTER = r"[^\W\d_]"
_CODE = re.compile(rf"(?=\w*{_LETTER})(?=\w*\d)[^\W_]{{5,}}")
"""A code: letters (any script) and digits mixed, 5 or more of them, no other character (``7734qk``, ``x12345678``,
``łódź7734``)."""
_MEASURE = re.compile(
    r"\d+(?:am|pm|st|nd|rd|th|s|h|k|m|x|p|i|kgs?|kms?|mg|ml|mm|cm|gb|mb|kb|tb|g?hz|mins?|hrs?|hours?|"
    r"days?|wks?|weeks?|yrs?|years?|lbs?|miles?|mph|kph|usd|eur|gbp|jpy|chf|cad|aud|inr|pts?)"
)
"""A number with a unit or an ordinal (``1030am``, ``10000steps`` is not: ``2nd``, ``500mg``, ``12th``)."""
_MEASURES = re.compile(f"(?:{_MEASURE.pattern})+")
_PUNCT = ".,;:!?\"'()[]{}<>«»“”‘’…"
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DIGIT_RUN = re.compile(r"(?<!\w)\+?\(?\d[\d \-./()]*\d\)?(?!\w)")
"""Digits with separators (a phone number, an SSN, an account number), not part of a word."""
_DATE = re.compile(r"(?<!\d)(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?!\d)")
_THOUSANDS = re.compile(r"\d{1,3}(?:[ .,']\d{3})+(?:[.,]\d+)?")
_YEAR = re.compile(r"(?:19|20)\d\d")
CODE_DIGITS_ALWAYS = 6
"""A code of letters and digits with at least this many digits is an identifier whatever its letters
(``alpha247514q9``); one with fewer is an identifier only when its letters are no word or known term."""
TERM_ZIPF = 2.0
"""A run of 3+ letters of a code at or above this ``wordfreq`` Zipf frequency is a word or a known term ("gpt" 2.4,
"rtx" 2.3, "hba" 2.1, "llama", "log"): the code is a product, a model or a medical/tech term, not a person's
identifier (fifth breaker run: "GPT-4o", "RTX 4090", "HbA1c" erased unrelated facts)."""
_TERMS = frozenset(
    [
        "gpt",
        "gtx",
        "rtx",
        "utf",
        "sha",
        "md",
        "ddr",
        "lte",
        "ipv",
        "ios",
        "usb",
        "hdmi",
        "cpu",
        "gpu",
        "ssd",
        "hdd",
        "ram",
        "wcag",
        "iso",
        "pci",
        "soc",
        "nba",
        "fifa",
        "arm",
        "amd",
        "intel",
        "cov",
        "sars",
        "hba",
        "bmw",
        "vw",
        "audi",
        "mac",
        "win",
        "ecma",
        "mpeg",
        "aac",
        "avc",
        "hevc",
    ]
)
"""Known terms whose letters may be rare in wordfreq yet never a person's identifier."""
_CURRENCIES = (
    "usd|eur|gbp|jpy|chf|cad|aud|inr|cny|rmb|sek|nok|dkk|pln|czk|huf|brl|mxn|zar|nzd|sgd|hkd|krw|rub|ils|aed|"
    "sar|thb|idr|php|myr|vnd|btc|eth|ron|bgn|isk|try"
)
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec"
_VERSION = re.compile(r"[vV]?\d+(?:\.\d+){1,3}(?:[-+.]?[A-Za-z]+\d*)?")
"""A version number (``v18.17.0``, ``3.11.4``, ``1.2.3-beta1``)."""
_IP = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
DIGITS_MIN = 7
"""A run of digits is an identifier (a phone, an SSN, an account number) from this many digits: fewer is a
count, an amount, a time or a year."""
_SEP = r"[\W_]{0,3}"
"""What may stand between two letters or digits of a word needle in a text: up to three characters that are neither
(spaces, punctuation, dashes, symbols, accents), whatever the needle has there (separators optional, in both
directions)."""


def distinctive_values(values: list[str], codes_only: bool = False) -> list[str]:
    """The identifiers of ``values`` (:func:`identifiers`) and, unless ``codes_only``, their words rare in English
    (:func:`rare_words`): what marks a quote of them wherever it is."""
    out: list[str] = []
    for value in values:
        out += identifiers(value)
        if not codes_only:
            out += rare_words(value)
    return list(dict.fromkeys(out))


def rare_words(value: str) -> list[str]:
    """The words of ``value`` rare in English (``wordfreq`` Zipf frequency below ``DISTINCTIVE_ZIPF``, letters only,
    at least 5 characters): a name ("Zorblax", "Okonkwo")."""
    from wordfreq import zipf_frequency

    words = (raw.strip(_PUNCT) for raw in value.split())
    return [w for w in words if w.isalpha() and len(w) >= 5 and zipf_frequency(w, "en") < DISTINCTIVE_ZIPF]


def identifiers(text: str) -> list[str]:
    """The identifying data a text holds, each as a word needle (no whitespace; matched with its separators optional,
    :func:`_word_pattern`): what a person who asks to be forgotten would call their identifying data.

    - an e-mail address (``dana.k@example.com``);
    - a code: letters (any script) and digits mixed in one word (``QX4471``, ``7734-QK``, ``ŻÓŁW4471``), not a number
      with a unit (``10:30am``, ``500mg``), a common word with a number (``covid19``) or a period (``FY2024``)
      (:func:`_is_code`);
    - a code written in groups (``7734 QK``, an IBAN ``DE89 3704 0044 0532 0130 00``, a postcode ``SW1A 1AA``):
      neighbouring words of digits or capitals that together are a code, as one needle (``7734QK``);
    - digits in groups, at least ``DIGITS_MIN`` of them (a phone ``+49 170 5550123``, an SSN ``078-05-1120``, an
      account or card number), as their digits (``491705550123``); not a date, an amount with thousands separators,
      a decimal or a list of years.

    A time, a date, an amount or a count ("10:30am", "2025-06-10", "1,200", "10000") is no identifier: deleting
    "call mom 10:30am" erased "My dentist appointment is at 10:30am on Friday." (breaker run, issue 21). Nor is a
    range ("2019-2024", "60000-75000"), a period ("Q3 2024"), a list of small numbers, an amount with a currency
    ("CHF 200"), an IP address, a version ("v18.17.0") or a product/tech/health term ("GPT-4o", "RTX 4090",
    "HbA1c", "x86_64"): :func:`_is_code` (fifth breaker run, F1/F2; when in doubt, no identifier)."""
    out = [m.group(0).strip(".").lower() for m in _EMAIL.finditer(text)]
    rest = _EMAIL.sub(" ", text)
    for raw in rest.split():
        word = raw.strip(_PUNCT)
        if not _VERSION.fullmatch(word) and _is_code(_core(word), word):
            out.append(word)
    out += _grouped_codes(rest)
    for m in _DIGIT_RUN.finditer(rest):
        run = m.group(0).strip("() ")
        digits = re.sub(r"\D", "", run)
        if len(digits) < DIGITS_MIN or _DATE.search(run) or re.fullmatch(r"\d+[.,]\d+", run):
            continue
        if not run.startswith("+") and (
            _THOUSANDS.fullmatch(run)
            or (" " in run and any(_YEAR.fullmatch(group) for group in run.split()))
            or all(_YEAR.fullmatch(group) for group in re.split(r"[\s,;/]+", run))
            or _is_number_list(run)
            or _is_range(run)
            or _IP.fullmatch(run)
            or _VERSION.fullmatch(run)
        ):
            continue
        out.append(digits)
    return list(dict.fromkeys(out))


def _is_number_list(run: str) -> bool:
    """Whether a run of digits is a list of small numbers (``10 12 14 16``, ``4 8 15 16 23 42``): groups of at most
    two digits, none with a leading zero (``06 12 34 56 78`` is a phone)."""
    groups = re.split(r"[\s,;/]+", run.strip())
    return len(groups) >= 2 and all(re.fullmatch(r"[1-9]\d?", g) for g in groups)


def _is_range(run: str) -> bool:
    """Whether a run of digits is a range of two numbers (``2019-2024``, ``60000-75000``, ``10.000-15.000``,
    ``1299.00 - 1499.00``): two sides joined by a dash, of the same shape, neither with a leading zero, the second
    larger (``555-0123`` and ``078-05-1120`` are not)."""
    sides = re.split(r"\s*[-\u2013\u2014]\s*", run.strip())
    if len(sides) != 2 or any(not s or s[0] == "0" for s in sides):
        return False
    shape = [re.sub(r"\d", "9", s) for s in sides]
    if shape[0] != shape[1]:
        return False

    def value(side: str) -> float:
        whole = re.sub(r"[.,' ](?=\d{3}(?:\D|$))", "", side)
        return float(whole.replace(",", "."))

    try:
        return value(sides[1]) > value(sides[0])
    except ValueError:
        return False


def _core(word: str) -> str:
    return re.sub(r"[-_/.\s]", "", word.lower())


def _grouped_codes(text: str) -> list[str]:
    """Codes written in groups (``7734 QK``): maximal runs of at least two neighbouring words each of digits or of
    capitals (up to 4 letters, or mixed with digits) whose joined form is a code; a common English word at either end
    ("OK", "I") is not part of it, nor a word of letters at either end when the rest is a code without it (a label:
    "IBAN DE89 3704 ...", "PIN 7734 QK"). A word's leading or trailing punctuation ends the run."""
    from wordfreq import zipf_frequency

    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        while run and run[-1].isalpha() and zipf_frequency(run[-1], "en") >= 3.0:
            run.pop()
        while run and run[0].isalpha() and zipf_frequency(run[0], "en") >= 3.0:
            run.pop(0)
        for end in (0, -1):  # a label ("IBAN DE89 ...", "PIN 7734 QK") is no part of the code it names
            while (
                len(run) > 2
                and run[end].isalpha()
                and _is_code(_core("".join(run[1:] if end == 0 else run[:-1])))
            ):
                run.pop(end)
        if len(run) >= 2 and _is_code(_core("".join(run)), " ".join(run)):
            out.append("".join(run))
        run.clear()

    for raw in text.split():
        word = raw.strip(_PUNCT)
        if raw[: len(raw) - len(raw.lstrip(_PUNCT))]:
            flush()
        part = word.isalnum() and (
            word.isdigit() or (word.isupper() and (len(word) <= 4 or not word.isalpha()))
        )
        if not part or len(word) > 12:
            flush()
            continue
        run.append(word)
        if raw != raw.rstrip(_PUNCT):
            flush()
    flush()
    return out


def _is_code(core: str, word: str = "") -> bool:
    """Whether ``core`` (a word, lower case, without ``-_/.``) is a code (:data:`_CODE`) and not numbers with units
    (:data:`_MEASURE`), a common word with a number ("covid19", "iphone15") or a period ("fy2024", "q2025")."""
    if (
        not _CODE.fullmatch(core)
        or _MEASURES.fullmatch(core)
        or re.fullmatch(r"[a-z]{1,3}\d{0,2}(?:19|20)\d\d|(?:19|20)\d\d[a-z]{1,3}\d{0,2}", core)
        or re.fullmatch(rf"(?:{_CURRENCIES})\d+(?:[.,]\d+)?", core)
        or re.fullmatch(rf"\d{{0,2}}(?:{_MONTHS})\d{{0,4}}", core)
    ):
        return False
    from wordfreq import zipf_frequency

    letters = re.findall(rf"{_LETTER}+", (word or core).lower())  # "vitamin-D3": "vitamin", "d"
    digits = sum(c.isdigit() for c in core)
    if (
        digits >= CODE_DIGITS_ALWAYS
    ):  # "x12345678", "alpha247514q9": a number with a label is still the number
        return True
    if all(
        len(run) == 1 for run in letters
    ):  # "x86_64", "Q3 2024", "v18.17.0", "t3", "7800X3D": a model/period
        return False
    # a word or known term with a number ("llama3", "GPT-4o", "HbA1c", "SARS-CoV-2", "utf8mb4", "log4j", "RTX 4090")
    return not any(
        len(run) >= 3 and (zipf_frequency(run, "en") >= TERM_ZIPF or run in _TERMS) for run in letters
    )


def _quoting(led: Ledger, ns: str, table: str, column: str, needles: Sequence[str]) -> set[str]:
    """Ids of rows of ``table`` in ``ns`` whose ``column`` quotes any needle (:func:`quotes`). Every row of the
    namespace is read and judged by :func:`quotes` itself: no SQL prefilter, so nothing :func:`quotes` would find
    is missed (a prefilter on a part of a needle missed ``7734 QK`` for ``7734QK``, and SQL's ``lower`` folds ASCII
    only; breaker run, issue 21). O(namespace), as the index compaction of every hard delete."""
    if not needles:
        return set()
    return {
        r["id"]
        for r in led.query(f"SELECT id, {column} AS text FROM {table} WHERE namespace=?", (ns,))
        if quotes(r["text"], needles)
    }


def _is_word(needle: str) -> bool:
    return not needle.startswith("m:") and not any(c.isspace() for c in needle)


def _word_pattern(needle: str) -> str:
    """A word needle (an identifier, a rare word, a slot's value) as a whole word. A code mixing letters and digits,
    or a number of at least ``DIGITS_MIN`` digits (a phone, an account), is found with separators optional between
    any two of its characters (:data:`_SEP`) whatever separators the needle has: ``LH714`` is not found in
    ``LH7140``, ``7734-QK`` is found as ``7734QK`` and ``7734 QK`` (breaker runs, issue 21). A word, a name or a
    short number keeps its own separators only (optional there, never added): ``jsmith`` is not "J. Smith",
    ``1430`` (a PIN) is not "14:30" nor "$14.30", ``Ameli-Brandt`` is "Ameli Brandt" (sixth breaker run)."""
    folded = fold(needle)
    chars = [re.escape(c) for c in folded if re.match(r"[^\W_]", c)]
    if not chars:
        return re.escape(folded)
    digits = sum(c.isdigit() for c in chars)
    if 0 < digits < len(chars) or digits >= DIGITS_MIN:
        body = _SEP.join(chars)
    else:
        body = _SEP.join(re.escape(part) for part in re.split(r"[\W_]+", folded) if part)
    return _whole(body, chars[0][-1], chars[-1][-1])  # an escaped letter or digit is itself


def _whole(body: str, first: str, last: str) -> str:
    """``body`` (a pattern whose match begins with the character ``first`` and ends with ``last``) as a whole word:
    not inside a longer word, and a number not inside a longer number written in groups (:data:`_NOT_AFTER_DIGITS`)."""
    head = (r"(?<!\w)" if re.match(r"\w", first) else "") + (_NOT_AFTER_DIGITS if first.isdigit() else "")
    tail = (r"(?!\w)" if re.match(r"\w", last) else "") + (r"(?![ \-./()]{1,3}\d)" if last.isdigit() else "")
    return head + body + tail


_NOT_ALNUM = re.compile(r"[\W_]+")
_NOT_AFTER_DIGITS = r"(?<!\d[ \-./()])(?<!\d[ \-./()]{2})(?<!\d[ \-./()]{3})"
"""A needle that starts with a digit is not found right after a digit group joined to it by a separator, nor one
that ends with a digit right before one (``1234567`` is not in "1234 567 890", ``5550123`` not in
"+1 (212) 555-0123"): a digit needle is a whole number (fifth breaker run, F7). A comma or semicolon is a list
separator, not a joiner ("PINs 4471, 5582" names 4471)."""


@functools.lru_cache(maxsize=256)
def _compiled(
    needles: tuple[str, ...],
) -> tuple[list[str], list[tuple[str, re.Pattern[str]]], list[tuple[str, int, str]]]:
    """``(substrings, [(letters and digits, pattern)], [(salt, length, digest)])`` of ``needles`` (:func:`quotes`),
    folded."""
    literals: list[str] = []
    words: list[tuple[str, re.Pattern[str]]] = []
    hashed: list[tuple[str, int, str]] = []
    for needle in needles:
        if needle.startswith(_HASHED):
            salt, length, digest = needle[len(_HASHED) :].rsplit(":", 2)
            hashed.append((salt, int(length), digest))
            continue
        if needle.startswith(_VALUE):
            value = needle[len(_VALUE) :]
            if key := _NOT_ALNUM.sub("", fold(value)):
                words.append((key, re.compile(_value_pattern(value))))
            continue
        key = _NOT_ALNUM.sub("", fold(needle)) if needle and _is_word(needle) else ""
        if key:
            words.append((key, re.compile(_word_pattern(needle))))
        elif needle:
            literals.append(fold(needle))
    return literals, words, hashed


def quotes(text: str | None, needles: Sequence[str]) -> bool:
    """Whether ``text`` quotes a needle: a whole erased text or ``m:ID`` as a case-insensitive substring, a word
    needle (no whitespace) as a whole word with its separators optional (:func:`_word_pattern`). A word needle's
    pattern is tried only where the text's letters and digits, run together, hold the needle's: a match of the
    pattern is such a run (its separators are neither), so this never misses one, and a hard delete whose needles
    are the many codes of a pasted log is not one regex alternation per character of every message."""
    if not text:
        return False
    literals, words, hashed = _compiled(tuple(needles))
    low = fold(str(text))
    if any(literal in low for literal in literals):
        return True
    for salt, length, digest in hashed:  # a whole text kept as a digest (a pending erase job): every window
        if any(_text_digest(salt, low[i : i + length]) == digest for i in range(len(low) - length + 1)):
            return True
    if not words:
        return False
    squashed = _NOT_ALNUM.sub("", low)
    return any(key in squashed and pattern.search(low) is not None for key, pattern in words)


def fold(text: str) -> str:
    """``text`` as needles and texts are compared, by the same function on both sides: case folded (``ß`` is
    ``ss``), compatibility forms decomposed (``ﬁ``, full-width digits) and accents dropped (``Zoë`` is ``zoe``; a
    mark between two letters would count as a separator)."""
    low = text.casefold()
    if low.isascii():
        return low
    return "".join(
        c for c in unicodedata.normalize("NFKD", low) if not unicodedata.category(c).startswith("M")
    )


def same_text(text: str | None) -> str:
    """``text`` as identity compares it: lower case, whitespace collapsed, without punctuation at its ends (a recall
    whose query is an erased message carries that message, ``My email is ...`` and ``my email is ...!``)."""
    return " ".join(fold(text or "").split()).strip(_PUNCT + " ")


SAME_MIN_WORDS = 2
SAME_RARE_ZIPF = 4.5


def identifies(text: str) -> bool:
    """Whether a text is specific enough that another row holding exactly it carries it (:data:`Plan.same`): at least
    ``SAME_MIN_WORDS`` words, one of them with a digit or below ``SAME_RARE_ZIPF`` (not "yes", "Thank you very
    much!", "ok thanks"). Deleting an item "yes" took the user's chat turns "Yes." (fifth breaker run, F8); a row
    that is the erased message itself (its id, its ref) goes by identity all the same."""
    from wordfreq import zipf_frequency

    words = [w.strip(_PUNCT) for w in text.split()]
    words = [w for w in words if w]
    return len(words) >= SAME_MIN_WORDS and any(
        any(c.isdigit() for c in w) or zipf_frequency(w, "en") < SAME_RARE_ZIPF for w in words
    )


def strings_of(value: Any) -> Iterator[str]:
    """Every string a value holds, depth first: a JSON value's strings (keys included), a chat message's content,
    tool calls, extra fields and artifact, the fields of any other object (a dataclass, a Pydantic model), else its
    ``repr``. What :func:`quotes_value` reads: each string is matched as it is, never through an encoding that
    escapes it (a quoted text with a newline is ``\\n`` in JSON)."""
    if isinstance(value, str):
        yield value
    elif value is None or isinstance(value, (bool, int, float)):
        return
    elif isinstance(value, bytes):
        yield value.decode("utf-8", errors="replace")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_of(key)
            yield from strings_of(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from strings_of(item)
    elif hasattr(value, "content") and hasattr(value, "additional_kwargs"):  # a LangChain message
        for field in ("content", "tool_calls", "additional_kwargs", "artifact"):
            yield from strings_of(getattr(value, field, None))
    elif hasattr(value, "model_dump"):
        yield from strings_of(value.model_dump())
    elif hasattr(value, "__dict__"):
        yield from strings_of(vars(value))
    else:
        yield repr(value)


def quotes_value(value: Any, needles: Sequence[str]) -> bool:
    """Whether any string of ``value`` (:func:`strings_of`) quotes a needle (:func:`quotes`): how a chat thread's
    messages and checkpoints are judged, the same matching as the ledger's rows."""
    return any(quotes(text, needles) for text in strings_of(value))


def needles_of(
    texts: list[str], slot_values: list[str], memory_ids: list[str], secrets: Sequence[str] = (),
    names: Sequence[str] = (),
) -> list[str]:
    """The strings whose presence marks a row as quoting erased content: whole texts of at least
    ``QUOTE_MIN_CHARS`` characters and ``QUOTE_MIN_WORDS`` words (a substring), the identifiers of every text
    (:func:`identifiers`), the rare words of ``slot_values`` (:func:`rare_words`: a name a structured memory holds,
    "Zorblax"), and ``m:ID``. A shorter text ("no", "e", "ok thanks") is no evidence of quoting: as a substring it
    is found in unrelated messages ("Northwind" holds "no"), and erasing those lost other facts (breaker run, issue
    21); its own rows are erased by identity all the same. A rare word of a whole sentence (a note: "Ugh, the coffee
    machine at Northwind broke again.") is no needle either: it is a name the sentence mentions, shared by other
    facts ("I work at Northwind as a data engineer."; fourth breaker run)."""
    quotable = [
        t.strip() for t in texts if len(t.strip()) >= QUOTE_MIN_CHARS and len(t.split()) >= QUOTE_MIN_WORDS
    ]
    found = [n for t in texts for n in identifiers(t)] + [w for v in slot_values for w in rare_words(v)]
    found += [n for v in [*secrets, *(v for t in texts for v in secret_values(t))] if (n := value_needle(v))]
    found += [n for v in names if (n := value_needle(v, name=True))]
    out = quotable + found + [f"m:{m}" for m in memory_ids]
    return sorted(set(out), key=lambda s: (len(s), s))


IDENTIFYING = re.compile(
    r"(?:^|\s)(?:name|surname|first name|last name|family name|maiden name|nickname|username|user name|login|e-?mail|"
    r"phone|mobile|phone number|address|home address|pin|password|passcode|passphrase|passwort|code|combination|"
    r"plate|licen[cs]e plate|(?:phone|mobile|account|card|passport|id|tax|membership|customer|policy|insurance|"
    r"social security) number|iban|account|ssn|passport|id|tax id|card)$",
    re.IGNORECASE,
)
"""An attribute that identifies the user or is a secret of theirs (``name``, ``surname``, ``email``, ``pin``,
``password``, ``locker code``, ``licence plate``; the attribute's last words, so ``phone model`` is not): its value is a needle whatever its shape (:func:`value_needle`;
fifth breaker run, F3). Rare words of a slot value are :func:`names_someone`'s business."""
_SECRET_WORD = r"(?:pin|code|passcode|password|passphrase|passwort|combination|plate|username|login)"
_SECRET = re.compile(
    rf"\b{_SECRET_WORD}\b(?:\s+(?:number|no\.?))?(?:\s+(?:of|for|on)\s+(?:my|the|our|your|a|an)(?:\s+[^\s\d]+){{1,2}}?)?"
    r"\s*(?:\bis\b|\bwas\b|'s\b|=|:)\s*(\S+(?:\s+\S+){0,2})"
    rf"|\buse\s+(\S+)\s+as\s+(?:the\s+|my\s+|a\s+)?(?:\w+\s+)?{_SECRET_WORD}\b"
    rf"|\b{_SECRET_WORD}(?:\s+(?:number|no\.?))?\s+(\d[^\s,.;:!?]{{3,}})"
    rf"|(?<![\w-])(\d[^\s,.;:!?]{{3,}})\s+is\s+(?:the|my|our)\s+(?:\w+\s+)?{_SECRET_WORD}\b",
    re.IGNORECASE,
)
"""What gives a secret a value: "the door code is 558213", "the PIN of my card is 4471", "password: hunter2", "use
7781 as the garage code" (sixth breaker run, N6), "pin 4471 for the visa card", "4471 is the PIN of my card", "my
pin number's 4471" (seventh). Not "the code to review is 1200 lines" (a filler needs a determiner)."""


def secret_values(text: str) -> list[str]:
    """The values a text gives to a secret ("The door code is 558213.", "password: hunter2", "plate is B-MW 1234"):
    up to three tokens after the keyword and ``is``/``:``, ending at the first common word or sentence end."""
    from wordfreq import zipf_frequency

    out = []
    for m in _SECRET.finditer(text):
        tokens: list[str] = []
        for raw in next(g for g in m.groups() if g).split():
            token = raw.rstrip(_PUNCT) if raw[-1:] in ".,;:!?)\"'" else raw
            if not token or (token.isalpha() and zipf_frequency(token, "en") >= 3.0):
                break
            tokens.append(token)
            if token != raw:
                break
        if tokens:
            out.append(" ".join(tokens))
    return out


def value_needle(value: str, name: bool = False) -> str | None:
    """A secret's or an identifying slot's value as a word needle (its whitespace dropped, so it is found with its
    separators optional: ``B-MW 1234``, ``4471``, ``hunter2``, ``Tr0ub4dor&3``), or None when it is too short (fewer
    than 4 letters and digits), longer than ``SLOT_MAX_WORDS`` or one common word (a password "banana" would take
    every message about bananas)."""
    from wordfreq import zipf_frequency

    value = value.strip().strip(_PUNCT)
    spaced_digits = value.replace(" ", "").isdigit()  # a PIN written "7 4 4 1"
    if not value or len(value.split()) > SLOT_MAX_WORDS and not spaced_digits or len(_NOT_ALNUM.sub("", value)) < 4:
        return None
    words = value.split()
    if all(w.isalpha() and zipf_frequency(w, "en") >= 3.0 for w in words) and not (name and len(words) > 1):
        return None  # a name of two common words ("Sarah Miller") is still a name (sixth breaker run, N5)
    if _DATE.fullmatch(value):  # "my last login was 2024-05-01": a date, not a secret (seventh breaker run)
        return None
    return _VALUE + " ".join(words)  # matched as written (:func:`_value_pattern`), not as a code


SHARED = re.compile(
    r"^(?:employer|company|workplace|office|team|job|role|occupation|profession|title|school|university|college|"
    r"location|home|city|town|country|hometown|birthplace|nationality|region|neighbou?rhood|languages?|"
    r"tools?|tool for .*|.* version|hobby|hobbies|diet|sport|religion|club|gym|bank|church|airline)$",
    re.IGNORECASE,
)
"""Slots whose value is a place, an organisation or a thing many facts share (``employer`` "Northwind",
``location`` "Lisbon"): a ``forget`` of one takes no rare word of its value, since "My manager at Northwind is
Ingeborg" does not quote the user's employment (fifth breaker run, F4). Any other slot's value is a name the user
gave (a person's, a pet's: ``cat`` "Zorblax", ``physiotherapist`` "Ameli Brandt") and its rare words are needles."""


def names_someone(memory: Any) -> bool:
    """Whether a structured memory's value is a name (not a :data:`SHARED` slot, not a note)."""
    return memory["kind"] != "note" and not SHARED.match(str(memory["attribute"] or "").strip())


PHONE = re.compile(r"(?:^|\s)(?:phone|mobile|phone number)$", re.IGNORECASE)
NAME = re.compile(r"(?:^|\s)(?:name|surname|first name|last name|family name|maiden name|nickname)$", re.IGNORECASE)


def identifying(memory: Any) -> bool:
    """Whether a structured memory's slot identifies the user or is a secret (:data:`IDENTIFYING`), or is where
    they live given with a number (``location`` "12 Elm Street": a street address, not a city)."""
    if memory["kind"] == "note":
        return False
    attribute = str(memory["attribute"] or "")
    if IDENTIFYING.search(attribute):  # a phone slot holding no number holds the device ("Pixel 8": N4)
        return not PHONE.search(attribute) or sum(c.isdigit() for c in str(memory["value"] or "")) >= DIGITS_MIN

    return attribute in ("location", "home") and any(c.isdigit() for c in str(memory["value"] or ""))


def slot_value(memory: Any) -> str | None:
    """A structured memory's value when it is short enough to be a name (``SLOT_MAX_WORDS``), else None (a note's
    value is its whole sentence)."""
    value = str(memory["value"] or "")
    if memory["kind"] == "note" or not value.strip() or len(value.split()) > SLOT_MAX_WORDS:
        return None
    return value


_ADDRESS_SLOT = re.compile(r"(?:^|\s)(?:address|location|home)$", re.IGNORECASE)


def secret_slot_values(memory: Any) -> list[str]:
    """The values of an :func:`identifying` memory that are needles: its :func:`slot_value`; for a street address,
    each comma-separated part holding a digit ("Flat 4, 221B Baker Street, London": "Flat 4" and "221B Baker
    Street", quoted alone elsewhere; the city is a place many facts share). Issue 21, N7."""
    value = str(memory["value"] or "")
    if _ADDRESS_SLOT.search(str(memory["attribute"] or "")) and "," in value:
        parts = [part.strip() for part in value.split(",")]
        return [p for p in parts if any(c.isdigit() for c in p)]
    return [v] if (v := slot_value(memory)) is not None else []


@dataclass
class Plan:
    """What one hard delete removes (:func:`plan`).

    memories       ids of the memories erased
    observations   ids of the observations (messages) erased
    needles        what marks a row as quoting erased content (:func:`quotes`)
    same           the erased messages' and memories' texts (:func:`same_text`): a row that carries one (a recall
                   whose query is an erased message, a chat message) goes by identity
    kept           memories formed from an erased message that another, surviving message also supports: kept,
                   without the erased source
    """

    memories: list[str]
    observations: list[str]
    needles: list[str]
    same: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def plan(
    led: Ledger,
    ns: str,
    memory_ids: Sequence[str] = (),
    observation_ids: Sequence[str] = (),
    slot_words: bool = True,
) -> Plan:
    """What erasing ``memory_ids`` and ``observation_ids`` of ``ns`` removes, all within ``ns``:

    1. by identity: the memories, the messages they were formed from (their provenance) and ``observation_ids``,
       and the memories formed from those messages;
    2. by quotation: the other messages (and memories) of ``ns`` that quote the content erased in 1 (:func:`needles_of`:
       a long whole text, an identifier, ``m:ID``; with ``slot_words`` also a rare word of a short slot value,
       "Zorblax": a ``forget``, not a ``BaseStore`` delete, which removes one item and what it formed), and the
       memories formed from those messages;
    3. no cascade: needles come only from what 1 erases, never from a text erased because it quoted it (erasing
       "My locker code is QX4471." took a message naming the code, then through its rare word "Przemek" another
       that did not, then through "Grafana" a third; fourth breaker run).

    A memory formed from an erased message that another message also supports (a corroboration) is kept without
    the erased source, unless it was asked for, quotes a needle or carries an erased text (``Plan.kept``): deleting
    one of two items that said the same thing keeps the other item's memory."""
    targets = set(memory_ids)
    obs_ids = set(observation_ids) | {
        r["observation_id"]
        for r in led.query_in(
            "SELECT observation_id FROM provenance WHERE namespace=? AND memory_id IN ({marks})",
            ns,
            sorted(targets),
        )
    }
    obs_rows = led.observations(ns, sorted(obs_ids))  # of this namespace only
    obs_ids = set(obs_rows)
    formed = _sources(led, ns, _formed_from(led, ns, obs_ids))
    only_erased = {m for m, src in formed.items() if src <= obs_ids}  # no other message supports them
    mems = led.memories(ns, sorted(targets | set(formed)))
    texts = [r["text"] for r in obs_rows.values()] + [m["text"] for m in mems.values()]
    own = [mems[m] for m in sorted((targets | only_erased) & set(mems)) if identifying(mems[m])]
    secrets = [v for m in own for v in secret_slot_values(m)]
    names = [v for m in own if NAME.search(str(m["attribute"] or "")) and (v := slot_value(m)) is not None]
    slots = [
        v for m in targets if m in mems and names_someone(mems[m]) and (v := slot_value(mems[m])) is not None
    ]
    needles = needles_of(
        texts, slots if slot_words else [], sorted((targets | only_erased) & set(mems)), secrets, names
    )
    quoting = _quoting(led, ns, "observations", "text", needles) - obs_ids
    all_obs = obs_ids | quoting
    said = {
        same_text(r["text"]) for r in [*obs_rows.values(), *led.observations(ns, sorted(quoting)).values()]
    } - {""}
    candidates = (
        set(formed) | _formed_from(led, ns, quoting) | _quoting(led, ns, "memories", "text", needles)
    ) - targets
    kept = _supported_elsewhere(led, ns, candidates, all_obs, needles, said)
    erased = (targets & set(mems)) | (candidates - kept)
    same = {t for t in said | {same_text(mems[m]["text"]) for m in targets if m in mems} if identifies(t)}
    return Plan(sorted(erased), sorted(all_obs), needles, sorted(same), sorted(kept))


_HASHED = "\x00h:"
"""The prefix of a whole-text needle kept as a digest by a pending erase job (:func:`job_payload`)."""
_VALUE = "\x00v:"
"""Marks a slot's or a secret's value among the needles (:func:`value_needle`, :func:`_value_pattern`)."""


def _value_pattern(value: str) -> str:
    """A secret's or an identifying slot's value as written: its characters in order, punctuation as is, one to
    three separators where it has whitespace (none to three between digits: "7 4 4 1" is "7441"), a whole word
    (a number a whole number). Not as a code with separators optional anywhere: a password "summer2024" took
    "summer 2024", a username "anna.berg" took "Anna Berg", a login date any written form of that date (seventh
    breaker run)."""
    tokens = fold(value).split()
    body = ""
    for i, token in enumerate(tokens):
        if i:
            body += r"[ \-]{0,3}" if tokens[i - 1][-1:].isdigit() and token[:1].isdigit() else r"[\W_]{1,3}"
        body += re.escape(token)
    return _whole(body, tokens[0][:1], tokens[-1][-1:])


def _text_digest(salt: str, text: str) -> str:
    return hashlib.sha256(f"{salt}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


class Said:
    """Erased texts as identity compares them (``same_text(t) in said``), held as plain text (inside the hard
    delete) or as salted digests (a pending ``erase_jobs`` row, :func:`job_payload`)."""

    def __init__(self, plain: Iterable[str] = (), digests: Iterable[str] = (), salt: str = "") -> None:
        self.plain = {t for t in plain if t}
        self.digests = set(digests)
        self.salt = salt

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str) or not text:
            return False
        return text in self.plain or (bool(self.digests) and _text_digest(self.salt, text) in self.digests)

    def __bool__(self) -> bool:
        return bool(self.plain or self.digests)


def job_payload(needles: Sequence[str], same: Sequence[str], salt: str) -> dict[str, Any]:
    """What an ``erase_jobs`` row keeps to scrub the chat threads later (``Tx.add_erase_job``): no whole erased text.
    A whole-text needle is kept as its length and salted digest (found again by digesting each window of that
    length, :func:`quotes`), the texts compared by identity as salted digests of their :func:`same_text`. Word
    needles (an identifier, a secret's value, a rare word of a name) and ``m:ID`` are kept as they are: they are
    what the scrub must find, with its separators optional, which no digest allows (fifth breaker run, F5)."""
    kept = []
    for needle in needles:
        if _is_word(needle) or needle.startswith(("m:", _VALUE)):  # a value ("Sarah Miller") is no whole text
            kept.append(needle)
        else:
            low = fold(needle)
            kept.append(f"{_HASHED}{salt}:{len(low)}:{_text_digest(salt, low)}")
    return {"needles": kept, "same_digests": sorted({_text_digest(salt, t) for t in same if t}), "salt": salt}


def erase_job_needles(column: str) -> tuple[list[str], Said]:
    """``(needles, same)`` of an ``erase_jobs`` row's ``needles`` column (:func:`job_payload`; a dict with plain
    ``same`` texts or a plain list of needles from an older version)."""
    value = json.loads(column)
    if isinstance(value, dict):
        return [str(n) for n in value.get("needles", [])], Said(
            plain=[str(t) for t in value.get("same", [])],
            digests=[str(d) for d in value.get("same_digests", [])],
            salt=str(value.get("salt", "")),
        )
    return [str(n) for n in value], Said()


def _formed_from(led: Ledger, ns: str, obs_ids: set[str]) -> set[str]:
    return {
        r["memory_id"]
        for r in led.query_in(
            "SELECT memory_id FROM provenance WHERE namespace=? AND observation_id IN ({marks})",
            ns,
            sorted(obs_ids),
        )
    }


def _sources(led: Ledger, ns: str, memory_ids: set[str]) -> dict[str, set[str]]:
    """``{memory id: ids of the observations it was formed from}``."""
    sources: dict[str, set[str]] = {m: set() for m in memory_ids}
    for r in led.query_in(
        "SELECT memory_id, observation_id FROM provenance WHERE namespace=? AND memory_id IN ({marks})",
        ns,
        sorted(memory_ids),
    ):
        sources[r["memory_id"]].add(r["observation_id"])
    return sources


def _supported_elsewhere(
    led: Ledger, ns: str, candidates: set[str], erased_obs: set[str], needles: list[str], said: set[str]
) -> set[str]:
    """The ``candidates`` that a message outside ``erased_obs`` also supports and whose text neither quotes a
    needle nor is the text of an erased message (``said``, :func:`same_text`)."""
    sources = _sources(led, ns, candidates)
    rows = led.memories(ns, sorted(candidates))
    return {
        m
        for m, row in rows.items()
        if sources.get(m, set()) - erased_obs
        and not quotes(row["text"], needles)
        and same_text(row["text"]) not in said
    }


def apply(cur: Tx, ns: str, planned: Plan) -> dict[str, int]:
    """Delete the planned rows inside the caller's transaction ``cur``; queue their index records for deletion.
    A recall record goes when its query quotes a needle or is an erased text (``Plan.same``: each chat turn's
    recall record's query is the user's message, which a short message without an identifier never quoted;
    fourth breaker run). Returns counts of what else was erased or restored."""
    mem_ids, obs_ids, needles = planned.memories, planned.observations, planned.needles
    same = set(planned.same)
    mset, oset = set(mem_ids), set(obs_ids)
    ended_by: dict[str, list[str]] = {}  # a surviving memory -> the erased memories that ended it
    replaced_by: dict[str, str] = {}  # an erased memory -> the memory that superseded it
    for start in range(0, len(mem_ids), 400):
        chunk = mem_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        for r in cur.execute(
            f"SELECT src_id, dst_id FROM links WHERE namespace=? AND type IN ('supersedes','retracts') "
            f"AND src_id IN ({marks})",
            (ns, *chunk),
        ).fetchall():
            ended_by.setdefault(r["dst_id"], []).append(r["src_id"])
        for r in cur.execute(
            f"SELECT src_id, dst_id FROM links WHERE namespace=? AND type='supersedes' AND dst_id IN "
            f"({marks})",
            (ns, *chunk),
        ).fetchall():
            replaced_by[r["dst_id"]] = r["src_id"]
    bridges = chain_bridges(ended_by, replaced_by, mset)
    _remember_erased(cur, ns, mem_ids, obs_ids)
    for start in range(0, max(len(mem_ids), 1), 400):
        chunk = mem_ids[start : start + 400]
        if not chunk:
            break
        marks = ",".join("?" * len(chunk))
        cur.execute(f"DELETE FROM provenance WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.execute(
            f"DELETE FROM links WHERE namespace=? AND (src_id IN ({marks}) OR dst_id IN ({marks}))",
            (ns, *chunk, *chunk),
        )
        cur.execute(f"DELETE FROM events WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.execute(f"DELETE FROM stats WHERE namespace=? AND memory_id IN ({marks})", (ns, *chunk))
        cur.unindex_terms(
            ns,
            cur.execute(
                f"SELECT id, text, source FROM memories WHERE namespace=? AND id IN ({marks})", (ns, *chunk)
            ).fetchall(),
        )
        cur.execute(f"DELETE FROM memories WHERE namespace=? AND id IN ({marks})", (ns, *chunk))
    erased_items = _erase_items(cur, ns, oset, needles)
    for start in range(0, len(obs_ids), 400):
        chunk = obs_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        cur.execute(f"DELETE FROM provenance WHERE namespace=? AND observation_id IN ({marks})", (ns, *chunk))
        cur.execute(f"DELETE FROM observations WHERE namespace=? AND id IN ({marks})", (ns, *chunk))
    cur.executemany(
        "INSERT OR IGNORE INTO index_drops(namespace, id) VALUES (?, ?)",
        [(ns, i) for i in [*mem_ids, *obs_ids]],
    )
    for older, newer in sorted(
        bridges.items()
    ):  # the chain closes over the erased link: the old value stays replaced
        cur.add_link(ns, newer, older, "supersedes", "re-linked: the version between them was erased")
        # it held until the surviving version began (what the erased one said of its end is gone with it)
        cur.execute(
            "UPDATE memories SET valid_to=(SELECT valid_from FROM memories WHERE namespace=? AND id=?), "
            "updated_at=?, indexed=0 WHERE namespace=? AND id=?",
            (ns, newer, now_iso(), ns, older),
        )
        cur.add_event(
            ns, older, "relinked", reason="the version that replaced it was erased; superseded by the next"
        )
    restored = _restore_heads(cur, ns, sorted(set(ended_by) - mset - set(bridges)))
    erased_recalls = 0
    for rec in cur.execute(
        "SELECT id, query, task, candidates, chosen FROM recalls WHERE namespace=?", (ns,)
    ).fetchall():
        if quotes(rec["query"], needles) or quotes(rec["task"], needles) or same_text(rec["query"]) in same:
            tombstones.remember(
                cur,
                [tombstones.id_key(rec["id"])]
                + [
                    tombstones.id_key(f["id"])
                    for f in cur.execute(
                        "SELECT id FROM feedback WHERE namespace=? AND recall_id=?", (ns, rec["id"])
                    ).fetchall()
                ],
            )
            cur.execute("DELETE FROM feedback WHERE namespace=? AND recall_id=?", (ns, rec["id"]))
            cur.execute("DELETE FROM recalls WHERE namespace=? AND id=?", (ns, rec["id"]))
            erased_recalls += 1
            continue
        cands = [
            c for c in json.loads(rec["candidates"]) if c.get("id") not in mset and c.get("id") not in oset
        ]
        chosen = [c for c in json.loads(rec["chosen"]) if c not in mset]
        cur.execute(
            "UPDATE recalls SET candidates=?, chosen=? WHERE id=?",
            (json.dumps(cands), json.dumps(chosen), rec["id"]),
        )
    for row in cur.execute("SELECT id, reason FROM links WHERE namespace=?", (ns,)).fetchall():
        if quotes(row["reason"], needles):
            cur.execute("UPDATE links SET reason='(erased)' WHERE id=?", (row["id"],))
    for row in cur.execute(
        "SELECT id, memory_id, type, detail, created_at FROM events WHERE namespace=?", (ns,)
    ).fetchall():
        try:  # JSON: matched on its strings, not on their escapes ("Zo\\u00eb")
            detail = json.loads(row["detail"] or "null")
        except ValueError:
            detail = row["detail"]
        if quotes_value(detail, needles):
            tombstones.remember(
                cur,
                [tombstones.event_key(ns, row["memory_id"], row["type"], row["detail"], row["created_at"])],
            )
            cur.execute("UPDATE events SET detail='{}' WHERE id=?", (row["id"],))
    return {"recalls": erased_recalls, "restored": len(restored), "items": erased_items}


def _remember_erased(cur: Tx, ns: str, mem_ids: list[str], obs_ids: list[str]) -> None:
    """Record what this erase removes (``tombstones``: salted digests, never the text) before it is deleted: the
    memory and observation ids, each observation's ref at its time, and the ids of the links that join an erased
    memory. An import then skips them (issue 21)."""
    keys = [tombstones.id_key(m) for m in mem_ids]
    for start in range(0, len(obs_ids), 400):
        chunk = obs_ids[start : start + 400]
        for row in cur.execute(
            f"SELECT id, ref, time FROM observations WHERE namespace=? AND id IN "
            f"({','.join('?' * len(chunk))})",
            (ns, *chunk),
        ).fetchall():
            keys += tombstones.observation_keys(ns, row)
    for start in range(0, len(mem_ids), 400):
        chunk = mem_ids[start : start + 400]
        marks = ",".join("?" * len(chunk))
        keys += [
            tombstones.id_key(r["id"])
            for r in cur.execute(
                f"SELECT id FROM links WHERE namespace=? AND (src_id IN ({marks}) OR dst_id IN ({marks}))",
                (ns, *chunk, *chunk),
            ).fetchall()
        ]
    tombstones.remember(cur, keys)


def _erase_items(cur: Tx, ns: str, obs_ids: set[str], needles: Sequence[str]) -> int:
    """Delete the ``BaseStore`` items of ``ns`` whose text became an erased observation (by its ref or its recorded
    observation id) or whose value quotes erased text anywhere (any string of it, keys included): the item keeps
    its value as given, a copy of what is erased (issue 21). Runs before the observations are deleted (it reads
    their refs). Returns how many items were deleted."""
    refs: set[str] = set()
    ordered = sorted(obs_ids)
    for start in range(0, len(ordered), 400):
        chunk = ordered[start : start + 400]
        refs |= {
            r["ref"]
            for r in cur.execute(
                f"SELECT ref FROM observations WHERE namespace=? AND id IN ({','.join('?' * len(chunk))})",
                (ns, *chunk),
            ).fetchall()
            if r["ref"]
        }
    doomed = []
    for row in cur.execute(
        "SELECT path, key, value, observation_id, created_at FROM items WHERE namespace=?", (ns,)
    ).fetchall():
        try:
            strings = list(value_strings(json.loads(row["value"])))
        except ValueError:
            strings = [row["value"]]
        if (
            row["observation_id"] in obs_ids
            or path_ref(row["path"], row["key"]) in refs
            or any(quotes(text, needles) for text in [row["key"], *strings])
        ):
            doomed.append((row["path"], row["key"]))
            tombstones.remember(
                cur, [tombstones.item_key(ns, path_ref(row["path"], row["key"]), row["created_at"])]
            )
    cur.executemany("DELETE FROM items WHERE path=? AND key=?", doomed)
    return len(doomed)


def chain_bridges(
    ended_by: dict[str, list[str]], replaced_by: dict[str, str], erased: set[str]
) -> dict[str, str]:
    """Surviving memories that an erased memory had superseded while a newer version survives above it:
    ``{older id: newest surviving successor}``. Erasing the middle of Lisbon -> Porto -> Berlin must leave Lisbon
    superseded, now by Berlin, not make it current beside Berlin (breaker run, issue 14). Pure.

    Args:
        ended_by: surviving memory -> the erased memories that superseded or retracted it.
        replaced_by: erased memory -> the memory that superseded it (erased or not).
        erased: every erased memory id.
    """
    out: dict[str, str] = {}
    for older, enders in ended_by.items():
        if older in erased:
            continue
        for ender in enders:
            seen: set[str] = set()
            nxt = replaced_by.get(ender)
            while nxt is not None and nxt in erased and nxt not in seen:
                seen.add(nxt)
                nxt = replaced_by.get(nxt)
            if nxt is not None and nxt not in erased and nxt != older:
                out[older] = nxt
                break
    return out


def _restore_heads(cur: Tx, ns: str, ids: list[str]) -> list[str]:
    """Memories that only erased memories had superseded or retracted become current again (the statement that
    replaced them no longer exists, so nothing newer is known): status ``current``, no end, an event. One that
    something else still ends stays as it is."""
    restored = []
    for memory_id in ids:
        if cur.execute(
            "SELECT 1 FROM links WHERE namespace=? AND dst_id=? AND type IN ('supersedes','retracts') LIMIT 1",
            (ns, memory_id),
        ).fetchone():
            continue
        changed = cur.execute(
            "UPDATE memories SET status='current', valid_to=NULL, updated_at=?, indexed=0 WHERE "
            "namespace=? AND id=? AND status IN ('superseded','retracted')",
            (now_iso(), ns, memory_id),
        )
        if changed.rowcount:
            cur.add_event(ns, memory_id, "status:current", reason="what replaced it was erased")
            restored.append(memory_id)
    return restored
