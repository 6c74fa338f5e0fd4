"""The optional LLM linker and the learned single-valued schema, through the real ``ChatOpenAI`` client
against the local OpenAI-compatible stub (tests/openai_stub.py).

The stub's scripted model extracts the facts listed in ``FACTS`` (keyed by message) and answers link
requests with ``linker(new_text, candidates)``; each test sets the linker it needs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from openai_stub import StubOpenAI, last_content, text

from memory_graph import Memory
from memory_graph.extract.llm import Extraction
from memory_graph.llm_linker import LinkProposal


def fact(attribute: str, value: str, sentence: str, *, multi: bool = False, update: bool = False, scope: str = "") -> dict[str, Any]:
    return {"kind": "state", "subject": "self", "attribute": attribute, "value": value, "scope": scope, "negated": False,
            "multi_valued": multi, "update": update, "when": None, "text": sentence}


FACTS: dict[str, list[dict[str, Any]]] = {
    "Billing runs on Postgres.": [fact("billing database", "Postgres", "Billing runs on Postgres.")],
    "Invoice storage lives in CockroachDB.": [fact("invoice storage", "CockroachDB", "Invoice storage lives in CockroachDB.")],
    "Staging billing runs on MySQL.": [fact("billing database", "MySQL", "Billing runs on MySQL in staging.", scope="staging")],
    "I play chess.": [fact("games", "chess", "The user plays chess.", multi=True)],
    "I play go.": [fact("board game", "go", "The user plays go.")],
    "My editor is Vim.": [fact("editor", "Vim", "The user's editor is Vim.")],
    "My editor is Emacs.": [fact("editor", "Emacs", "The user's editor is Emacs.")],
    "I switched my editor to Helix.": [fact("editor", "Helix", "The user's editor is Helix.", update=True)],
    "I switched my editor to Zed.": [fact("editor", "Zed", "The user's editor is Zed.", update=True)],
    "My editor is Nano.": [fact("editor", "Nano", "The user's editor is Nano.")],
    "I switched my editor to Helix, then to Zed.": [fact("editor", "Helix", "The user's editor is Helix.", update=True),
                                                    fact("editor", "Zed", "The user's editor is Zed.", update=True)],
    "I know Rust.": [fact("skills", "Rust", "The user knows Rust.")],
    "I am an expert in Go.": [fact("expertise", "Go", "The user is an expert in Go.")],
    "I also use Kakoune as an editor.": [fact("editor", "Kakoune", "The user also uses Kakoune.", multi=True)],
}

Linker = Callable[[str, list[tuple[str, str]]], dict[str, Any]]


def abstain(new: str, candidates: list[tuple[str, str]]) -> dict[str, Any]:
    return {"supersedes": [], "reason": "", "abstain": True}


class Scripted:
    """The stub's responder: extraction from ``FACTS``, link proposals from ``self.linker``."""

    def __init__(self) -> None:
        self.linker: Linker = abstain
        self.link_requests: list[tuple[str, list[tuple[str, str]]]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        name = body["response_format"]["json_schema"]["name"]
        prompt = last_content(body)
        if name == "Extraction":
            message = prompt.split("Message: ", 1)[1]
            return text(json.dumps(Extraction.model_validate({"facts": FACTS.get(message, [])}).model_dump()))
        assert name == "LinkProposal", name
        new = re.search(r"^NEW \([^)]*\): (.*)$", prompt, re.M)
        assert new is not None
        candidates = re.findall(r"^\[(\w+)\] \([^)]*\) (.*)$", prompt, re.M)
        self.link_requests.append((new.group(1), candidates))
        return text(json.dumps(LinkProposal.model_validate(self.linker(new.group(1), candidates)).model_dump()))


@pytest.fixture
def scripted() -> Scripted:
    return Scripted()


@pytest.fixture
def mem(scripted: Scripted, tmp_path: Any) -> Iterator[Memory]:
    with StubOpenAI(scripted) as server, Memory(tmp_path, user_id="u", model="stub", base_url=server.base_url) as m:
        yield m


def proposing(word: str, reason: str = "same storage, new database") -> Linker:
    """A linker that proposes every candidate whose text contains ``word``."""
    return lambda new, cands: {"supersedes": [i for i, t in cands if word in t], "reason": reason, "abstain": False}


def status(mem: Memory, memory_id: str) -> str:
    return str(mem.inspect(memory_id)["status"])


def test_paraphrase_linked_on_the_models_proposal_with_its_reason(mem: Memory, scripted: Scripted) -> None:
    old = mem.observe("Billing runs on Postgres.", time="2024-01-01T00:00:00")[0]["id"]
    scripted.linker = proposing("Billing")
    new = mem.observe("Invoice storage lives in CockroachDB.", time="2024-02-01T00:00:00")[0]
    assert new["action"] == "supersede" and new["targets"] == [old]
    assert new["reason"] == "LLM linker: same storage, new database"
    assert status(mem, old) == "superseded" and mem.inspect(old)["valid_to"].startswith("2024-02-01")
    assert scripted.link_requests[-1][1] == [(old, "Billing runs on Postgres.")]


def test_abstention_and_model_failure_leave_the_rules_answer(mem: Memory, scripted: Scripted) -> None:
    old = mem.observe("Billing runs on Postgres.", time="2024-01-01T00:00:00")[0]["id"]
    new = mem.observe("Invoice storage lives in CockroachDB.", time="2024-02-01T00:00:00")[0]
    assert new["action"] == "new" and status(mem, old) == "current"

    def broken(new: str, cands: list[tuple[str, str]]) -> dict[str, Any]:
        raise RuntimeError("model down")

    scripted.linker = broken  # the stub answers HTTP 500: an abstention
    again = mem.observe("My editor is Vim.", time="2024-03-01T00:00:00")[0]
    assert again["action"] == "new" and status(mem, old) == "current"


def test_the_reason_is_cleaned_of_control_characters(mem: Memory, scripted: Scripted) -> None:
    mem.observe("Billing runs on Postgres.", time="2024-01-01T00:00:00")
    scripted.linker = proposing("Billing", reason="moved\x00 \u202eto cockroach" + "!" * 500)
    new = mem.observe("Invoice storage lives in CockroachDB.", time="2024-02-01T00:00:00")[0]
    assert new["reason"].startswith("LLM linker: moved   to cockroach!") and len(new["reason"]) <= len("LLM linker: ") + 200
    assert "\x00" not in new["reason"] and "\u202e" not in new["reason"]


def test_ids_that_were_not_offered_are_ignored(mem: Memory, scripted: Scripted) -> None:
    old = mem.observe("Billing runs on Postgres.", time="2024-01-01T00:00:00")[0]["id"]
    scripted.linker = lambda new, cands: {"supersedes": ["zzzz", "made-up"], "reason": "hallucinated", "abstain": False}
    new = mem.observe("Invoice storage lives in CockroachDB.", time="2024-02-01T00:00:00")[0]
    assert new["action"] == "new" and status(mem, old) == "current"


def test_other_scopes_and_multi_valued_facts_are_never_offered_or_replaced(mem: Memory, scripted: Scripted) -> None:
    staging = mem.observe("Staging billing runs on MySQL.", time="2024-01-01T00:00:00")[0]["id"]
    chess = mem.observe("I play chess.", time="2024-01-02T00:00:00")[0]["id"]
    mem.observe("My editor is Vim.", time="2024-01-03T00:00:00")  # an unscoped, single-valued candidate
    scripted.linker = lambda new, cands: {"supersedes": [staging, chess], "reason": "greedy", "abstain": False}
    mem.observe("Billing runs on Postgres.", time="2024-02-01T00:00:00")
    assert scripted.link_requests and all(staging not in [i for i, _ in c] and chess not in [i for i, _ in c] for _, c in scripted.link_requests)
    assert status(mem, staging) == "current"
    go = mem.observe("I play go.", time="2024-03-01T00:00:00")[0]
    assert go["action"] == "new" and status(mem, chess) == "current"


def test_abstaining_model_makes_one_request_per_record_with_candidates(mem: Memory, scripted: Scripted) -> None:
    mem.observe("Billing runs on Postgres.", time="2024-01-01T00:00:00")
    assert scripted.link_requests == []  # nothing to replace: no call
    mem.observe("Invoice storage lives in CockroachDB.", time="2024-02-01T00:00:00")
    assert len(scripted.link_requests) == 1


def test_an_attribute_becomes_single_valued_after_two_confirmed_replacements(mem: Memory) -> None:
    vim = mem.observe("My editor is Vim.", time="2024-01-01T00:00:00")[0]["id"]
    emacs = mem.observe("My editor is Emacs.", time="2024-02-01T00:00:00")[0]
    assert emacs["action"] == "new" and status(mem, vim) == "current"  # one observation proves nothing
    helix = mem.observe("I switched my editor to Helix.", time="2024-03-01T00:00:00")[0]
    assert helix["action"] == "supersede" and set(helix["targets"]) == {vim, emacs["id"]}
    zed = mem.observe("I switched my editor to Zed.", time="2024-04-01T00:00:00")[0]
    assert zed["action"] == "supersede"
    nano = mem.observe("My editor is Nano.", time="2024-05-01T00:00:00")[0]  # learned: no update wording needed
    assert nano["action"] == "supersede" and nano["targets"] == [zed["id"]]


def test_counter_evidence_blocks_a_learned_single_value(mem: Memory) -> None:
    mem.observe("My editor is Vim.", time="2024-01-01T00:00:00")
    mem.observe("I switched my editor to Helix.", time="2024-02-01T00:00:00")
    mem.observe("I switched my editor to Zed.", time="2024-02-02T00:00:00")  # two confirmed replacements
    kak = mem.observe("I also use Kakoune as an editor.", time="2024-03-01T00:00:00")[0]
    assert kak["action"] == "new"  # "also": added beside the live value, a vote against single-valued
    nano = mem.observe("My editor is Nano.", time="2024-04-01T00:00:00")[0]
    assert nano["action"] == "new" and status(mem, kak["id"]) == "current"


def test_a_proposed_multi_valued_candidate_is_never_superseded(mem: Memory, scripted: Scripted) -> None:
    rust = mem.observe("I know Rust.", time="2024-01-01T00:00:00")[0]["id"]  # skills: multi-valued by name
    scripted.linker = lambda new, cands: {"supersedes": [i for i, _ in cands], "reason": "greedy", "abstain": False}
    go = mem.observe("I am an expert in Go.", time="2024-02-01T00:00:00")[0]
    assert go["action"] == "new" and status(mem, rust) == "current"


def test_one_message_is_one_vote(mem: Memory) -> None:
    mem.observe("My editor is Vim.", time="2024-01-01T00:00:00")
    mem.observe("I switched my editor to Helix, then to Zed.", time="2024-02-01T00:00:00")  # two update facts
    nano = mem.observe("My editor is Nano.", time="2024-03-01T00:00:00")[0]
    assert nano["action"] == "new"  # one confirmed replacement so far: not yet single-valued
