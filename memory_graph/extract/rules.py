"""The deterministic rule extractor: sentences -> (subject, attribute, value, scope) memory records.

Decisions (see docs/ARCHITECTURE.md):
- Only people's turns form memories; the assistant's and tools' turns are stored as observations only,
  so the assistant's words never become facts about the user.
- Questions, greetings and hypotheticals / role-play ("pretend my name is...", "for this demo") form none.
- "my brother Leo ...", "Leo moved ..." make Leo the subject; "I/my/we/our" make the speaker the subject.
- Relative dates ("last month") resolve against the observation's time into ``valid_from``.
- Anything declarative that no pattern names becomes a ``note`` (or an ``event`` when it is dated or in
  the past tense) whose attribute is its masked *frame*, so the linker can still compare it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from itertools import takewhile

import pysbd
from wordfreq import zipf_frequency

from memory_graph.records import USER_SPEAKERS, MemoryRecord, Observation, is_assistant
from memory_graph.timeutil import RELATIVE_RE, parse_time, resolve_relative, to_iso

COMMON_WORD_ZIPF = 4.8
"""A sentence-initial capitalised word at or above this wordfreq Zipf frequency ("The", "This", "Everyone")
is not taken for a name."""
WE = "we"
"""The subject of group statements ("we", "our team") and of impersonal ones ("Billing runs on X"):
facts of the namespace's group, which any of its speakers may update."""

RELATIONS = (
    "brother|sister|mother|father|mom|mum|dad|wife|husband|partner|boyfriend|girlfriend|friend|best friend|"
    "son|daughter|boss|colleague|coworker|co-worker|cousin|aunt|uncle|grandma|grandmother|grandpa|"
    "grandfather|neighbor|neighbour|roommate|niece|nephew"
)
HYPOTHETICAL = re.compile(
    r"\b(pretend|imagine|suppose|supposing|hypothetically|let'?s say|what if|role-?play|for (?:this|the) demo|"
    r"in this (?:story|game)|if i were|just kidding|as a joke)\b",
    re.IGNORECASE,
)
_REQUEST_LEAD = (
    r"^(?:(?:please|pls|can you|could you|would you|will you|and|also|actually|oh|ok|okay|so|btw|hey|um|hmm|"
    r"one more thing|on second thought)[,\s]+)*"
)
_FORGET_VERB = r"(?:forget|don'?t keep|do not keep|delete|erase|stop remembering|remove)\s+"
_FORGET_SAID_VERB = (r"(?:forget|don'?t keep|do not keep|don'?t remember|do not remember|delete|erase|stop remembering|"
                     r"remove|scrap|scratch|drop|disregard|wipe|unremember)\s+")
"""Verbs of a forget request; the wider list only before "what I said about" / "the bit about" ("drop the kids
at school" is no request)."""
FORGET = re.compile(
    _REQUEST_LEAD + _FORGET_VERB + r"(?:about\s+|everything about\s+)?(?:my|the)\s+(?P<what>[\w' -]+?)\s*(?:[.!,]|$)",
    re.IGNORECASE,
)
"""A request to forget, at the start of a sentence ("Please forget my address."); "Don't forget my
appointment" and "I always forget my password" are not requests."""
FORGET_ABOUT = re.compile(
    _REQUEST_LEAD + _FORGET_SAID_VERB + r"(?:about\s+)?"
    r"(?:(?:what|everything|anything|all|whatever|all that|that)\s+(?:i|i've|i have|i'd|we|we've)\s+(?:just\s+)?"
    r"(?:said|told you|mentioned|shared|wrote|written|say|tell you|noted|posted)"
    r"|(?:the|that|this|my|those|these|any)\s+(?:stuff|thing|things|bit|bits|part|info|information|details?|notes?|"
    r"comments?|story|news|message|mention))"
    r"\s+(?:about|re|regarding|on|concerning|of|with)\s+"
    r"(?P<topic>[^.!?;,]+(?:,\s*(?:the|that|all the)\s+[^.!?;,]+?\s+(?:thing|stuff|bit|part|business|story|news))?)",
    re.IGNORECASE,
)
"""A request to forget what was said about a topic, whoever it is about ("forget what I told you about Paddy's
hip", "please scrap the bit about Josh being made redundant"): it covers the speaker's own statements on the
topic (``linking._forget_targets``); its record's attribute is ``FORGET_TOPIC``."""
FORGET_TOPIC = "(said about)"
"""The attribute of a ``FORGET_ABOUT`` request's record (the one place that names it)."""
SMALL_TALK = re.compile(
    r"^(hi|hello|hey|thanks|thank you|ok|okay|cool|great|perfect|good night|bye|sure|yes|no|ha+|hmm+|"
    r"will do|got it|nice|wow|brr|morning|good morning)\b[\s!.,]*$",
    re.IGNORECASE,
)
PHATIC_WORDS = frozenset(["hi", "hello", "hey", "hiya", "yo", "morning", "evening", "afternoon", "night", "goodnight", "nite", "bye", "goodbye", "cya", "later", "soon", "tomorrow", "tonight", "today", "now", "for", "the", "that's", "thats", "that", "it", "is", "all", "i'm", "im", "i'll", "ill", "we'll", "will", "be", "back", "off", "done", "finished", "again", "then", "so", "well", "thanks", "thank", "thx", "ty", "cheers", "appreciate", "appreciated", "much", "very", "lot", "lots", "ton", "a", "you", "your", "u", "so", "really", "super", "ok", "okay", "k", "kk", "cool", "great", "perfect", "nice", "good", "fine", "awesome", "lovely", "brilliant", "excellent", "amazing", "wonderful", "sweet", "neat", "sure", "yes", "yeah", "yep", "yup", "no", "nope", "nah", "right", "alright", "gotcha", "got", "noted", "understood", "makes", "sense", "sounds", "talk", "chat", "speak", "see", "catch", "bye-bye", "ttyl", "brb", "gtg", "gotta", "go", "heading", "signing", "out", "logging", "wrapping", "up", "lol", "haha", "hahaha", "lmao", "hehe", "hmm", "hm", "oh", "ah", "wow", "ooh", "uh", "um", "all's", "set", "help", "helping", "helpful", "just", "one", "more", "thing", "bit", "this"])
"""Words of greetings, thanks, acknowledgements and sign-offs. A sentence made only of these (and punctuation or
emoji) says nothing to remember ("That's all for tonight, thanks.", "ok cool, talk later!"): ``phatic``."""


def phatic(sentence: str) -> bool:
    """Whether ``sentence`` is only greeting, thanks, acknowledgement or sign-off (every word in ``PHATIC_WORDS``;
    a name, a number or any other word makes it a statement). Pure."""
    words = re.findall(r"[a-z']+|\d+", sentence.lower().replace("\u2019", "'"))
    return bool(words) and all(w in PHATIC_WORDS for w in words)


UPDATE_CUE = re.compile(
    r"\b(now|moved|relocated|switched|changed|no longer|anymore|any more|stopped|quit|new|instead|"
    r"replaced|migrated|moving|upgraded|downgraded|became|become|from now on|these days|nowadays|"
    r"started|joined|left|gave up|went back|back to|not .* anymore|has been replaced)\b",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"^(?:(?:am|'m|is|are|'re)\s+)?(?:no longer|not\s+(?=.*\bany ?more\b)|don'?t\s+(?=.*\bany ?more\b)|"
    r"do not\s+(?=.*\bany ?more\b)|doesn'?t\s+(?=.*\bany ?more\b)|never\s+(?=.*\bagain\b)|"
    r"(?:have\s+|'ve\s+)?(?:stopped|quit|gave up|given up|dropped|ditched|cut out)\b)",
    re.IGNORECASE,
)
"""Retraction wording at the start of a clause: "no longer", "stopped", "quit", "gave up", "don't ... anymore".
Plain negation ("I'm not gonna give up", "I don't like X") is a statement, not a retraction."""
_ENDING_VERBS = (r"(?:sold|gave away|given away|got rid of|cancel+ed|retired|died|passed away|was put down|put to sleep|"
                 r"shut down|broke up with|moved out of|stopped using|quit using|stopped going to)")
ENDED = re.compile(
    rf"^(?:(?:i|we)\s+(?:(?:just|finally|already|have|'ve|had)\s+)*{_ENDING_VERBS}\s+(?P<object>[^,;.!]+)"
    rf"|(?:my|our)\s+(?P<mine>[^,;]+?)\s+(?:just\s+)?{_ENDING_VERBS}\b[^,;]*"
    rf"|(?P<name>[A-Z][\w'-]+)\s+(?:just\s+)?{_ENDING_VERBS}\b[^,;]*)[.!]*$",
    re.IGNORECASE,
)
"""An ending event of the speaker's own: "I sold the Civic", "we retired Jenkins", "my dog Rex died", "Kiki passed
away" (a closed vocabulary of ending verbs, the speaker or their group as the actor, or their thing or a bare name
as the one that ended). It retracts, for the speaker's party, what it names (the ``object``: linking matches the
names in it, ``linking._retraction_targets``); nothing replaces it. "Caroline's dog died" is not the speaker's."""
_THING_END = re.compile(r"\s+(?:to|for|in|on|at|with|from|because|after|before|last|yesterday|today|this|since|"
                        r"ago|when|while)\b", re.IGNORECASE)
ROLE_HOLDER = re.compile(
    r"^(?:so\s+|and\s+|now\s+)?(?P<name>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)\s+(?:is|'s|will be|has become|became)\s+"
    r"(?:now\s+|currently\s+|officially\s+)?(?:the|our)\s+(?:new\s+)?(?P<role>[a-z][\w/-]*(?:\s+[a-z][\w/-]*){0,3})"
    r"(?:\s+now)?[.!]*$",
)
"""A role held by one person at a time: "Priya is now the on-call owner", "Ana is our treasurer". The definite
article makes it the group's slot ("the treasurer": one at a time), not the person's trait ("Ana is a
nurse"), so the new holder replaces the old one."""
CALL_ME = re.compile(r"^(?:please\s+|just\s+|you can\s+)?call me\s+(?P<name>[A-Z][\w'-]+)[.!]*$", re.IGNORECASE)
"""The name the speaker goes by ("Call me Marcus"): the speaker's ``name``, replacing an earlier one."""
MULTI_CUE = re.compile(r"\b(also|too|as well|another|both|and also)\b", re.IGNORECASE)
SCOPE_RE = re.compile(
    r"\b(?:in|on|for|at)\s+(?:the\s+|our\s+)?(?P<scope>staging|production|prod|development|dev|qa|test|testing|"
    r"eu[- ]region|us[- ]region|the eu|europe|asia|apac|emea|[a-z0-9-]+ (?:project|team|region|cluster|app|environment))\b",
    re.IGNORECASE,
)
LEAD_TEAM = re.compile(
    r"^(?:the|our)\s+(?P<scope>[a-z0-9-]+ (?:team|project|squad))\s+"
    r"(?P<rest>(?:(?:doesn't|does not|has|is|no longer|stopped|quit|dropped)\s+)*"
    r"(?:uses|using|use|runs|relies on|is using|picked|chose|went with|switched|migrated)\b.+)$",
    re.I,
)
TEAM_VERBS = {"doesn't": "don't", "does not": "do not", "has": "have", "is": "are"}
"""A team's verb as the group's ("The search team doesn't use X anymore" -> "we don't use X anymore")."""
SCOPE_WORDS = r"(?:staging|production|prod|development|dev|qa|the eu region|eu region|the eu|us region)"
VERSIONED = re.compile(r"^([A-Za-z][\w+#-]*)\s+v?\d+(?:\.\d+)*\b")
PLAIN_USE = re.compile(
    r"^(?:now\s+|currently\s+|still\s+)?(?:use|uses|run|runs|are running|'re running|are on|'re on|upgraded to|downgraded to)\s+(?P<v>[A-Z][\w.+#-]*(?:\s+[\w.+#-]+)?)$"
)
DIETS = "vegetarian|vegan|pescatarian|pescetarian|gluten-free|keto|paleo|lactose intolerant|omnivore"
PET_WORDS = "cat|cats|dog|dogs|puppy|kitten|hamster|rabbit|bunny|parrot|bird|fish|turtle|snake|horse|guinea pig"

LIST_ATTRIBUTES = {"languages", "likes", "pets", "hobbies"}
"""Attributes whose value may be a list ("Dutch, Swahili and Korean"): one memory per member, up to
MAX_LIST_MEMBERS; the list ends at a clause word ("I like hiking, but not running")."""
MAX_LIST_MEMBERS = 20
INFINITIVE = re.compile(r"\s*to\s+\w", re.I)
"""A value that is an activity ("likes to talk about home, work and cars") is one value, not a list."""
CLAUSE_WORD = re.compile(r"(?:but|which|since|because|so|where|who|though|although|while)\b", re.I)
# (pattern on the clause after the subject, attribute, kind, multi, value is a list)
Pattern = tuple[re.Pattern[str], str, str, bool]
CLAUSE_PATTERNS: list[Pattern] = [
    (re.compile(r"^(?:'s|is|am|'m)\s+called\s+(?P<v>.+)$|^name\s+is\s+(?P<v2>.+)$", re.I), "name", "state", False),
    (re.compile(r"^(?:just\s+|recently\s+|finally\s+|have\s+|'ve\s+|has\s+)?(?:moved|relocated|moving)\s+(?:back\s+)?to\s+(?P<v>.+)$", re.I), "location", "state", False),
    (re.compile(r"^(?:still\s+|now\s+|currently\s+)?(?:live|lives|living|am living|'m living|reside|resides|based)\s+(?:in|at)\s+(?P<v>.+)$", re.I), "location", "state", False),
    (re.compile(r"^(?:'m|am|is)\s+(?:now\s+|currently\s+)?(?:based|living)\s+in\s+(?P<v>.+)$", re.I), "location", "state", False),
    (re.compile(r"^(?:still\s+|now\s+|currently\s+)?(?:work|works|working|am working|'m working)\s+(?:at|for)\s+(?P<v>.+)$", re.I), "employer", "state", False),
    (re.compile(r"^(?:just\s+|recently\s+)?(?:joined|started at|started working at|got a job at|got hired at|was hired by)\s+(?P<v>.+)$", re.I), "employer", "state", False),
    (re.compile(rf"^(?:also\s+)?(?:have|has|got|adopted|own|owns|rescued)\s+(?:a|an|one|two|three|another|new)?\s*(?P<v>(?:\w+\s+)?(?:{PET_WORDS})\b.*)$", re.I), "pets", "state", True),
    (re.compile(r"^(?:also\s+|really\s+)?(?:like|likes|love|loves|enjoy|enjoys|adore|adores)\s+(?P<v>.+)$", re.I), "likes", "preference", True),
    (re.compile(r"^(?:also\s+|really\s+)?(?:hate|hates|dislike|dislikes|can't stand)\s+(?P<v>.+)$", re.I), "dislikes", "preference", True),
    (re.compile(r"^(?:also\s+)?(?:speak|speaks)\s+(?P<v>.+)$", re.I), "languages", "state", True),
    (re.compile(r"^(?:also\s+)?(?:'ve\s+|have\s+)?(?:picked up|took up|taken up|started)\s+(?P<v>(?!working|at\b).+)$", re.I), "hobbies", "preference", True),
    (re.compile(rf"^(?:'m|am|is|'ve been|have been|has been)\s+(?:now\s+|still\s+|a\s+)?(?P<v>{DIETS})\b.*$", re.I), "diet", "state", False),
    (re.compile(rf"^(?:went|am going|'m going|have gone|'ve gone)\s+back\s+to\s+being\s+(?P<v>{DIETS})\b.*$", re.I), "diet", "state", False),
    (re.compile(r"^(?:now\s+|still\s+)?(?:drive|drives)\s+(?:a|an)?\s*(?P<v>.+)$", re.I), "car", "state", False),
    (re.compile(r"^(?:'m|am|is|(?:now\s+)?(?:work|works|working|am working|'m working|is working)\s+as)\s+(?:now\s+)?(?:a|an)\s+(?P<v>.+)$", re.I), "role", "state", False),
    (re.compile(r"^(?:'m|am|is)\s+(?P<v>\d{1,3})(?: years old)?\s*$", re.I), "age", "state", False),
]
POSSESSIVE = re.compile(
    r"^(?P<attr>(?:new\s+|current\s+|old\s+)?[a-z][a-z -]{1,40}?)\s+(?P<verb>is|are|'s)\s+(?:now\s+|still\s+)?(?P<v>.+)$", re.I
)
TOOL_USE = re.compile(
    r"^(?:now\s+|currently\s+|still\s+)?(?:use|uses|using|are using|'re using|run|runs|are running|'re running|rely on|relies on|went with|go with|chose|picked|standardi[sz]ed on)\s+"
    r"(?P<v>(?!only\b|on\b|every\b|most\b).+?)\s+(?:for|as|in|on|to)\s+(?:the\s+|our\s+)?(?P<topic>.+)$",
    re.I,
)
SWITCH = re.compile(
    r"^(?:just\s+|have\s+|'ve\s+)?(?:switched|moved|migrated|changed|upgraded|downgraded|ported)\s+(?:the\s+|our\s+)?(?P<topic>.+?)\s+(?:to|over to|onto)\s+(?P<v>.+)$",
    re.I,
)
_VALUE_STOP_WORDS = (
    r";|\s+-\s+|\s+by the way\b|\s+btw\b|\s+because\b|\s+since\b|\s+so\b|\s+but\b|\s+which\b|\s+where\b|\s+and\s+(?:i|we|he|she|it|they|my|our)\b|\s+(?:there|now|too|as well|anymore|any more|these days|already)\b"
)
VALUE_STOP = re.compile(rf"(?:,(?!\d{{3}}\b)|{_VALUE_STOP_WORDS})", re.I)
"""Where a captured value ends: a comma (not a thousands separator), a clause word, a time phrase."""
ADDRESS_VALUE_STOP = re.compile(rf"(?:{_VALUE_STOP_WORDS})", re.I)
"""Where an address ends: as ``VALUE_STOP`` but through its commas ("Flat 4, 221B Baker Street, London")."""
ADDRESS = re.compile(
    r"^(?:(?:home|postal|mailing|street|work|office|shipping|billing|delivery|new|old|current|our|his|her|their)\s+)*address$",
    re.I,
)
"""Attributes whose value is a postal address (not an e-mail, IP or web address)."""
STREET_START = re.compile(r"(?:\d|(?:flat|apt|apartment|unit|suite|no\.?)\s*\d)", re.IGNORECASE)
"""A place that starts as a street address does ("I live at Apt 3, 12 Elm Street": a number, a flat's number)."""
NARRATIVE = re.compile(
    r"\b(?:went|visited|saw|met|attended|watched|ate|bought|made|took|did|traveled|travelled|spent|celebrated|"
    r"finished|got back|came back|had a|was at|were at|was in|were in)\b",
    re.I,
)
"""Past-tense narrative verbs that make a statement an ``event`` (something that happened, never superseded)."""
PAST_TENSE = re.compile(r"\b(?:went|did|saw|met|visited|bought|made|took|had|was|were|got|finished|attended|\w+ed)\b", re.I)


@dataclass
class SubjectResolution:
    subject: str
    clause: str
    first_person: bool
    possessive: bool
    pronoun: str = ""
    """The third-person pronoun the sentence starts with ("she", "his"), resolved to ``subject``."""
    gender: str = ""
    """``he`` / ``she`` when a relation word says so ("my sister Ana"); empty when unknown (a name)."""


def speaker_subject(speaker: str) -> str:
    """The subject a speaker's first-person statements are about ("user" for the user)."""
    s = speaker.strip()
    return "user" if s.lower() in USER_SPEAKERS else s



PREAMBLE = re.compile(
    r"^(?:(?:and|also|oh|so|well|but|anyway|btw|by the way|plus|actually|honestly|yes|yeah|okay|ok|hmm|hi|hey|"
    r"right|sure|good|great|perfect|thanks|alright)\b[,!]?\s+|[\w' -]{1,30}:\s+)",
    re.I,
)
CLAUSE_BREAK = re.compile(
    r"\s*(?:,|;)\s+(?:(?:but|and|so|because)\s+)?(?=(?:I|I'm|I've|we|we're|my|our|he|she|he's|she's)\b)"
    r"|\s+(?:and|but)\s+(?=(?:he|she|he's|she's)\s)"
)
"""Where a sentence's next clause starts with its own subject: after a comma ("I switched jobs, I now work at
X"), or after "and"/"but" before a third-person pronoun ("my sister Ana moved to Vienna and she works as an
architect"; the pronoun is resolved in ``extract``)."""
MALE_RELATIONS = {"brother", "father", "dad", "husband", "boyfriend", "son", "grandpa", "grandfather", "uncle", "nephew"}
FEMALE_RELATIONS = {"sister", "mother", "mom", "mum", "wife", "girlfriend", "daughter", "grandma", "grandmother", "aunt", "niece"}
PRONOUN = re.compile(r"^(?P<p>he|she)(?P<c>'s)?\s+(?P<rest>.+)$|^(?P<poss>his|her)\s+(?P<prest>.+)$", re.I)
GROUP_THING = re.compile(
    r"^(?:\w+s\s+(?:are|were|have|get|go|run|need)\b"
    r"|(?:is|are)\s+(?:now\s+|still\s+|currently\s+)?(?:being\s+)?(?:used|run|hosted|stored|handled|managed|backed|powered)\s+(?:for|as|by|in|on|to)\b"
    r"|(?:is|are)\s+(?:now\s+|still\s+|currently\s+)?our\b"
    r"|(?:serves|acts)\s+as\b"
    r"|(?:runs|sits)\s+(?:on|atop)\b"
    r"|(?:powers|backs|hosts|stores|holds|handles)\b)",
    re.I,
)
"""What a capitalised first word does when it is the group's thing, not a person: a noun phrase ("Customer
emails are sent through X"), a tool in a role ("Kafka is used for events", "Kafka is our choice for events",
"X serves as the queue", "X powers search"). Such a statement is the group's (subject ``we``), like "The
billing database runs on X"; a person's statement ("Ana moved to Vienna", "Sofia said ...") keeps its name."""
GENDERED = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself)\b", re.I)


LEAD_CLAUSE_WORDS = 4
LABELLED_MIN_WORDS = 4
"""A "label: statement" sentence loses its label only when the statement has at least this many words, so
"The message queue: NATS." and "Invoice storage: CockroachDB going forward." keep their topic."""


def strip_preamble(sentence: str) -> str:
    """Drop leading interjections and topic labels ("Oh, and", "Work news too:") before the statement."""
    previous = None
    s = sentence.strip()
    while previous != s:
        previous = s
        stripped = PREAMBLE.sub("", s, count=1).strip()
        label = ":" in s[: len(s) - len(stripped)]
        if not label or len(stripped.split()) >= LABELLED_MIN_WORDS:
            s = stripped
    return s or sentence.strip()


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


_INNER_STOP = re.compile(r"[.!?\u061f\u06d4\u0964\u0965\u203c\u203d\u2026\u3002\uff01\uff0e\uff1f]\W*\S")
"""A sentence-ending mark with more text after it: only a line that has one can hold two sentences."""


def _segments(line: str) -> list[str]:
    """pysbd's sentences of one line; a line with no sentence-ending mark before its end is one sentence as it
    is (what pysbd returns for it, without running its rules: a third of the rule extractor's time, issue 13)."""
    return _segmenter().segment(line) if _INNER_STOP.search(line) else [line]


def split_sentences(text: str) -> list[str]:
    """Split a turn into sentences (pysbd: abbreviations like "Dr." and decimals like 7.2 stay inside)
    and first-person clauses ("I switched jobs, I now work at X"). A first clause that is a hypothetical cue
    ("For this demo, I work at X") or a scope phrase before a group statement ("In staging, we ...") stays with
    the next one; a greeting ("Hey Mel, I moved ...") or a place ("In Asia, I moved ...") does not. Curly
    apostrophes become straight ones. Pure, and cached per text (the extractor and the withheld check both ask)."""
    return list(_split_sentences(text))


@lru_cache(maxsize=4096)
def _split_sentences(text: str) -> tuple[str, ...]:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    parts: list[str] = []
    for seg in (seg for line in text.strip().splitlines() for seg in _segments(line) if seg.strip()):
        number = re.match(r"(\d+(?:\.\d+)*\.)\s+(\S.*)$", seg.strip(), re.S)
        if number and parts and not parts[-1].rstrip().endswith((".", "!", "?", ":", ";")):
            # pysbd reads "we run Redis 6. In production ..." as a list item "6."; the number ends the sentence
            parts[-1] = f"{parts[-1].rstrip()} {number.group(1)}"
            seg = number.group(2)
        parts.append(seg)
    out: list[str] = []
    for part in parts:
        clauses = [c.strip() for c in CLAUSE_BREAK.split(part) if c and c.strip()]
        lead_scope = (len(clauses) > 1 and len(clauses[0].split()) <= LEAD_CLAUSE_WORDS and SCOPE_RE.match(clauses[0])
                      and re.match(r"(?:we|we're|our)\b", clauses[1], re.I))  # a scope is the group's
        if len(clauses) > 1 and (HYPOTHETICAL.search(clauses[0]) or lead_scope):
            # "For this demo, I work at X" stays hypothetical; "In staging, we ..." keeps its scope
            clauses[:2] = [f"{clauses[0].rstrip(',;')} {clauses[1]}"]
        out.extend(clauses)
    return tuple(out)


def _resolve_subject(sentence: str, speaker_subj: str, antecedent: SubjectResolution | None = None) -> SubjectResolution | None:
    """Who a sentence is about, and the clause after the subject. ``antecedent``: the last third party named
    earlier in the same message, for a sentence that starts with "he"/"she"/"his"/"her" (a pronoun with no
    fitting antecedent is its own unnamed third party, "She"; never the speaker or the group)."""
    s = strip_preamble(sentence)
    m = PRONOUN.match(s)
    if m:
        word = (m.group("p") or m.group("poss")).lower()
        gender = "he" if word in ("he", "his") else "she"
        fits = antecedent is not None and antecedent.gender in ("", gender)
        subject = antecedent.subject if fits and antecedent is not None else gender.capitalize()
        if m.group("poss"):
            return SubjectResolution(subject, m.group("prest"), False, True, pronoun=word, gender=gender)
        rest = m.group("rest")
        if m.group("c"):  # "she's an architect" / "she's been vegan"
            rest = ("has " if re.match(r"(?:been|got|gone|had)\b", rest, re.I) else "is ") + rest
        return SubjectResolution(subject, rest, False, False, pronoun=word, gender=gender)
    m = re.match(rf"^my\s+(?:(?:older|younger|little|big|best)\s+)?(?P<rel>{RELATIONS})(?:,?\s+(?P<name>(?-i:[A-Z][a-z]+)))?,?\s+(?P<rest>.+)$", s, re.I)
    if m and not re.match(r"^(?:is|'s|are)\s+(?:called|named)\b", m.group("rest"), re.I):
        name = m.group("name")
        rest = m.group("rest")
        if name and re.match(r"^(?:is|'s)\s+", rest, re.I) and not re.search(r"\b(?:lives?|works?|moved)\b", rest):
            pass
        subject = name or f"{speaker_subj}'s {m.group('rel').lower()}"
        rel = m.group("rel").lower()
        gender = "he" if rel in MALE_RELATIONS else "she" if rel in FEMALE_RELATIONS else ""
        return SubjectResolution(subject, rest, False, False, gender=gender)
    m = re.match(r"^(?P<who>i|we|our team|our company|the team)\b\s*(?P<rest>.*)$", s, re.I)
    if m:
        who = speaker_subj if m.group("who").lower() == "i" else WE
        return SubjectResolution(who, m.group("rest"), who != WE, False)
    m = re.match(r"^(?:i'm|i've|i'd|we're|we've)\b\s*(?P<rest>.*)$", s, re.I)
    if m:
        contraction = s.split()[0].lower()
        prefix = {"i'm": "'m ", "we're": "'re ", "i've": "'ve ", "we've": "'ve ", "i'd": "'d "}[contraction]
        who = WE if contraction.startswith("we") else speaker_subj
        return SubjectResolution(who, prefix + m.group("rest"), who != WE, False)
    m = re.match(r"^(?P<who>my|our)\s+(?P<rest>.+)$", s, re.I)
    if m:
        who = speaker_subj if m.group("who").lower() == "my" else WE
        return SubjectResolution(who, m.group("rest"), who != WE, True)
    m = re.match(
        rf"^(?P<name>[A-Z][a-z]+(?:'s\s+(?:{RELATIONS}|manager|teacher|coach|doctor|dentist|landlord))*)(?:\s+(?P<rest>(?:\w+s|\w+ed|is|has|had|was|were|will|would|can|could|did|does|said|told|went|got|made|took|came|left|bought|saw|met|found|gave|became|began|ran|won|lost|just|also|still|now|never|always|recently|finally|really)\b.*)|'s\s+(?P<attr_rest>.+))$",
        s,
    )
    if m and zipf_frequency(m.group("name").split("'")[0].lower(), "en") < COMMON_WORD_ZIPF:
        if m.group("attr_rest"):
            return SubjectResolution(m.group("name"), m.group("attr_rest"), False, True)
        rest = m.group("rest")
        if GROUP_THING.match(rest) and not GENDERED.search(s) and not any(p.match(rest) for p, *_ in CLAUSE_PATTERNS):
            return None  # "Kafka is our choice for events": the group's statement about a thing
        return SubjectResolution(m.group("name"), rest, False, False)
    return None


def clean_value(raw: str, stop: re.Pattern[str] = VALUE_STOP) -> str:
    """Cut a captured value at clause boundaries (``stop``), time phrases and filler; strip punctuation."""
    value = stop.split(raw, maxsplit=1)[0]
    value = RELATIVE_RE.sub("", value)
    value = re.sub(r"\b(?:last|next|this)\s+(?:week|month|year|weekend)\b", "", value, flags=re.I)
    value = re.sub(r"[\s.!?\"')]+$", "", value).strip(" ,.;:!?\"'")
    value = re.sub(r"^(?:the|a|an)\s+(?=[A-Z])", "", value)
    value = re.sub(r"^(?:called|named|known as)\s+(?=\S)", "", value, flags=re.I)  # "called Tofu": the value is "Tofu"
    return re.sub(r"\s{2,}", " ", value)


def _normalise_scope(raw: str) -> str:
    scope = raw.lower().strip()
    return {"the eu": "eu", "eu region": "eu", "eu-region": "eu", "europe": "eu", "dev": "development",
            "prod": "production", "us-region": "us", "us region": "us", "testing": "test"}.get(scope, scope)


def _scope(sentence: str) -> tuple[str, str]:
    m = SCOPE_RE.search(sentence)
    if not m:
        return "", sentence
    scope = _normalise_scope(m.group("scope"))
    rest = (sentence[: m.start()] + sentence[m.end() :]).strip()
    return scope, re.sub(r"\s{2,}", " ", rest)


TEMPLATES = {
    "location": "{S} lives in {V}",
    "employer": "{S} works at {V}",
    "role": "{S} is a {V}",
    "name": "{P} name is {V}",
    "pets": "{S} has a pet: {V}",
    "likes": "{S} likes {V}",
    "dislikes": "{S} dislikes {V}",
    "languages": "{S} speaks {V}",
    "hobbies": "{S} has taken up {V}",
    "diet": "{P} diet is {V}",
    "car": "{P} car is a {V}",
    "age": "{S} is {V} years old",
}


def canonical_text(subject: str, attribute: str, value: str, scope: str, polarity: int, fallback: str) -> str:
    """A focused third-person statement of the record ("The user lives in Porto (scope: staging)")."""
    if polarity < 0:
        return fallback
    name = {"user": "The user", WE: "We"}.get(subject, subject)
    poss = {"user": "The user's", WE: "Our", "She": "Her", "He": "His"}.get(subject, f"{subject}'s")  # "She": unresolved
    if attribute.startswith("tool for "):
        text = f"{name} uses {value} for {attribute[len('tool for '):]}"
    else:
        text = TEMPLATES.get(attribute, "{P} {A} is {V}").format(S=name, P=poss, A=attribute, V=value)
        if attribute == "role" and re.match(r"[aeiou]", value, re.I):
            text = text.replace(" is a ", " is an ", 1)  # "Ana is an architect"
    if subject == WE:
        text = re.sub(r"^We (lives|works|has|is|likes|dislikes|speaks|uses|drives)\b",
                      lambda m: "We " + {"lives": "live", "works": "work", "has": "have", "is": "are", "likes": "like",
                                         "dislikes": "dislike", "speaks": "speak", "uses": "use", "drives": "drive"}[m.group(1)], text)
    return text + (f" (in {scope})" if scope else "") + "."


def mask_frame(text: str, value: str) -> str:
    """The *frame* of a statement: the text with its value span, proper names, numbers and dates masked."""
    frame = text
    if value:
        frame = re.sub(re.escape(value), " X ", frame, flags=re.I)
    frame = RELATIVE_RE.sub(" ", frame)
    frame = re.sub(r"(?<![\w'-])[\w-]*\d[\w.,-]*\b", " N ", frame)
    frame = re.sub(r"(?<!^)(?<![.!?]\s)\b[A-Z][\w-]+(?:\s+[A-Z][\w-]+)*", " X ", frame)
    frame = re.sub(r"(?:\bX\b\s*)+", "X ", frame)
    return re.sub(r"\s+", " ", frame).strip(" .!?").lower()


ATTRIBUTE_ALIASES = {"address": "location", "home address": "location"}
FORGET_ALIASES = {"home": "location", "job": "employer", "workplace": "employer", "employer": "employer"}
"""What "forget my (old) home / job" names among the patterns' attributes."""
"""Possessive attribute names that mean a pattern's attribute ("my address is X" = where one lives; "my home
is in/at X" too, handled where the value is read, so "my home is a mess" stays about the home)."""


def _normalise_attribute(attr: str) -> str:
    attr = re.sub(r"^(?:new|current|old|former|previous|past|present)\s+", "", attr.strip().lower())
    attr = re.sub(r"\s+at\s+\w+$", "", attr)
    attr = attr.replace("favourite", "favorite")
    return ATTRIBUTE_ALIASES.get(attr, attr)


def withheld(text: str) -> bool:
    """Whether a message is an instruction or make-believe rather than content: some sentence of it is a
    hypothetical or role-play ("Pretend my name is Zoe") or a request to forget ("Please forget my locker code
    2264"). Such a message forms no memory from those sentences, and it is never recalled as a raw message
    either: shown raw, it would present the role-play or the forgotten value as something the user said is so."""
    return any(HYPOTHETICAL.search(s) or is_forget_request(s) for s in split_sentences(text))


REMINDER = re.compile(r"\b(?:don'?t|do not|never|remember not to) forget\b|\bremind me\b", re.IGNORECASE)
"""A reminder ("Don't forget my dentist appointment", "remind me about the rent"): it asks to keep, not to forget."""


def is_reminder(text: str) -> bool:
    """Whether ``text`` is a reminder (``REMINDER``): never a forget request, whatever else reads it as one."""
    return bool(REMINDER.search(text))


def is_forget_request(sentence: str) -> bool:
    """Whether ``sentence`` asks to forget something ("forget my X", "forget what I said about X")."""
    text = sentence.strip()
    return bool(FORGET_ABOUT.search(text) or FORGET.search(text))


def extract(observation: Observation) -> list[MemoryRecord]:
    """Memory records of one observation (empty for assistant/tool turns, questions and small talk)."""
    if is_assistant(observation.speaker):
        return []
    base_time = parse_time(observation.time)
    assert base_time is not None
    speaker_subj = speaker_subject(observation.speaker)
    records: list[MemoryRecord] = []
    third_parties: list[SubjectResolution] = []  # people named so far in this message, for "she"/"he"
    for sentence in split_sentences(observation.text):
        records.extend(_extract_sentence(sentence, speaker_subj, base_time, observation, third_parties))
    return merge_free_text(records)


def is_free_text(record: MemoryRecord) -> bool:
    """Whether ``record`` is an asserted free-text note or event (its attribute is its topic frame), not a slot
    fact ("I live in Porto") nor a retraction or forget request."""
    return record.attribute == record.frame and bool(record.frame) and record.polarity > 0 and not record.forget


def merge_free_text(records: list[MemoryRecord]) -> list[MemoryRecord]:
    """Join the free-text notes/events of one message (same subject, asserted) into one record, so a
    message costs one context line, keeps its sentences together, and structured facts stay separate."""
    free = [r for r in records if is_free_text(r)]
    if len(free) < 2:
        return records
    first = free[0]
    same = [r for r in free if r.subject == first.subject]
    text = " ".join(r.text.rstrip() if r.text.rstrip().endswith((".", "!", "?")) else r.text.rstrip() + "." for r in same)
    merged = first.model_copy(update={
        "text": text,
        "value": " ".join(r.value for r in same),
        "kind": "event" if any(r.kind == "event" for r in same) else "note",
        "valid_from": min(r.valid_from for r in same),
        "update_cue": any(r.update_cue for r in same),
        "scope": first.scope if all(r.scope == first.scope for r in same) else "",
        "frame": mask_frame(text, ""),
        "attribute": mask_frame(text, ""),
    })
    out: list[MemoryRecord] = []
    for r in records:
        if r is first:
            out.append(merged)
        elif not any(r is x for x in same):
            out.append(r)
    return out


def _record(sentence: str, observation: Observation, base: datetime, **fields: object) -> MemoryRecord:
    when, _ = resolve_relative(sentence, base)
    dated_past = when is not None and when <= base and bool(PAST_TENSE.search(sentence))
    valid_from = to_iso(when if dated_past else base)
    return MemoryRecord(
        source=observation.speaker,
        valid_from=valid_from or observation.time,
        observation_id=observation.id,
        ref=observation.ref,
        update_cue=bool(UPDATE_CUE.search(sentence)),
        **fields,  # type: ignore[arg-type]
    )


def _extract_sentence(
    sentence: str, speaker_subj: str, base: datetime, obs: Observation, third_parties: list[SubjectResolution] | None = None,
) -> list[MemoryRecord]:
    """The records of one sentence or clause. ``third_parties``: the people named so far in the message (the
    last one is what "she"/"he" refers to); a third party this sentence names is appended."""
    third_parties = [] if third_parties is None else third_parties
    text = sentence.strip()
    if len(text) < 3 or text.endswith("?") or SMALL_TALK.match(text) or phatic(text) or HYPOTHETICAL.search(text):
        return []
    about = FORGET_ABOUT.search(text)
    # "about my car" is "forget my car"; "about my sister's divorce" (someone else's matter) stays a topic
    own = re.fullmatch(r"(?:my|our)\s+(?P<what>[\w -]{1,40})", about.group("topic").strip(), re.I) if about else None
    if about and not own:  # "forget what I told you about Paddy's hip": the speaker's statements on the topic
        topic = about.group("topic").strip()
        return [_record(text, obs, base, text=text, kind="note", subject=speaker_subj, attribute=FORGET_TOPIC,
                        value=topic, forget=True, polarity=-1, confidence=0.9)]
    forget = own or FORGET.search(text)  # "forget what I said about my car" is "forget my car"
    if forget:
        what = clean_value(forget.group("what")) or forget.group("what").strip()
        attribute = _normalise_attribute(what)
        return [
            _record(text, obs, base, text=text, kind="note", subject=speaker_subj, attribute=FORGET_ALIASES.get(attribute, attribute),
                    value=what, forget=True, polarity=-1, confidence=0.9)
        ]
    body = strip_preamble(text)
    ended = ENDED.match(body)
    if ended:  # "I sold the Civic": a retraction of what it names
        thing = next(g for g in (ended.group("object"), ended.group("mine"), ended.group("name")) if g)
        thing = _THING_END.split(thing, maxsplit=1)[0]  # "my old bike to Sam": the bike, not Sam
        return [_record(text, obs, base, text=body, kind="note", subject=speaker_subj, attribute=mask_frame(body, ""),
                        value=thing.strip().rstrip(".!"), polarity=-1, frame=mask_frame(body, ""), confidence=0.7,
                        ends=True)]
    called = CALL_ME.match(body)
    if called:
        return [_record(text, obs, base, text=body, kind="state", subject=speaker_subj, attribute="name",
                        value=called.group("name"), frame=mask_frame(body, called.group("name")), confidence=0.8)]
    holder = ROLE_HOLDER.match(body)
    if holder and zipf_frequency(holder.group("name").split()[0].lower(), "en") < COMMON_WORD_ZIPF:  # a name, not "Today"
        role = holder.group("role").strip()
        return [_record(text, obs, base, text=body, kind="state", subject=WE, attribute=role,
                        value=holder.group("name"), frame=mask_frame(body, holder.group("name")), confidence=0.8)]
    scope, unscoped = _scope(body)
    lead_scope = re.match(rf"^(?P<scope>{SCOPE_WORDS})\s+(?:is|are|runs|run)\s+(?:still\s+|now\s+)?(?:on|running|using)\s+(?P<rest>.+)$", body, re.I)
    if lead_scope:
        scope, unscoped = _normalise_scope(lead_scope.group("scope")), "we run " + lead_scope.group("rest")
    lead_team = LEAD_TEAM.match(body)
    if lead_team and not scope:  # "The search team uses Rust for the backend": the team's own decision
        rest = re.sub(r"^(doesn't|does not|has|is)\b", lambda m: TEAM_VERBS[m.group(1).lower()], lead_team.group("rest"), flags=re.I)
        scope, unscoped = _normalise_scope(lead_team.group("scope")), "we " + rest
    resolved = _resolve_subject(unscoped, speaker_subj, third_parties[-1] if third_parties else None)
    if resolved is not None and resolved.subject not in (speaker_subj, WE) and not resolved.pronoun:
        third_parties.append(resolved)
    # the speaker's own words (issue 11: a regex rewrite to the third person garbled them, "The user give up on
    # low-carb"); every rendered line names its source, so "I" stays unambiguous
    statement = body
    if resolved is not None and resolved.pronoun and resolved.subject not in ("He", "She"):  # "she works ..." -> "Ana works ..."
        owner = resolved.subject + ("'s" if resolved.pronoun in ("his", "her") else "")
        statement = re.sub(r"^(?:he|she|his|her)\b", owner, statement, count=1, flags=re.I)
    if resolved is None:
        if len(text.split()) < 4:
            return []
        kind = "event" if RELATIVE_RE.search(text) or NARRATIVE.search(text) else "note"
        return [_record(text, obs, base, text=statement, kind=kind, subject=WE, attribute=mask_frame(body, ""),
                        value=body, scope=scope, frame=mask_frame(body, ""), confidence=0.5,
                        multi=bool(MULTI_CUE.search(text)))]  # "Billing also runs on Redis" adds, never replaces
    if not scope:
        scope, clause = _scope(resolved.clause)
    else:
        clause = resolved.clause
    clause = clause.strip().rstrip(".!")
    polarity = 1
    negated = NEGATION.match(clause)
    if negated:
        polarity = -1
        clause = clause[negated.end():].strip()
    multi_cue = bool(MULTI_CUE.search(text))
    out: list[MemoryRecord] = []

    def add(attribute: str, raw: str, kind: str, multi: bool, confidence: float = 0.8, said: str = "") -> None:
        """``said``: the attribute as written ("home address" before it became ``location``)."""
        address = ADDRESS.search(said or attribute) or attribute in ("location", "home") and STREET_START.match(raw)
        value = clean_value(raw, ADDRESS_VALUE_STOP if address else VALUE_STOP)
        if not value:
            return
        versioned = VERSIONED.match(value)
        if versioned and (attribute.startswith("tool for") or attribute == "tools"):
            attribute, multi = f"{versioned.group(1).lower()} version", False
        values = [value]
        if attribute in LIST_ATTRIBUTES and not INFINITIVE.match(raw):  # "Dutch, Swahili and Korean": split before a comma ends it
            members = re.split(r",\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", raw)
            members = list(takewhile(lambda p: not CLAUSE_WORD.match(p.strip()), members))[:MAX_LIST_MEMBERS]
            values = [v for v in (clean_value(p) for p in members) if v]
        for v in values:
            out.append(_record(text, obs, base, text=canonical_text(resolved.subject, attribute, v, scope, polarity, statement), kind=kind, subject=resolved.subject,
                               attribute=attribute, value=v, scope=scope, polarity=polarity,
                               multi=multi or (multi_cue and (attribute in LIST_ATTRIBUTES or attribute.startswith("tool for"))),
                               frame=mask_frame(statement, v), confidence=confidence))

    if resolved.possessive:
        m = POSSESSIVE.match(clause)
        if m:
            attr = _normalise_attribute(m.group("attr"))
            raw_value = m.group("v")
            placed = re.match(r"(?:in|at)\s+(?P<place>.+)$", raw_value, re.I)
            if attr in ("location", "home") and placed:  # "my home is in Turku" = where the user lives
                attr, raw_value = "location", placed.group("place")
            kind = "preference" if attr.startswith("favorite") else "state"
            add(attr, raw_value, kind, m.group("verb").lower() == "are", said=m.group("attr"))  # "my hobbies are ..." holds several
            return out
    for pattern, attribute, kind, multi in CLAUSE_PATTERNS:
        m = pattern.match(clause)
        if m:
            value = next((g for g in m.groups() if g), "")
            add(attribute, value, kind, multi)
            if out:
                return out
    for regex in (TOOL_USE, SWITCH):
        m = regex.match(clause)
        if m:
            topic = clean_value(m.group("topic"))
            if re.fullmatch(SCOPE_WORDS, topic, re.I):
                scope, attribute = scope or _normalise_scope(topic), "tools"
            else:
                topic_scope, topic = _scope(topic) if not scope else ("", topic)
                scope = scope or topic_scope
                attribute = f"tool for {_normalise_attribute(topic)}"
            add(attribute, m.group("v"), "state", attribute == "tools")
            if out:
                return out
    m = PLAIN_USE.match(clause)
    if m:
        add("tools", m.group("v"), "state", True)
        if out:
            return out
    if len(text.split()) < 4 and polarity > 0:  # a short retraction ("I quit smoking.") still counts
        return []
    kind = "event" if RELATIVE_RE.search(text) or NARRATIVE.search(clause) else "note"
    frame = mask_frame(statement, "")
    return [_record(text, obs, base, text=statement, kind=kind, subject=resolved.subject, attribute=frame,
                    value=clause, scope=scope, polarity=polarity, frame=frame, confidence=0.5, multi=multi_cue)]
