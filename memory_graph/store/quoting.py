"""What counts as quoting erased content (the grammar of a hard delete; :mod:`memory_graph.store.erase` applies it).

Pure functions of text, no storage: the *needles* of erased content (:func:`needles_of`: a long whole text, the
identifiers of a text (:func:`identifiers`: an e-mail address, a phone number, an IBAN or account number, an SSN, a
personal code of letters and digits in any script, written with or without separators; not a period, range,
amount, version or product term), the value of a secret or identifying slot (:data:`IDENTIFYING`,
:func:`secret_values`, :func:`value_needle`), a rare word of a slot that names someone (:func:`names_someone`)),
and whether a text quotes one (:func:`quotes`, :func:`quotes_value`).

Matching (:func:`quotes`): a whole text or ``m:ID`` as a substring, a word needle (an identifier, a rare word) as a
whole word whose separators are optional both ways ("7734-QK", "7734 QK" and "7734QK" are one code; "LH714" is not
in "LH7140"), a slot's or secret's value as written (:func:`_value_pattern`), both sides case folded with accents
dropped (:func:`fold`). Not identifiers: a time, a date, an amount, a count, a year, a number with a unit ("10:30am",
"2025-06-10", "1,200", "500mg"), a common word with a number ("covid19").
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Any

from memory_graph.stopwords import english_stop_words

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
TOKEN_MIN_CHARS = 16
"""A code of letters and digits at least this long is a key or a token whatever words it holds ("sk_live_5McX...",
"glpat-..."; tenth breaker run, N4): a product or a term is never that long."""
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
        if run.isdigit() and (run.endswith("000") or _compact_date(run)):  # 1000000, 20240501 (ninth run, F7)
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


SHARED_TOKEN = re.compile(r"(?<![\w.])(?:\d{3,}|(?=[^\W_]*\d)(?=[^\W_]*[^\W\d_])[^\W_]{3,})(?![\w])")
"""A number of three or more digits or a word of three or more letters and digits mixed ("839", "4471", "6XE")."""


_UNIT_ENDS = "gb|mb|kb|tb|mp|hz"
"""Letters that end a size or a resolution, not a postcode ("8GB", "4MP")."""
POSTCODE = re.compile(
    rf"(?!\w*(?:{_UNIT_ENDS})$)(?:[a-z]{{1,2}}\d[a-z\d]?\d[a-z]{{2}}|[a-z]\d[a-z]\d[a-z]\d)", re.IGNORECASE
)
"""A UK or Canadian postcode, its groups joined ("NW16XE", "SW1A1AA", "K1A0B1")."""
_POSTCODE_SHAPE = (
    rf"\b(?:[a-z]{{1,2}}\d[a-z\d]?\s?\d(?!(?i:{_UNIT_ENDS}|st|nd|rd|th|am|pm)\b)[a-z]{{2}}|[a-z]\d[a-z]\s?\d[a-z]\d)\b"
)
POSTCODE_IN_TEXT = re.compile(_POSTCODE_SHAPE.replace("a-z", "A-Z"))
"""A postcode as a text writes it, in capitals ("NW1 6XE", "K1A 0B1"; not a model's "M2 8GB", "B12 4MP", nor "B2
3rd", "B12 5pm": thirteenth and fourteenth breaker runs): an identifier wherever it is (a needle, joined)."""
POSTCODE_ANY_CASE = re.compile(_POSTCODE_SHAPE, re.IGNORECASE)
"""The same in any case ("nw1 6xe"), read only where the sentence speaks of a postcode or a delivery
(:data:`POSTAL`): in lower case, "i7 8th gen" has the shape too (fourteenth run)."""
POSTAL = re.compile(r"\b(?:post ?code|postal|zip|address|send|sent|ship|parcel|post|deliver(?:y|ed)?)\b", re.IGNORECASE)
STREET_IN_TEXT = re.compile(
    r"\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][\w'.-]*\s+){1,4}(?:[Ss]treet|St|[Rr]oad|Rd|[Aa]venue|Ave|[Ll]ane|[Dd]rive|"
    r"[Ww]ay|[Cc]lose|[Cc]rescent|[Pp]lace|[Cc]ourt|[Tt]errace|[Bb]oulevard|[Ss]quare|[Rr]ow|[Pp]arade|[Gg]ardens)\b"
    r"|\b[A-Z][\w-]*(?:strasse|straße|str\.|weg|gasse|allee|platz|straat|laan|gatan|gade|vej|veien)\s+\d{1,5}[a-z]?\b"
)
"""A street address in a sentence: a house number, capitalised names, a street word ("17 Mill Lane", "9 Rose
Street"), or a street then its number ("Hauptstrasse 12"): a needle whatever slot, if any, holds it, when the
sentence says it is where someone lives or stays (:data:`RESIDENCE`; twelfth and thirteenth breaker runs: "We
toured 10 Downing Street" names no home)."""
RESIDENCE = re.compile(
    r"\b(?:live[sd]?|living|stay(?:s|ed|ing)?|address|moved|reside[sd]?|parcel|deliver(?:y|ed)?|"
    r"(?:my|our|his|her|their|mum's|dad's|parents')\s+(?:new\s+)?(?:house|home|flat|apartment|place))\b",
    re.IGNORECASE,
)
"""Words that make a street in a sentence someone's place (:data:`STREET_IN_TEXT`): living, staying, an
address, a delivery, "our house"; not "place", "house" or "home" alone ("my favourite pizza place is Joe's at 7
Carmine Street", "Sherlock Holmes's house"; fourteenth breaker run)."""


def is_model_like(code: str) -> bool:
    """Whether an identifier read from free text is a short code of letters and digits ("i7-13700K", "WH-1000XM4",
    "SN850X", "LH714"): a personal code and a product's model number have the same shape, so such a code is no
    needle when a sentence merely holds it (forgetting "I have an Intel Core i7-13700K" took "My i7-13700K runs
    hot"; tenth breaker run, N6; nor "QN 90B", "CEFR B2" written in two parts, twelfth run). A postcode ("NW1 6XE",
    "K1A 0B1": :data:`POSTCODE`) is no model number. A short
    code is a needle when a secret or identifying slot gives it, or its text gives a secret
    ("My locker code is QX4471.": then it is found with its separators optional, "QX-4471"); a kept message
    sharing it is listed (:func:`shared_tokens`). Not an e-mail, a
    number (digits only), a code of ``DIGITS_MIN`` digits or a key of ``TOKEN_MIN_CHARS`` characters."""
    core = _NOT_ALNUM.sub("", code)
    digits = sum(c.isdigit() for c in core)
    return (
        "@" not in code and digits < len(core) and digits < DIGITS_MIN and len(core) < TOKEN_MIN_CHARS
    )


def shared_tokens(texts: Sequence[str], values: Sequence[str] = ()) -> list[str]:
    """What a message that shares it with erased content shares, whether or not it quotes it: the numbers and
    codes of ``texts`` (:data:`SHARED_TOKEN`) as word needles, and ``values`` (the secret and slot values of the
    erased content, whatever their shape: "sunshine", "839") as written. A hard delete lists such messages it keeps
    (``Plan.possible``), so that a quote no rule reads ("the code to get into the building is 4471") is shown to
    the user rather than silently kept (tenth and eleventh breaker runs)."""
    found = {m.group(0) for t in texts for m in SHARED_TOKEN.finditer(t)}
    return sorted(found | {VALUE_MARK + v.strip() for v in values if v.strip()})


def _compact_date(run: str) -> bool:
    """Whether eight digits are a date written without separators (``20240501``)."""
    import datetime as dt

    if len(run) != 8 or not _YEAR.fullmatch(run[:4]):
        return False
    try:
        dt.date(int(run[:4]), int(run[4:6]), int(run[6:]))
    except ValueError:
        return False
    return True


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
        digits >= CODE_DIGITS_ALWAYS or len(core) >= TOKEN_MIN_CHARS
    ):  # "x12345678", "alpha247514q9": a number with a label is still the number; "sk_live_5McX...": a key
        return True
    if all(
        len(run) == 1 for run in letters
    ):  # "x86_64", "Q3 2024", "v18.17.0", "t3", "7800X3D": a model/period
        return False
    # a word or known term with a number ("llama3", "GPT-4o", "HbA1c", "SARS-CoV-2", "utf8mb4", "log4j", "RTX 4090")
    return not any(
        len(run) >= 3 and (zipf_frequency(run, "en") >= TERM_ZIPF or run in _TERMS) for run in letters
    )


def is_word_needle(needle: str) -> bool:
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
) -> tuple[list[str], list[tuple[str, re.Pattern[str]]], list[tuple[str, int, str]], list[str]]:
    """``(substrings, [(letters and digits, pattern)], [(salt, length, digest)], ignored)`` of ``needles``
    (:func:`quotes`), folded; ``ignored``: the strings marked ``IGNORE_MARK``, longest first."""
    literals: list[str] = []
    words: list[tuple[str, re.Pattern[str]]] = []
    hashed: list[tuple[str, int, str]] = []
    ignored: list[str] = []
    for needle in needles:
        if needle.startswith(IGNORE_MARK):
            if value := fold(needle[len(IGNORE_MARK) :]).strip():
                ignored.append(value)
            continue
        if needle.startswith(HASHED_MARK):
            salt, length, digest = needle[len(HASHED_MARK) :].rsplit(":", 2)
            hashed.append((salt, int(length), digest))
            continue
        if needle.startswith(VALUE_MARK):
            value = needle[len(VALUE_MARK) :]
            if key := _NOT_ALNUM.sub("", fold(value)):
                words.append((key, re.compile(_value_pattern(value))))
            continue
        key = _NOT_ALNUM.sub("", fold(needle)) if needle and is_word_needle(needle) else ""
        if key:
            words.append((key, re.compile(_word_pattern(needle))))
        elif needle:
            literals.append(fold(needle))
    return literals, words, hashed, sorted(ignored, key=len, reverse=True)


def quotes(text: str | None, needles: Sequence[str]) -> bool:
    """Whether ``text`` quotes a needle: a whole erased text or ``m:ID`` as a case-insensitive substring, a word
    needle (no whitespace) as a whole word with its separators optional (:func:`_word_pattern`). A word needle's
    pattern is tried only where the text's letters and digits, run together, hold the needle's: a match of the
    pattern is such a run (its separators are neither), so this never misses one, and a hard delete whose needles
    are the many codes of a pasted log is not one regex alternation per character of every message."""
    if not text:
        return False
    literals, words, hashed, ignored = _compiled(tuple(needles))
    low = fold(str(text))
    # the user's own id is never a quote: a match lying wholly inside an occurrence of it does not count ("cust-
    # 48213597" names the user, "dana.k@example.com" still quotes the e-mail of user "dana"; seventeenth breaker run)
    inside = [(m.start(), m.end()) for name in ignored for m in re.finditer(re.escape(name), low)]

    def counts(start: int, end: int) -> bool:
        return not any(a <= start and end <= b for a, b in inside)

    def found(pattern: re.Pattern[str]) -> bool:  # without an occurrence of the user id, the first match will do
        return any(counts(m.start(), m.end()) for m in pattern.finditer(low)) if inside else pattern.search(low) is not None

    if any(literal in low and found(re.compile(re.escape(literal))) for literal in literals):
        return True
    for salt, length, digest in hashed:  # a whole text kept as a digest (a pending erase job): every window
        if any(text_digest(salt, low[i : i + length]) == digest and counts(i, i + length)
               for i in range(len(low) - length + 1)):
            return True
    if not words:
        return False
    squashed = _NOT_ALNUM.sub("", low)
    return any(key in squashed and found(pattern) for key, pattern in words)


def fold(text: str) -> str:
    """``text`` as needles and texts are compared, by the same function on both sides: case folded (``ß`` is
    ``ss``), compatibility forms decomposed (``ﬁ``, full-width digits) and accents dropped (``Zoë`` is ``zoe``; a
    mark between two letters would count as a separator)."""
    low = text.casefold()
    if low.isascii():
        return low
    return "".join(  # marks and format characters (a zero-width space, a soft hyphen: eighth breaker run, F7) go
        c for c in unicodedata.normalize("NFKD", low) if not unicodedata.category(c).startswith(("M", "Cf"))
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
    names: Sequence[str] = (), phrases: Sequence[str] = (),
) -> list[str]:
    """The strings whose presence marks a row as quoting erased content: whole texts of at least
    ``QUOTE_MIN_CHARS`` characters and ``QUOTE_MIN_WORDS`` words (a substring), the identifiers of every text
    (:func:`identifiers`; a short code a sentence merely holds is a model number, :func:`is_model_like`), a street
    address of a sentence that names a home or a delivery (:data:`STREET_IN_TEXT`) and a postcode
    (:data:`POSTCODE_IN_TEXT`), the rare words of ``slot_values`` (:func:`rare_words`: a name a structured memory holds,
    "Zorblax"), the values of ``secrets`` (an identifying slot's), ``names`` (a name slot's), ``phrases`` (a
    password slot's) and of the secrets the texts give (:func:`secret_values`) as :func:`value_needle` takes them,
    and ``m:ID``. A plain value (:func:`is_plain`) is none: it is listed (:func:`shared_tokens`). A shorter text
    ("no", "e", "ok thanks") is no evidence of quoting: as a substring it
    is found in unrelated messages ("Northwind" holds "no"), and erasing those lost other facts (breaker run, issue
    21); its own rows are erased by identity all the same. A rare word of a whole sentence (a note: "Ugh, the coffee
    machine at Northwind broke again.") is no needle either: it is a name the sentence mentions, shared by other
    facts ("I work at Northwind as a data engineer."; fourth breaker run)."""
    quotable = [
        t.strip() for t in texts if len(t.strip()) >= QUOTE_MIN_CHARS and len(t.split()) >= QUOTE_MIN_WORDS
    ]
    given = {t: secret_values(t) for t in texts}  # read once: they gate a text's codes and are needles themselves
    found = [n for t in texts for n in identifiers(t) if not is_model_like(n) or POSTCODE.fullmatch(n) or given[t]]
    found += [n for t in texts if RESIDENCE.search(t) for m in STREET_IN_TEXT.finditer(t) if (n := value_needle(m.group(0)))]
    found += [m.group(0).replace(" ", "") for t in texts
              for m in (POSTCODE_ANY_CASE if POSTAL.search(t) else POSTCODE_IN_TEXT).finditer(t)]
    found += [w for v in slot_values for w in rare_words(v)]
    found += [n for v in secrets if (n := value_needle(v))]
    found += [n for v in phrases if (n := value_needle(v, phrase=True))]
    found += [n for t in texts for v in given[t] if (n := value_needle(v, phrase=True))]
    found += [n for v in names if (n := value_needle(v, name=True))]
    out = quotable + found + [f"m:{m}" for m in memory_ids]
    return sorted(set(out), key=lambda s: (len(s), s))


IDENTIFYING = re.compile(
    r"(?:^|\s)(?:name|surname|first name|last name|family name|maiden name|nickname|username|user name|login|e-?mail|"
    r"phone|mobile|phone number|address|home address|pin|pincode|pin code|password|passcode|passphrase|passwort|"
    r"passwd|pwd|pw|code|combination|key|token|cvv|cvc|puk|postcode|post code|postal code|zip|zip code|"
    r"plate|licen[cs]e plate|(?:phone|mobile|account|card|passport|id|tax|membership|customer|policy|insurance|"
    r"social security) number|iban|account|ssn|passport|id|tax id|card)$",
    re.IGNORECASE,
)
"""An attribute that identifies the user or is a secret of theirs (``name``, ``surname``, ``email``, ``pin``,
``password``, ``locker code``, ``licence plate``; the attribute's last words, so ``phone model`` is not): its value is a needle whatever its shape (:func:`value_needle`;
fifth breaker run, F3). Rare words of a slot value are :func:`names_someone`'s business."""
_SECRET_WORD = (
    r"(?:pin|pincode|code|passcode|password|passphrase|passwort|passwd|pwd|pw|combination|plate|username|login|wi-?fi|"
    r"(?:api|access|secret|private|licen[cs]e|product|wi-?fi|ssh)\s+key|(?:api|access|auth|bearer|refresh)\s+token|"
    r"cvv|cvc|puk)"
)
_NUMERIC_SECRET_WORD = r"(?:pin|pincode|code|passcode|combination)"
"""Secret words that give a number right after them ("pin 4471", "Code 4471 opens the gate")."""
_PASSWORD_WORD = re.compile(r"pass(?:word|phrase|wort|wd)|pwd|pw", re.IGNORECASE)
NOT_SECRET_CODE = re.compile(
    r"\b(?:error|status|exit|return|response|http|source|dress|area|country|dialling|dialing|colou?r|course|class|"
    r"style|morse|machine|programming|sample|example|legacy|test|production|application|app|highway|building|"
    r"penal|civil|tax|qr|bar|zip|discount|promo|coupon|thread|vs)\s*$",
    re.IGNORECASE,
)
"""A word before ``code`` that makes it no secret ("the error code was 5003", "status code", "source code", "the
Highway Code 2024", "QR code"; eighth and ninth breaker runs). Program text given as a quantity ("the code is
1,200 lines") is told by what follows the value."""
_KEYWORD_END = r"(?=\s*(?:$|[.,;:!?)]|\b(?:for|on|at|to|of|and|or|but|please|now|again|today)\b))"
"""After a secret word that ends a phrase ("use 7781 as the garage code."): the end, punctuation or a function
word, never a noun ("use 2500 as the token budget", "the code editor"; ninth breaker run)."""
_SECRET = re.compile(
    rf"\b{_SECRET_WORD}\b(?:\s+(?:number|no\.?))?(?:\s+(?:of|for|on|to|at)\s+(?:(?:my|the|our|your|a|an)(?:\s+[^\s\d]+){{1,2}}?|home|work))?"
    r"\s*(?:\bis\b|\bwas\b|'s\b|=|:)\s*(?=(\S+(?:\s+\S+){0,7}))"
    rf"|\b(?:set|changed?)\s+(?:the\s+|my\s+|our\s+)?(?:[^\W\d]+\s+)?{_SECRET_WORD}\s+to\s+(\S+)"
    rf"|\buse\s+(\S+)\s+as\s+(?:the\s+|my\s+|a\s+)?(?:\w+\s+)?{_SECRET_WORD}\b{_KEYWORD_END}"
    rf"|\b{_NUMERIC_SECRET_WORD}(?:\s+(?:number|no\.?))?\s+(\d[^\s,.;:!?]{{3,}})"
    rf"|(?<![\w-])(\d[^\s,.;:!?]{{3,}})\s+is\s+(?:the|my|our)\s+(?:\w+\s+)?{_SECRET_WORD}\b{_KEYWORD_END}"
    r"|\b(?:password|passwd|pwd|pw)\s+([^\s,.;:!?]*\d[^\s,.;:!?]*)",
    re.IGNORECASE,
)
"""What gives a secret a value: "the door code is 558213", "the PIN of my card is 4471", "password: hunter2",
"I set the alarm code to 4471", "use 7781 as the garage code" (sixth breaker run, N6), "pin 4471 for the visa card",
"4471 is the PIN of my card", "my pin number's 4471" (seventh), "the combination to the safe is 3391" (ninth). The
value after "is" is read ahead, so a second secret of the sentence is read too ("my login is dana.k and my password
is Tr0ub4dor&3"; ninth run, F5). Not "the code to review is 1200 lines" (a filler needs a determiner)."""


_QUOTED = re.compile(r"[\"“‘'](?P<v>[^\"”’']{1,80})[\"”’']")
_AFTER_VALUE = frozenset({
    "and", "or", "but", "so", "for", "to", "on", "at", "in", "by", "from", "with", "if", "then", "now", "again",
    "too", "also", "today", "tomorrow", "tonight", "please", "is", "was", "are", "were", "will", "because", "since",
    "which", "that", "when", "until", "opens", "opened", "unlocks", "unlocked", "works", "worked", "gets", "lets",
    "should", "must", "might", "can", "could", "would", "still", "though", "anyway",
})
"""Words that may follow a secret's value in the same sentence ("the code is 4471 for the gate"); any other
common word after it makes the value a quantity ("the code is 1,200 lines", "the plate is 30cm wide")."""
SECRET_MAX_WORDS = 6
"""A password or passphrase of at most this many words is a value ("correct horse battery staple")."""




def is_phrase(words: Sequence[str]) -> bool:
    """Whether words given as a password are a passphrase ("correct horse battery staple", "Blue Fish Sunday"), not
    a description of where or what it is ("in the drawer", "the usual one", "changed every month": a function
    word; ninth breaker run, F1): two to ``SECRET_MAX_WORDS`` words, none a function word."""
    stop = english_stop_words()
    return 1 < len(words) <= SECRET_MAX_WORDS and not any(w.strip(_PUNCT).lower() in stop for w in words)


def secret_values(text: str) -> list[str]:
    """The values a text gives to a secret ("The door code is 558213.", "password: hunter2", "plate is B-MW 1234",
    'my password is "correct horse battery staple"', "Netflix password: Blue Fish Sunday"): a quoted phrase of up to
    ``SECRET_MAX_WORDS`` words; after a password word, a passphrase (:func:`is_phrase`) up to the sentence end;
    else up to three tokens after the keyword and ``is``/``:`` (a PIN's single digits "7 4 4 1" up to eight),
    ending at the first common word or sentence end. None from a code that is not a secret
    (:data:`NOT_SECRET_CODE`), and none when a content word follows the value ("2000 lines", "30cm wide": a
    quantity) or the value is an amount, a measure or an adjective ("1,200", "30cm", "2FA-protected"; eighth
    breaker run, F1)."""
    from wordfreq import zipf_frequency

    out = []
    for m in _SECRET.finditer(text):
        keyword = re.search(_SECRET_WORD, m.group(0), re.IGNORECASE)
        if keyword and keyword.group(0).lower() == "code" and NOT_SECRET_CODE.search(text[: m.start() + keyword.start()]):
            continue
        group = next(k for k in range(1, 7) if m.group(k))
        raw_value = m.group(group)
        if group == 1:
            quoted = _QUOTED.match(raw_value.strip())
            if quoted:
                if len(phrase := quoted.group("v").split()) <= SECRET_MAX_WORDS:
                    out.append(" ".join(phrase))
                continue
            if keyword and _PASSWORD_WORD.fullmatch(keyword.group(0)):
                sentence = re.split(r"[.!?;,](?:\s|$)", raw_value, maxsplit=1)[0].split()
                if is_phrase(sentence) or len(sentence) == 1 and sentence[0].strip(_PUNCT).isalpha():
                    out.append(" ".join(w.strip(_PUNCT) for w in sentence))  # "monkey": a plain value, listed
                    continue
        tokens: list[str] = []
        stop = ""
        for raw in raw_value.split():
            token = raw.rstrip(_PUNCT) if raw[-1:] in ".,;:!?)\"'" else raw
            single_digits = len(tokens) >= 3 and all(len(t) == 1 and t.isdigit() for t in [*tokens, token])
            if not token or (token.isalpha() and zipf_frequency(token, "en") >= 3.0) or (
                    len(tokens) >= 3 and not single_digits):
                stop = token.lower()
                break
            tokens.append(token)
            if token != raw:
                break
        else:
            if group in (2, 4, 6):  # a value that ends the phrase: what follows it in the text
                after = re.match(r"\s+([^\W\d_]+)", text[m.end(group):])
                stop = after.group(1).lower() if after and zipf_frequency(after.group(1), "en") >= 3.0 else ""
        if not tokens or (stop and stop.isalpha() and stop not in _AFTER_VALUE):
            continue
        value = " ".join(tokens)
        if _quantity(value) or len(tokens) > 1 and keyword and re.fullmatch(r"wi-?fi", keyword.group(0), re.I):
            continue  # "our wifi is Hyperoptic 1Gb now": a provider and a speed, not a network's password
        out.append(value)
    return out


def _quantity(value: str) -> bool:
    """Whether a value read from a sentence is an amount, a measure or an adjective, not a secret: "1,200",
    "$40", "30cm", "2FA-protected" (its last hyphen part a common word)."""
    from wordfreq import zipf_frequency

    if _THOUSANDS.fullmatch(value) or _MEASURES.fullmatch(value.replace(" ", "")):
        return True
    if any(c in value for c in "$€£¥"):
        return True
    last = value.rsplit("-", 1)[-1] if "-" in value else ""
    return last.isalpha() and len(last) >= 4 and zipf_frequency(last, "en") >= 3.0


def value_needle(value: str, name: bool = False, phrase: bool = False) -> str | None:
    """A secret's or an identifying slot's value as a word needle (its whitespace dropped, so it is found with its
    separators optional: ``B-MW 1234``, ``4471``, ``hunter2``, ``Tr0ub4dor&3``), or None when it is too short (fewer
    than 4 letters and digits), longer than ``SLOT_MAX_WORDS`` or one common word (a password "banana" would take
    every message about bananas). ``name``: a name of two or more common words ("Sarah Miller") is a needle;
    ``phrase``: a password or passphrase of two to ``SECRET_MAX_WORDS`` words is one whatever its words ("correct
    horse battery staple", "tiger lamp orbit"; eighth breaker run, F2)."""
    from wordfreq import zipf_frequency

    value = value.strip().strip(_PUNCT)
    spaced_digits = value.replace(" ", "").isdigit()  # a PIN written "7 4 4 1"
    most = SECRET_MAX_WORDS if phrase or any(c.isdigit() for c in value) else SLOT_MAX_WORDS  # an address
    alnum = _NOT_ALNUM.sub("", value)
    if not value or len(value.split()) > most and not spaced_digits or len(alnum) < 3 or len(alnum) < 4 and (
            name or not alnum.isdigit()):  # a CVV "839" is a (cued) secret
        return None
    words = value.split()
    common = all(w.isalpha() and zipf_frequency(w, "en") >= 3.0 for w in words)
    if not name and (is_plain(value) or common and len(words) == 1):  # "4471", "839", "sunshine": listed only
        return None
    if common and not (name and len(words) > 1 or phrase and is_phrase(words)):
        return None  # a name of two common words ("Sarah Miller") is still a name (sixth breaker run, N5)
    if _DATE.fullmatch(value):  # "my last login was 2024-05-01": a date, not a secret (seventh breaker run)
        return None
    return VALUE_MARK + " ".join(words)  # matched as written (:func:`_value_pattern`), not as a code


def is_plain(value: str) -> bool:
    """Whether a secret's value is too plain to tell a quote of it from a mere mention: a number of fewer than
    ``DIGITS_MIN`` digits ("4471", "839", "2024") or one known word ("sunshine", "Marmalade"; not a made-up one,
    "Zorblax"). Such a value is no needle: a message that holds it is kept and listed (``Plan.possible``), for the
    user to erase by id. Eleven breaker runs showed why: read as a quote near a secret word, "Typed 4471 at the
    ATM" went with the PIN 4471, and so did "Withdrew 1500 cash", "I collect football cards", "Our safe house was
    built 1987"; read anywhere, "I moved to Berlin in 2024" went with a PIN 2024. Which message quotes a plain
    value is the user's call, made on the list."""
    from wordfreq import zipf_frequency

    squashed = re.sub(r"[\s\-]", "", value)
    if squashed.isdigit():
        return len(squashed) < DIGITS_MIN
    return value.isalpha() and zipf_frequency(value, "en") >= DISTINCTIVE_ZIPF


SHARED = re.compile(
    r"^(?:employer|company|workplace|office|team|job|role|occupation|profession|title|school|university|college|"
    r"location|home|city|town|country|hometown|birthplace|nationality|region|neighbou?rhood|languages?|"
    r"tools?|tool for .*|.* version|hobby|hobbies|diet|sport|religion|club|gym|bank|church|airline|"
    r"favou?rite .*|preferred .*|wi-?fi|internet|broadband|isp|provider|carrier|network|tariff|.* plan)$",
    re.IGNORECASE,
)
"""Slots whose value is a place, an organisation or a thing many facts share (``employer`` "Northwind",
``location`` "Lisbon"): a ``forget`` of one takes no rare word of its value, since "My manager at Northwind is
Ingeborg" does not quote the user's employment (fifth breaker run, F4); nor a preference (``favorite editor``
"Neovim": "Neovim crashed today" is another fact; ninth run, F9), nor a provider (``wifi`` "Hyperoptic 1Gb";
fourteenth run). Any other slot's value is a name the user
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
    if attribute.lower().endswith("code") and NOT_SECRET_CODE.search(attribute[:-4]):  # "error code", "source code"
        return False
    if IDENTIFYING.search(attribute):  # a phone slot holding no number holds the device ("Pixel 8": N4)
        return not PHONE.search(attribute) or sum(c.isdigit() for c in str(memory["value"] or "")) >= DIGITS_MIN

    value = str(memory["value"] or "")
    return attribute in ("location", "home") and any(  # a street address, not "a 3 bedroom house" (tenth run, N2)
        _STREET.match(part.strip() + " ") or _mixed_token(part) for part in value.split(","))


def slot_value(memory: Any) -> str | None:
    """A structured memory's value when it is short enough to be a name (``SLOT_MAX_WORDS``), else None (a note's
    value is its whole sentence)."""
    value = str(memory["value"] or "")
    if memory["kind"] == "note" or not value.strip() or len(value.split()) > SLOT_MAX_WORDS:
        return None
    return value


_ADDRESS_SLOT = re.compile(r"(?:^|\s)(?:address|location|home)$", re.IGNORECASE)


PASSWORD = re.compile(r"(?:^|\s)(?:password|passphrase|passwort|passwd|pwd|pw)$", re.IGNORECASE)
"""A slot whose value is a password: a phrase of up to ``SECRET_MAX_WORDS`` words, common words included."""


def password_phrase(memory: Any) -> str | None:
    """A password slot's value of two to ``SECRET_MAX_WORDS`` words ("correct horse battery staple"), else None."""
    value = str(memory["value"] or "").strip()
    if memory["kind"] == "note" or not PASSWORD.search(str(memory["attribute"] or "")):
        return None
    return value if 1 < len(value.split()) <= SECRET_MAX_WORDS else None


_STREET = re.compile(
    r"^(?P<street>\S*\d\S*\s+.*?\b(?:street|st|road|rd|avenue|ave|way|lane|ln|drive|dr|boulevard|blvd|place|pl|"
    r"court|ct|terrace|close|crescent|square|sq|row|parade|highway|hwy|rue|via|calle|strasse|straße|allee|gasse|"
    r"weg|platz|plaza|avenida|camino)\b\.?)(?=[\s,])",
    re.IGNORECASE,
)
"""A street at the start of an address part: a house number, words, a street word ("42 Wallaby Way" Sydney)."""


def _mixed_token(text: str) -> bool:
    """Whether a word of ``text`` mixes letters and digits ("221B", "4B"; not an ordinal, "5th")."""
    return any(
        any(c.isdigit() for c in w) and any(c.isalpha() for c in w) and not re.fullmatch(r"\d+(?:st|nd|rd|th)", w.lower())
        for w in text.split()
    )


def secret_slot_values(memory: Any) -> list[str]:
    """The values of an :func:`identifying` memory that are needles: its :func:`slot_value`; for a street address,
    each comma-separated part holding a digit and either three words or a code ("221B Baker Street", "17 Old Kent
    Road", quoted alone elsewhere; not "Flat 4" or "Apt 3", which "my bike tyre went flat 4 times" holds, nor the
    city, a place many facts share), and the street of a part that runs on into its town ("42 Wallaby Way" of "42
    Wallaby Way Sydney"). Issue 21, N7; ninth breaker run, F3/F4."""
    value = str(memory["value"] or "")
    if _ADDRESS_SLOT.search(str(memory["attribute"] or "")) and any(c.isdigit() for c in value):
        out = []
        for part in (p.strip() for p in value.split(",")):
            words = part.split()
            if not any(c.isdigit() for c in part) or len(words) < 3 and not _mixed_token(part):  # "221B"
                continue
            out.append(part)
            if street := _STREET.match(part + " "):
                out.append(street.group("street").strip())
        return list(dict.fromkeys(out))
    return [v] if (v := slot_value(memory)) is not None else []


HASHED_MARK = "\x00h:"
"""The prefix of a whole-text needle kept as a digest by a pending erase job
(:func:`memory_graph.store.erase.job_payload`)."""
VALUE_MARK = "\x00v:"
"""Marks a slot's or a secret's value among the needles (:func:`value_needle`, :func:`_value_pattern`)."""
IGNORE_MARK = "\x00i:"
"""Marks a string that is never a quote: a needle's match lying wholly inside an occurrence of it does not count
(:func:`quotes`). The namespace's own user id (a user "cust-48213597" erasing the number 48213597 quoted it in
every item key, ref and field that names the user; seventeenth breaker run). Not a needle itself."""


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


def text_digest(salt: str, text: str) -> str:
    """The salted SHA-256 hex digest of ``text``: how a pending erase job keeps a whole erased text (never the text)."""
    return hashlib.sha256(f"{salt}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()
