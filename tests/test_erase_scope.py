"""What a hard delete takes with it (fourth breaker run of issue 21): by identity, the erased memory, its messages
and every record that carries them (recall records, chat turns, items); by quotation, the other texts that quote an
identifier of it (an e-mail address, a phone number, an IBAN, an SSN, a code with or without separators, in any
script), a long whole text of it or a name its slot holds; never a fact that merely shares a word, never through a
text that was erased because it quoted, never another user's thread."""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fakes import StemBagEmbedder
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_graph import Memory, MemoryStore
from memory_graph.config import Context
from memory_graph.store import erase, quoting
from memory_graph.store.ledger import Ledger
from memory_graph.threads import THREADS_FILE, thread_key
from memory_graph.transfer import export_lines, import_records


@pytest.fixture()
def mem(tmp_path: Path) -> Iterator[Memory]:
    with _memory(tmp_path / "s", "dana") as memory:
        yield memory


@contextmanager
def _memory(path: Path, user: str) -> Iterator[Memory]:
    """A ``Memory`` of ``user`` on the store at ``path``, with the fast test embedder."""
    with Memory(path, user_id=user) as memory:
        memory.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        yield memory


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    """The ``BaseStore`` of the store at ``tmp_path / "s"`` (the ``mem`` fixture's), with the fast test embedder."""
    items = MemoryStore(tmp_path / "s")
    try:
        items.memory_graph_store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        yield items
    finally:
        items.close()


def _observe(mem: Memory, turns: list[str]) -> dict[str, str]:
    """Observe ``turns`` (a day apart); ``{text: observation ref}``, the ref being the turn's index."""
    for i, text in enumerate(turns):
        mem.observe(text, speaker="user", time=f"2024-05-{i + 1:02d}T09:00:00", ref=f"t{i}")
    return {text: f"t{i}" for i, text in enumerate(turns)}


def _memory_of(mem: Memory, ref: str) -> str:
    rows = mem.store.ledger.query(
        "SELECT memory_id FROM provenance WHERE namespace=? AND ref=?", (mem.context.user_id, ref)
    )
    assert rows, f"no memory was formed from {ref}"
    return str(rows[0]["memory_id"])


def _texts(mem: Memory) -> set[str]:
    return {
        r["text"]
        for r in mem.store.ledger.query(
            "SELECT text FROM observations WHERE namespace=?", (mem.context.user_id,)
        )
    }


def _chat(mem: Memory, thread: str, lines: list[str]) -> None:
    from agent.graph import build_agent_graph

    conn = sqlite3.connect(str(mem.store.path / THREADS_FILE), check_same_thread=False)
    try:
        graph = build_agent_graph(checkpointer=SqliteSaver(conn))
        config = {"configurable": {"thread_id": thread_key(mem.context.user_id, thread)}}
        for line in lines:
            graph.invoke({"messages": [HumanMessage(line)]}, config=config, context=mem.context)
    finally:
        conn.close()


# ---- C1: records that carry an erased message go by identity --------------------------------------------------


def test_a_chat_turns_recall_record_goes_with_the_erased_message(tmp_path: Path) -> None:
    """C1: each chat turn stores a recall record whose query is the user's message; a short message without an
    identifier gave no needle, so after the hard delete ``export`` still held the message word for word."""
    store = tmp_path / "s"
    said = "My sister is called Ana."
    with Memory(store, user_id="dana") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        _chat(mem, "default", [said, "Who is my sister?"])
        queries = [
            r["query"] for r in mem.store.ledger.query("SELECT query FROM recalls WHERE namespace='dana'")
        ]
        assert said in queries  # the test can fail: the turn's recall record carries the message
        target = next(r["id"] for r in mem.inspect()["recent"] if "Ana" in r["text"])
        result = mem.forget(target, hard=True)
        assert result["recalls"] >= 1
        exported = "".join(export_lines(mem.store, "dana"))
    assert "sister is called" not in exported
    assert "Who is my sister?" in exported  # a turn that does not carry the erased message stays
    assert b"sister is called" not in (store / "ledger.sqlite3").read_bytes()


# ---- C2: identifiers are needles ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("erased", "quoting"),
    [
        ("My email is dana.k@example.com.", "Send the invoice to DANA.K@example.com tomorrow."),
        ("My phone number is +49 170 5550123.", "If the courier is late, ring +491705550123 please."),
        ("My IBAN is DE89 3704 0044 0532 0130 00.", "Refund goes to DE89370400440532013000 as usual."),
        ("My SSN is 078-05-1120.", "For the tax form use 078 05 1120 like before."),
        ("My garage code is 7734 QK.", "Reminder for the plumber: garage code 7734-QK."),
        ("My garage code is 7734QK.", "Reminder for the plumber: garage code 7734 QK."),
        ("My locker code is ŁĘK4471.", "Locker łęk-4471 is next to the sauna."),
    ],
)
def test_a_quote_of_an_identifier_is_erased_with_it(mem: Memory, erased: str, quoting: str) -> None:
    """C2: e-mail addresses, phone numbers, IBANs, SSNs, codes written in groups and codes with non-ASCII letters were
    never needles, so another message quoting them survived; separators are optional both ways."""
    refs = _observe(mem, ["I live in Porto.", erased, quoting])
    mem.forget(_memory_of(mem, refs[erased]), hard=True)
    assert _texts(mem) == {"I live in Porto."}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("write to dana.k@example.com.", ["dana.k@example.com"]),
        ("call +49 170 5550123 now", ["491705550123"]),
        ("IBAN DE89 3704 0044 0532 0130 00.", ["DE89370400440532013000", "370400440532013000"]),
        ("SSN 078-05-1120", ["078051120"]),
        ("the code is 7734 QK OK", ["7734QK"]),
        ("Kod: ŻÓŁW4471", ["ŻÓŁW4471"]),
        ("postcode SW1A 1AA", ["SW1A1AA"]),
        (
            "meet 10 AM or 11 AM, 2019 2020, on 2025-06-10 or 12.03.2024, pay 1,200,000 or 1.200.000 or 3.14159265",
            [],
        ),
        ("I had COVID 19 and bought an iPhone 15 PRO for 1200 EUR in FY2024", []),
    ],
)
def test_identifiers_are_found_and_amounts_dates_and_times_are_not(text: str, found: list[str]) -> None:
    assert sorted(quoting.identifiers(text)) == sorted(found)


# ---- C3: nothing the quote test finds is missed by a prefilter ----------------------------------------------------

_SEPARATORS = st.sampled_from(["", " ", "-", ".", "/", "_", " - "])


@st.composite
def _needle_and_quote(draw: st.DrawFn) -> tuple[str, str]:
    """A needle and a text that quotes it with other separators and case (what :func:`quoting.quotes` accepts)."""
    needle = draw(
        st.one_of(
            st.from_regex(r"[A-Za-zŁĘÓŻ]{1,3}[0-9]{2,5}[A-Z]{0,2}", fullmatch=True),
            st.from_regex(r"[0-9]{3}-[0-9]{2}-[0-9]{4}", fullmatch=True),
            st.text(min_size=1, max_size=12),
        )
    )
    folded = quoting.fold(needle)
    chars = re.findall(r"[^\W_]", folded)
    digits = sum(c.isdigit() for c in chars)
    if 0 < digits < len(chars) or digits >= quoting.DIGITS_MIN:  # a code, a long number: separators anywhere
        parts = chars or [needle]
    else:  # a word, a name, a short number: only where the needle has its own (sixth breaker run)
        parts = [part for part in re.split(r"[\W_]+", folded) if part] or [needle]
    quoted = "".join(c + draw(_SEPARATORS) for c in parts[:-1]) + parts[-1]
    if (
        draw(st.booleans()) and quoted.upper().casefold() == quoted.casefold()
    ):  # "ı".upper() is "I": another letter
        quoted = quoted.upper()
    return needle, draw(st.sampled_from(["", "see ", "x: "])) + quoted + draw(
        st.sampled_from(["", ".", " ok", "!"])
    )


_LEDGER: list[Ledger] = []


def _ledger() -> Ledger:
    if not _LEDGER:
        _LEDGER.append(Ledger(Path(tempfile.mkdtemp()) / "ledger.sqlite3"))
    return _LEDGER[0]


def _selects(needle: str, text: str) -> bool:
    """Whether the hard delete's row search (``erase._quoting``) selects a row holding ``text``."""
    led = _ledger()
    with led.tx() as cur:
        cur.execute("DELETE FROM observations")
        cur.execute(
            "INSERT INTO observations(id, namespace, text, speaker, source, time, created_at) VALUES "
            "('o1', 'u', ?, 'user', 'user', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')",
            (text,),
        )
    return erase._quoting(led, "u", "observations", "text", [needle]) == {"o1"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_needle_and_quote(), st.tuples(st.text(min_size=1, max_size=10), st.text(max_size=30))))
@example(("7734QK", "garage code 7734 QK"))
@example(("7734-QK", "garage 7734QK."))
@example(("dana.k@example.com", "mail DANA.K@EXAMPLE.COM"))
@example(("ŁĘK4471", "łęk4471"))
@example(("K4471", "\u212a4471"))  # the Kelvin sign lower-cases to "k" in Python, not in SQL
def test_the_row_search_selects_every_row_the_quote_test_accepts(pair: tuple[str, str]) -> None:
    """C3: the SQL prefilter looked for a part of the needle (``7734QK`` for ``7734 QK``, lower-cased by SQL for
    ASCII only), so rows the Python quote test accepts were never read. Whatever the needle and the text: if
    ``quotes(text, [needle])``, the row search selects the row."""
    needle, text = pair
    if quoting.quotes(text, [needle]):
        assert _selects(needle, text), (needle, text)


@given(_needle_and_quote())
@settings(max_examples=100, deadline=None)
def test_a_word_needle_is_found_whatever_its_separators_and_case(pair: tuple[str, str]) -> None:
    needle, text = pair
    if quoting.is_word_needle(needle) and any(c.isalnum() for c in needle):
        assert quoting.quotes(text, [needle]), (needle, text)


# ---- C4, C5: no rare word of a sentence, no cascade -------------------------------------------------------------


def test_erasing_a_note_keeps_the_facts_that_share_a_rare_word(mem: Memory) -> None:
    """C4: a note's value is its whole sentence and each of its rare words was a needle: erasing the rant about
    Northwind erased "I work at Northwind as a data engineer.", erasing the milk note erased the husband."""
    facts = [
        "I work at Northwind as a data engineer.",
        "My husband is Mateusz.",
        "Mateusz is allergic to peanuts.",
        "My surname is Kowalczyk.",
    ]
    notes = [
        "Ugh, the coffee machine at Northwind broke again.",
        "Mateusz forgot to buy milk today, classic.",
        "The plumber is called Jan Kowalczyk, no relation.",
    ]
    refs = _observe(mem, facts + notes)
    for note in notes:
        mem.forget(_memory_of(mem, refs[note]), hard=True)
    assert _texts(mem) == set(facts)


def test_forgetting_a_name_in_a_slot_erases_the_messages_that_name_it(mem: Memory) -> None:
    """What a forget still takes (the design): a short slot value's rare word, a name ("Zorblax"), marks a quote."""
    refs = _observe(
        mem, ["My cat is called Zorblax.", "Zorblax has a vet visit on Friday.", "I live in Porto."]
    )
    mem.forget(_memory_of(mem, refs["My cat is called Zorblax."]), hard=True)
    assert _texts(mem) == {"I live in Porto."}


def test_a_hard_delete_does_not_cascade_through_the_texts_it_erased_for_quoting(mem: Memory) -> None:
    """C5: round 2 took rare words from the message that quoted the code, round 3 from those: erasing the locker
    code erased a message about a trainer and another about Grafana, neither naming the code."""
    kept = [
        "Przemek is the best personal trainer; he also set up our Grafana dashboards at work.",
        "The Grafana alert for disk usage fires every night at 3am.",
        "I live in Porto.",
    ]
    refs = _observe(
        mem,
        [
            "My locker code is QX4471.",
            "Locker QX4471 is next to the sauna, my trainer Przemek put a towel there.",
            *kept,
        ],
    )
    mem.forget(_memory_of(mem, refs["My locker code is QX4471."]), hard=True)
    assert _texts(mem) == set(kept)


# ---- C6: MemoryStore.delete deletes that item ------------------------------------------------------------------


def test_deleting_an_item_deletes_that_item_only(tmp_path: Path) -> None:
    """C6: deleting "User works at Northwind." deleted the manager item and the profile card of the same user (a
    rare word of the value); LangGraph memory managers delete items routinely."""
    store = MemoryStore(tmp_path / "s")
    try:
        store.memory_graph_store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        ns = ("alice", "memories")
        store.put(ns, "employer", {"content": "User works at Northwind."})
        store.put(ns, "manager", {"content": "User's manager at Northwind is Ingeborg."})
        store.put(ns, "commute", {"content": "User cycles to the Northwind office."})
        store.put(("alice", "profile"), "card", {"name": "Alice", "company": "Northwind", "role": "analyst"})
        store.put(("bob", "memories"), "employer", {"content": "User works at Northwind."})
        store.delete(ns, "employer")
        assert store.get(ns, "employer") is None
        for namespace, key in [
            (ns, "manager"),
            (ns, "commute"),
            (("alice", "profile"), "card"),
            (("bob", "memories"), "employer"),
        ]:
            assert store.get(namespace, key) is not None, (namespace, key)
    finally:
        store.close()


def test_deleting_one_of_two_items_that_say_the_same_keeps_the_other_and_its_memory(tmp_path: Path) -> None:
    """C6: the erase closure went from the item's message to the memory it formed and on to every other message
    that memory was formed from, so deleting one copy of a fact deleted the other item too."""
    store = MemoryStore(tmp_path / "s")
    try:
        store.memory_graph_store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        ns = ("alice", "memories")
        store.put(ns, "a", {"content": "I live in Porto."})
        store.put(("alice", "backup"), "b", {"content": "I live in Porto."})
        store.delete(ns, "a")
        assert store.get(ns, "a") is None
        assert store.get(("alice", "backup"), "b") is not None
        hits = store.search(("alice",), query="Where do I live?")
        assert any("Porto" in h.value["content"] for h in hits)
    finally:
        store.close()


# ---- C7: another user's thread is never touched -------------------------------------------------------------------


def test_a_hard_delete_never_rewrites_another_users_thread(tmp_path: Path) -> None:
    """C7: a thread whose id was not made by ``thread_key`` (an app's own ``SqliteSaver`` on the store's threads
    file) counted as "no known owner" and was scrubbed by alice's hard delete, though the ledger's
    ``thread_owners`` recorded bob; a thread nobody claimed is left alone too, and counted."""
    from langgraph.graph import START, MessagesState, StateGraph

    from agent.graph import build_agent_graph

    store = tmp_path / "s"
    common = "Please call me back tomorrow morning before ten o'clock, thanks a lot."
    MemoryStore(store).close()
    conn = sqlite3.connect(str(store / THREADS_FILE), check_same_thread=False)
    try:
        graph = build_agent_graph(checkpointer=SqliteSaver(conn))
        bobs = {"configurable": {"thread_id": "support-42"}}
        graph.invoke(
            {"messages": [HumanMessage(common)]}, bobs, context=Context(user_id="bob", store_path=str(store))
        )
        plain = StateGraph(MessagesState)  # an app's own graph: no owner is recorded for its thread
        plain.add_node("echo", lambda state: {"messages": []})
        plain.add_edge(START, "echo")
        raw = {"configurable": {"thread_id": "app-7"}}
        plain.compile(checkpointer=SqliteSaver(conn)).invoke({"messages": [HumanMessage(common)]}, raw)
    finally:
        conn.close()
    with Memory(store, user_id="alice") as alice:
        alice.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        alice.observe(common, speaker="user", ref="a1")
        _chat(alice, "default", [common])
        result = alice.forget(_memory_of(alice, "a1"), hard=True)
    assert result["threads"] == 1 and result["threads_unknown_owner"] == 1
    conn = sqlite3.connect(str(store / THREADS_FILE), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        for config in (bobs, raw):
            latest = saver.get_tuple(config)
            assert latest is not None
            assert [m.content for m in latest.checkpoint["channel_values"]["messages"]][0] == common, config
        assert len(list(saver.list(bobs))) > 1  # its history too
        alices = saver.get_tuple({"configurable": {"thread_id": thread_key("alice", "default")}})
        assert alices is not None and all(
            m.content != common for m in alices.checkpoint["channel_values"]["messages"]
        )
    finally:
        conn.close()


# ---- L1, L2: import ---------------------------------------------------------------------------------------------------


def _export(tmp_path: Path) -> list[dict[str, object]]:
    with Memory(tmp_path / "src", user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        store = MemoryStore(mem.store)
        store.put(("alice", "notes"), "k", {"content": "I live in Porto."})
        return [json.loads(line) for line in export_lines(mem.store, "alice")]


def _import(tmp_path: Path, name: str, text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    from typer.testing import CliRunner

    from memory_graph.cli import app

    monkeypatch.setattr("memory_graph.store.get_embedder", lambda model="": StemBagEmbedder())
    file = tmp_path / f"{name}.jsonl"
    file.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["import", str(file), "--store", str(tmp_path / name)])
    return result.exit_code, result.stderr


def test_import_of_json_nested_too_deeply_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """L1: ``"detail": [[[...100000...]]]`` was a RecursionError message with exit 1."""
    from cli_checks import one_error_line

    records = _export(tmp_path)
    event = (
        '{"type":"event","memory_id":null,"event":"x","detail":'
        + "[" * 100000
        + "]" * 100000
        + ',"created_at":"2024-01-01T00:00:00Z"}'
    )
    code, stderr = _import(tmp_path, "deep", json.dumps(records[0]) + "\n" + event + "\n", monkeypatch)
    assert code == 2, stderr
    one_error_line(stderr, "deep.jsonl:2", "nested")


@pytest.mark.parametrize("label", ["a.b", "..", "a\x00b"])
def test_import_refuses_an_item_label_the_store_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, label: str
) -> None:
    """Fifteenth breaker run: an item under the label "a.b" was imported and listed, but ``get`` and ``delete``
    refuse such a label (LangGraph's rule), so it could never be read or deleted."""
    from cli_checks import one_error_line

    records = _export(tmp_path)
    lines = [r if r.get("type") != "item" else {**r, "namespace": [label]} for r in records]
    code, stderr = _import(tmp_path, "label", "".join(json.dumps(r) + "\n" for r in lines), monkeypatch)
    assert code == 2, stderr
    one_error_line(stderr, "item namespace")
    with Memory(tmp_path / "label", user_id="alice") as mem:
        assert mem.inspect()["observations"] == 0


def test_import_refuses_a_task_label_recall_would_refuse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seventeenth breaker run (low): an import took task labels of 5,000 characters, which ``recall`` refuses."""
    from cli_checks import one_error_line

    records = _export(tmp_path)
    memory = next(r for r in records if r.get("type") == "memory")
    stats = {"type": "stats", "memory_id": memory["id"], "task_class": "t" * 5000, "shown": 1}
    header = {**records[0], "counts": {**records[0]["counts"], "stats": records[0]["counts"]["stats"] + 1}}
    lines = [header, *records[1:], stats]
    code, stderr = _import(tmp_path, "task", "".join(json.dumps(r) + "\n" for r in lines), monkeypatch)
    assert code == 2, stderr
    one_error_line(stderr, "task is a short label")


def test_import_refuses_an_item_whose_message_is_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """L2: an item whose ``observation_id`` is in neither the file nor the store was imported."""
    from cli_checks import one_error_line

    records = _export(tmp_path)
    lines = [r if r.get("type") != "item" else {**r, "observation_id": "nosuchid"} for r in records]
    code, stderr = _import(tmp_path, "orphan", "".join(json.dumps(r) + "\n" for r in lines), monkeypatch)
    assert code == 2, stderr
    one_error_line(stderr, "nosuchid")
    with Memory(tmp_path / "orphan", user_id="alice") as mem:
        assert mem.store.ledger.query("SELECT COUNT(*) AS n FROM observations")[0]["n"] == 0


# ---- fifth breaker run, F1/F2: ordinary values are no identifiers ------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I worked at Acme Corp 2019-2024 as a tester.",
        "Results for Q3 2024, plans for H1 2025, the F1 2024 season",
        "The salary band is 60000-75000 or 10.000-15.000 or 1299.00 - 1499.00.",
        "The kids are 10 12 14 16, lotto 4 8 15 16 23 42, refs 2019/2020/2021",
        "The fee is CHF 200, rent EUR 1500, bonus USD 2500, flight on 24 DEC 2024",
        "The server is at 192.168.1.1 and runs Node v18.17.0 and Python 3.11.4",
        "I use GPT-4o, gpt-3.5 and llama3 on an RTX 4090",
        "My HbA1c is fine, I take vitamin-D3, had SARS-CoV-2 once",
        "The table is utf8mb4 on x86_64 with log4j on a t3.micro",
    ],
)
def test_periods_ranges_versions_amounts_and_product_terms_are_no_identifiers(text: str) -> None:
    """F1/F2 (fifth breaker run, critical): each of these counted as an identifier, so forgetting one fact erased
    every other message that mentioned the same year range, quarter, version or product."""
    assert quoting.identifiers(text) == []


def test_forgetting_a_fact_keeps_another_with_the_same_year_range(mem: Memory) -> None:
    """F1: "2019-2024" was a needle (8 digits in a group), so the Lisbon message went with the Acme one."""
    refs = _observe(
        mem, ["I worked at Acme Corp 2019-2024 as a tester.", "I lived in Lisbon 2019-2024 with my sister."]
    )
    mem.forget(_memory_of(mem, refs["I worked at Acme Corp 2019-2024 as a tester."]), hard=True)
    assert _texts(mem) == {"I lived in Lisbon 2019-2024 with my sister."}


def test_deleting_an_item_keeps_another_item_of_the_same_quarter(tmp_path: Path) -> None:
    """F2: "Q3 2024" was a code written in groups, so deleting one item deleted the review item of another path."""
    store = MemoryStore(tmp_path / "s")
    try:
        store.memory_graph_store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        store.put(("alice", "memories"), "trip", {"content": "Alice travels to Tokyo in Q3 2024."})
        store.put(("alice", "calendar"), "review", {"content": "Performance review for Q3 2024"})
        store.delete(("alice", "memories"), "trip")
        assert store.get(("alice", "memories"), "trip") is None
        assert store.get(("alice", "calendar"), "review") is not None
    finally:
        store.close()


# ---- fifth breaker run, F3: a short secret is a needle; F4: only identifying slots give rare words -------------


@pytest.mark.parametrize(
    ("erased", "quoting"),
    [
        ("My password is Tr0ub4dor&3.", "I wrote Tr0ub4dor&3 on a sticky note."),
        ("My password is hunter2.", "Typed hunter2 into the router page."),
        ("My licence plate is B-MW 1234.", "The car B-MW 1234 is parked outside."),
        ("I live at 12 Elm Street, Springfield.", "Send the parcel to 12 Elm Street please."),
    ],
)
def test_a_short_secret_is_erased_where_another_message_quotes_it(
    mem: Memory, erased: str, quoting: str
) -> None:
    """F3 (fifth breaker run, critical): a 4-digit PIN, a 6-digit code, a password and a plate are no identifier by
    shape, so the message that quoted them kept the secret. The value of a secret (an identifying slot's value, or
    what a text gives a code/PIN/password/plate) is a needle; a longer number holding it is not a quote."""
    unrelated = ["I live in Porto.", "Order 44710 shipped.", "Invoice 2024-4471-9 is paid."]
    refs = _observe(mem, [*unrelated, erased, quoting])
    mem.forget(_memory_of(mem, refs[erased]), hard=True)
    assert _texts(mem) == set(unrelated)


def test_forgetting_an_employer_keeps_other_facts_that_name_it(mem: Memory) -> None:
    """F4: the rare word of every forgotten slot value was a needle, so forgetting the employer erased the manager.
    Only a slot that identifies the user (name, surname, e-mail, phone, address, secrets) gives rare words."""
    refs = _observe(mem, ["I work at Northwind.", "My manager at Northwind is Ingeborg."])
    mem.forget(_memory_of(mem, refs["I work at Northwind."]), hard=True)
    assert _texts(mem) == {"My manager at Northwind is Ingeborg."}


def test_a_digit_needle_is_a_whole_number() -> None:
    """F7: a short digit needle matched part of a longer number written in groups."""
    assert not quoting.quotes("Tracking 1234 567 890 arrived.", ["1234567"])
    assert not quoting.quotes("Call +1 (212) 555-0123 tonight.", ["5550123"])
    assert quoting.quotes("Call 555-0123 tonight.", ["5550123"])
    assert quoting.quotes("PINs 4471, 5582.", ["4471"])
    assert not quoting.quotes("Invoice 2024-4471-9.", ["4471"])


def test_deleting_a_common_reply_keeps_the_users_identical_chat_turns(mem: Memory) -> None:
    """F8 (fifth breaker run): identity by text took every chat turn and recall record whose text was "Yes." when a
    message "yes" was erased; identity by text now needs a text that identifies (two words, one not common)."""
    _chat(mem, "default", ["Yes."])
    target = mem.observe("yes", speaker="user", time="2024-05-01T09:00:00", ref="item-yes")
    obs = mem.store.ledger.query("SELECT id FROM observations WHERE namespace='dana' AND ref='item-yes'")
    mem.store.erase("dana", observation_ids=[obs[0]["id"]])
    assert target is not None
    queries = [r["query"] for r in mem.store.ledger.query("SELECT query FROM recalls WHERE namespace='dana'")]
    assert "Yes." in queries
    conn = sqlite3.connect(str(mem.store.path / THREADS_FILE))
    try:
        saver = SqliteSaver(conn)
        state = saver.get_tuple({"configurable": {"thread_id": thread_key("dana", "default")}})
        assert state is not None
        contents = [m.content for m in state.checkpoint["channel_values"]["messages"]]
    finally:
        conn.close()
    assert "Yes." in contents


# ---- sixth breaker run -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "erased,kept",
    [
        ("My bank card PIN is 1430.", ["Dentist appointment on Tuesday at 14:30.", "The train leaves at 14.30 from platform 2."]),
        ("My order number is 2251.", ["Lunch cost me $22.51 today."]),
        ("My locker code is 0800.", ["Breakfast is at 08:00 sharp.", "I earn 1,200 a week."]),
        ("My username is jsmith.", ["I met J. Smith from accounting today."]),
    ],
)
def test_a_short_secret_is_not_found_in_times_prices_or_initials(mem: Memory, erased: str, kept: list[str]) -> None:
    """N1, N3 (sixth breaker run, critical): a short number or a word was found with separators between any two of
    its characters, so a PIN 1430 erased "14:30" and "$14.30", a username jsmith "J. Smith". Only a code mixing
    letters and digits, or a number of 7 digits or more, is found whatever its separators."""
    refs = _observe(mem, [erased, *kept])
    mem.forget(_memory_of(mem, refs[erased]), hard=True)
    assert _texts(mem) == set(kept)


def test_deleting_an_item_keeps_the_users_items_with_the_same_digits(tmp_path: Path) -> None:
    """N2 (sixth breaker run, critical): deleting a locker code 0930 deleted the calendar's "09:30" items."""
    store = MemoryStore(str(tmp_path / "s"))
    store.put(("alice", "memories"), "locker", {"content": "Alice's gym locker code is 0930."})
    store.put(("alice", "calendar"), "standup", {"content": "Team standup", "time": "09:30"})
    store.put(("alice", "calendar"), "train", {"content": "Train to Bern departs 09.30 on Friday"})
    store.delete(("alice", "memories"), "locker")
    assert store.get(("alice", "calendar"), "standup") is not None
    assert store.get(("alice", "calendar"), "train") is not None


def test_a_phone_slot_holding_a_device_is_no_identifier(mem: Memory) -> None:
    """N4 (sixth breaker run, critical): "My phone is a Pixel 8." filled the slot ``phone``, whose value counted as
    identifying, and forgetting it erased the sister's Pixel 8."""
    refs = _observe(mem, ["My phone is a Pixel 8.", "My sister got a Pixel 8 for Christmas."])
    mem.forget(_memory_of(mem, refs["My phone is a Pixel 8."]), hard=True)
    assert _texts(mem) == {"My sister got a Pixel 8 for Christmas."}


def test_a_name_of_common_words_is_erased_where_it_is_quoted(mem: Memory) -> None:
    """N5 (sixth breaker run, critical): a name whose words are all common ("Sarah Miller") gave no needle, so the
    messages that named the user stayed."""
    refs = _observe(mem, ["My name is Sarah Miller.", "Book the table under Sarah Miller for Friday.", "I like Miller beer."])
    mem.forget(_memory_of(mem, refs["My name is Sarah Miller."]), hard=True)
    assert _texts(mem) == {"I like Miller beer."}


@pytest.mark.parametrize(
    "erased,quoting",
    [
        ("The PIN of my card is 4471.", "Remember 4471 at the ATM."),  # N6 (sixth breaker run)
        ("Use 7781 as the garage code.", "The garage opens with 7781."),  # N6
        ("pin 4471 for the visa card", "Remember 4471 at the ATM."),  # C1 (seventh breaker run)
        ("4471 is the PIN of my bank card.", "Remember 4471 at the ATM."),  # C1
        ("Code 4471 opens the gate.", "gate 4471 again"),  # C1
        ("My PIN is 4471.", "Tell the babysitter 4471 opens the front door."),
        ("The door code is 558213.", "Courier: ring and type 558213 at the gate."),
        ("My pincode is 4471.", "Typed 4471 at the ATM."),  # eighth run, F3
        ("I set the alarm code to 4471.", "Alarm: 4471 then enter."),  # ninth run, F6
        ("The combination to the safe is 3391.", "Safe opened with 3391."),  # F6
        ("My PIN is 4471.", "Entering 4471 at ATMs."),  # tenth run, N5
        ("My card's CVV is 839.", "CVV 839"),  # eleventh run, R3
        ("My wifi password is pineapple.", "Typed pineapple into the wifi box."),  # R2
        ("The Netflix password is monkey.", "Netflix: monkey"),  # twelfth run, N1: a note
    ],
)
def test_a_plain_secret_value_quoted_elsewhere_is_listed_not_erased(mem: Memory, erased: str, quoting: str) -> None:
    """A plain secret value (a number under 7 digits, a known word) quoted in another message: that message is kept
    and listed (``possible_quotes``), for the user to erase by id. Runs six to ten erased such messages by reading
    the secret's phrasing and a secret word near the value; every run found both quotes the rules missed (kept
    silently) and mentions they took ("Withdrew 1500 cash" for a door code 1500, "I moved to Berlin in 2024" for a
    PIN 2024). Eleventh run: which message quotes a plain value is the user's call, made on the list."""
    refs = _observe(mem, ["I live in Porto.", erased, quoting])
    preview = mem.forget(_memory_of(mem, refs[erased]), hard=True, dry_run=True)
    result = mem.forget(_memory_of(mem, refs[erased]), hard=True)
    assert _texts(mem) == {"I live in Porto.", quoting}
    assert list(result["possible_quotes"].values()) == [quoting] == list(preview["possible_quotes"].values())


# ---- seventh breaker run -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "erased,kept",
    [
        ("My lucky number is 2024.", "I moved to Berlin in 2024."),
        ("The code to review is 1200 lines.", "I earn 1200 a week."),
        ("My last login was 2024-05-01.", "Dentist appointment on 2024-05-01 at noon."),
        ("My wifi password is summer2024.", "We went to Italy in summer 2024."),
        ("My username on the forum is anna.berg.", "I had lunch with Anna Berg, my cousin."),
    ],
)
def test_a_secret_or_number_slot_is_matched_as_written(mem: Memory, erased: str, kept: str) -> None:
    """C2-C4, M1 (seventh breaker run): any slot ending in "number" was a secret, "the code to review is 1200" gave a
    secret, a login date was matched in any written form, and a password "summer2024" or a username "anna.berg"
    was found as "summer 2024" and "Anna Berg": a secret's value is matched as written, a date is no secret."""
    refs = _observe(mem, [erased, kept])
    mem.forget(_memory_of(mem, refs[erased]), hard=True)
    assert _texts(mem) == {kept}


def test_a_pending_erase_job_keeps_a_names_needle_findable() -> None:
    """A slot's value of two words ("Sarah Miller") is a word needle, not a whole text: a pending job must keep it as
    it is (digested as a whole text it would never be found in a thread again)."""
    needle = quoting.value_needle("Sarah Miller", name=True)
    assert needle is not None
    payload = erase.job_payload([needle], [], "salt")
    assert quoting.quotes("Book the table under Sarah Miller.", payload["needles"])


def test_forgetting_an_address_erases_its_street_where_another_message_quotes_it(mem: Memory) -> None:
    """N7 (sixth breaker run, high): the address was cut to "Flat 4" at its first comma, so forgetting it left
    "Send the parcel to 221B Baker Street"; the city and a station named after the street are no part of it."""
    address = "My address is Flat 4, 221B Baker Street, London."
    refs = _observe(mem, [address, "Send the parcel to 221B Baker Street please.", "I love the Baker Street station.",
                          "London is rainy today."])
    mem.forget(_memory_of(mem, refs[address]), hard=True)
    assert _texts(mem) == {"I love the Baker Street station.", "London is rainy today."}


# ---- eighth breaker run --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "erased,kept",
    [
        ("The code is 1,200 lines.", "I earn 1,200 a week."),
        ("The code was 2000 lines long.", "I paid 2000 for the bike."),
        ("Code: 1500 lines of python, mostly tests.", "Salary 1500 a week."),
        ("The error code was 5003 again.", "Invoice 5003 is paid."),
        ("The login is 2FA-protected now.", "All 2FA-protected accounts are safer."),
        ("The plate is 30cm wide.", "The pizza is 30cm across."),
        ("My wifi password is on the router.", "The light on the router is blinking."),  # F1
        ("My password is in the drawer.", "The scissors are in the drawer."),  # F1
        ("My password is changed every month.", "The filter is changed every month."),  # F1
        ("My Netflix password is the usual one.", "Lunch at the usual one."),  # F1
        ("I'm revising the Highway Code 2024 edition for my driving test.", "I moved to Berlin in 2024."),  # F2
        ("Login 2024 went badly, the servers crashed.", "I moved to Berlin in 2024."),  # F2
        ("For the summariser, use 2500 as the token budget.", "I paid 2500 for the sofa."),  # F2
        ("I use VSCode as the code editor.", "VSCode crashed again yesterday."),  # F2
        ("8192 is the max token count for that model.", "My flat is number 8192 on the map."),  # F2
        ("The QR code 2000 scans milestone was hit.", "I ran 2000 metres."),  # F2
        ("My PIN is 1234.", "The 1234 bus was late."),  # a plain number is listed, never erased
        ("The garage code is 0930.", "Standup at 0930 every day."),
        ("I want to save 1000000 by 2030.", "The lottery jackpot was 1000000."),  # F7
        ("The backup from 20240501 failed.", "Release 20240501 shipped on time."),  # F7
        ("My favorite editor is Neovim.", "Neovim crashed today."),  # F9
        ("I live in District 9.", "We watched District 9 last night."),
        ("My PIN is 1987.", "I opened my first bank account in 1987."),  # tenth run, N1
        ("My PIN is 1450.", "Paid $1450 rent from my bank account."),  # N1
        ("My PIN is 1450.", "The rent is 1450, paid by card."),  # N1
        ("The garage code is 1200.", "The security deposit was 1200."),  # N1
        ("The alarm code is 0630.", "Set my alarm for 0630 tomorrow."),  # N1
        ("My password is Marmalade.", "I opened a jar of Marmalade."),  # N1
        ("My locker code is 4112.", "I typed 4112 words today."),  # N1
        ("I live in a 3 bedroom house.", "We viewed a 3 bedroom house for my parents."),  # N2
        ("My home is 20 minutes from work.", "The gym is 20 minutes from work."),  # N2
        ("I have an Intel Core i7-13700K.", "My i7-13700K runs hot when gaming."),  # N6: a model number
        ("I just bought Sony WH-1000XM4 headphones.", "The WH-1000XM4 battery lasts forever."),  # N6
        ("My door code is 1500.", "Withdrew 1500 cash at the airport."),  # eleventh run, R4
        ("My password is football.", "I collect football cards."),  # R4
        ("My PIN is 1930.", "Doors open at 1930 for the gig."),  # R4
        ("My TV is a Samsung QN 90B.", "The QN 90B was on sale today."),  # twelfth run, N4
        ("I got my CEFR B2 certificate.", "The job ad asks for CEFR B2."),  # N4
        ("I bought a MacBook Air M2 8GB today.", "Is the M2 8GB enough for Xcode?"),  # thirteenth run, M1
        ("We toured 10 Downing Street on the school trip.", "The news showed 10 Downing Street again."),  # M2
        ("My laptop has an i7 8th gen CPU.", "Is an i7 8th gen fast enough for Lightroom?"),  # fourteenth run, P1
        ("The rehearsal is in studio B2 6pm.", "Studio B2 6pm again next week."),  # P1
        ("My favourite pizza place is Joe's at 7 Carmine Street.", "Joe's at 7 Carmine Street is closed Mondays."),  # P2
        ("Our wifi is Hyperoptic 1Gb now.", "Hyperoptic 1Gb price goes up in May."),  # P3
    ],
)
def test_forgetting_keeps_a_message_that_only_shares_a_number_or_a_word(mem: Memory, erased: str, kept: str) -> None:
    """Eighth breaker run (F1, critical): "code/login/plate is X" made X a secret when X was an amount, a measure,
    an adjective or an error code. Ninth (critical): a password slot's description ("in the drawer") was a phrase
    needle (F1); secret words in other senses ("Highway Code 2024", "token budget", "code editor") gave secrets
    (F2); a round amount or a compact date was an account number (F7); a preference's value was chased as a name
    (F9). Tenth (N1, N2, critical): a secret word anywhere in the text made a plain value a quote, so amounts, years
    and counts beside "card", "account", "alarm" went; a place with a number ("a 3 bedroom house") was a street
    address. A plain secret value (a short number, a known word) is now no needle at all (eleventh run).
    A short code a sentence merely holds is no needle (N6: model numbers have a personal code's shape)."""
    refs = _observe(mem, [erased, kept])
    mem.forget(_memory_of(mem, refs[erased]), hard=True)
    assert _texts(mem) == {kept}


@pytest.mark.parametrize(
    "erased,quoting",
    [
        ('My password is "correct horse battery staple".', "Log in with correct horse battery staple."),  # F2
        ("My passphrase is tiger lamp orbit.", "the phrase tiger lamp orbit unlocks it"),  # F2
        ("My wifi pw is Qz7mirror.", "Tell Tom the wifi is Qz7mirror."),  # F3
        ("My api key is sk-proj-abcdefgh12.", "export OPENAI_API_KEY=sk-proj-abcdefgh12"),  # F3
        ("My address is 221B Baker Street, London NW1 6XE.", "My postcode is NW1 6XE."),  # eleventh run, R1
        ("My zip code is 90210-1234.", "Ship to zip 90210-1234."),  # R1
        ("My address is 24 Sussex Drive, Ottawa K1A 0B1.", "Postal code K1A 0B1 for the tax form."),  # twelfth run
        ("Our house is 17 Mill Lane, Bath.", "Send the keys to 17 Mill Lane."),  # N2: a street in any slot
        ("I'm staying at 9 Rose Street this month.", "Taxi to 9 Rose Street please."),  # N2
        ("I live at Hauptstrasse 12, 10115 Berlin.", "Parcel to Hauptstrasse 12 please."),  # thirteenth run, M3
        ("Send post to nw1 6xe please.", "Parcel for NW1 6XE"),  # M4
        ("The wifi is Moonlight_77.", "wifi password Moonlight_77"),  # eleventh to thirteenth runs
        ("Wifi at the cabin: BlueOtterRiver", "cabin wifi BlueOtterRiver"),  # thirteenth run
        ("The wifi at home: CastleRock42", "CastleRock42 works on the TV now"),  # fourteenth run, P4
        ("My address is 12 Rue de la Paix, Paris.", "Ship it to 12 Rue de la Paix please."),  # F4
        ("My address is Flat 2, 17 Old Kent Road, London.", "The parcel went to 17 Old Kent Road."),  # F4
        ("My address is 42 Wallaby Way Sydney.", "Ship it to 42 Wallaby Way."),  # F4
        ("I live at Apt 3, 12 Elm Street, Springfield.", "Deliver to 12 Elm Street."),  # F4
        ("My login is dana.k and my password is Tr0ub4dor&3.", "used Tr0ub4dor&3 for the bank"),  # F5
        ("My PIN is 4471 and my password is Zq9trellis.", "Zq9trellis works on the laptop too"),  # F5
        ("Netflix password: Blue Fish Sunday", "the netflix pw is blue fish sunday"),  # F6
        ("My Stripe key is sk_test_4eC39HqLyjWDarjtT1zdp7dc.", "Put sk_test_4eC39HqLyjWDarjtT1zdp7dc in the .env file."),  # N4
        ("My password is Zorblax.", "I reuse Zorblax for all my accounts."),  # a made-up word is no plain value
    ],
)
def test_forgetting_erases_a_message_that_quotes_the_secret(mem: Memory, erased: str, quoting: str) -> None:
    """Eighth breaker run (F2, F3, critical): a passphrase of common words was no needle, and "wifi pw", "pincode",
    "api key" were not read as secrets. Ninth (critical, high): a street of more than three words or without a
    comma gave no needle, "I live at Apt 3, ..." stored "Apt 3" (F4); the second secret of a sentence was never
    read (F5); "password: Blue Fish Sunday", "set the alarm code to", "the combination to the safe is" were not
    read (F6). Tenth (N4, N5): a key under a service's name ("Stripe key") was no secret slot and a long key holding
    a word ("sk_test_...") no identifier."""
    refs = _observe(mem, ["I live in Porto.", erased, quoting])
    mem.forget(_memory_of(mem, refs[erased]), hard=True)
    assert _texts(mem) == {"I live in Porto."}


def test_invisible_characters_do_not_hide_a_quote() -> None:
    """F7 (eighth breaker run): a zero-width space or a soft hyphen inside a quoted secret hid it from the match."""
    needle = quoting.value_needle("Zq9trellis")
    assert needle is not None
    assert quoting.quotes("pw Zq9\u200btrellis", [needle]) and quoting.quotes("pw Zq9tre\u00adllis", [needle])


# ---- ninth breaker run ---------------------------------------------------------------------------------------------


def test_a_flat_number_alone_is_no_part_of_an_address_needle(mem: Memory) -> None:
    """F3 (ninth breaker run, critical): each comma part of an address holding a digit was a needle, so "Flat 4"
    took "My bike tyre went flat 4 times"; the street quoted alone still goes."""
    address = "My address is Flat 4, 221B Baker Street, London."
    refs = _observe(mem, [address, "My bike tyre went flat 4 times this month.", "Send it to 221B Baker Street."])
    mem.forget(_memory_of(mem, refs[address]), hard=True)
    assert _texts(mem) == {"My bike tyre went flat 4 times this month."}


def test_a_dry_run_lists_the_store_items_the_hard_delete_takes(tmp_path: Path) -> None:
    """F8 (ninth breaker run): the real hard delete took items quoting the erased e-mail (in a field, in a key)
    that the preview did not list."""
    store = MemoryStore(tmp_path / "s")
    try:
        store.memory_graph_store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        store.put(("dana", "contacts"), "landlord", {"content": "Landlord contact", "email": "landlord.x@example.org"})
        store.put(("dana", "contacts"), "landlord.x@example.org", {"content": "Prefers calls after six"})
        store.put(("dana", "contacts"), "plumber", {"content": "Plumber is Ray"})
        with _memory(tmp_path / "s", "dana") as mem:
            refs = _observe(mem, ["My landlord's email is landlord.x@example.org."])
            target = _memory_of(mem, refs["My landlord's email is landlord.x@example.org."])
            preview = mem.forget(target, hard=True, dry_run=True)
            assert sorted(i["key"] for i in preview["items"]) == ["landlord", "landlord.x@example.org"]
            assert mem.forget(target, hard=True)["items"] == 2
    finally:
        store.close()


@pytest.mark.parametrize(
    ("where", "put"),
    [
        ("item key", (("dana", "lockers"), "QX4471", {"content": "My gym locker is on the second floor."})),
        ("item field", (("dana", "notes"), "n1", {"content": "My gym locker is on the second floor.", "code": "QX4471"})),
        ("item label", (("dana", "QX4471"), "n3", {"content": "My gym locker is on the second floor."})),
        ("message ref", None),
    ],
)
def test_an_item_or_message_quoting_the_code_goes_with_what_it_became(
    store: MemoryStore, tmp_path: Path, where: str, put: tuple[tuple[str, ...], str, dict[str, str]] | None
) -> None:
    """Fifteenth breaker run (critical, high, medium): an item whose key, field or namespace label held the erased
    code was deleted, but the message it became (its ref spells the key: ``item:[...]:QX4471``) and that message's
    memory stayed, recallable, in the ledger and the export; a message whose ref held the code stayed too. Now
    such an item takes its message and memories; a message whose own ref quotes the code keeps its text and
    loses the ref (relabelled ``erased:...``: seventeenth breaker run, a ref is a label, not what was said)."""
    with _memory(tmp_path / "s", "dana") as mem:
        target = mem.observe("My locker code is QX4471.", time="2024-01-01")[0]["id"]
        if put is None:
            mem.observe("My gym locker is on the second floor.", time="2024-01-02", ref="ticket-QX4471")
        else:
            store.put(*put)
        mem.observe("I swim on Tuesdays.", time="2024-01-03")
        preview = mem.forget(target, hard=True, dry_run=True)
        taken = "My gym locker is on the second floor." in preview["observation_texts"].values()
        assert taken == (put is not None) and (preview["relabelled"] != []) == (put is None)
        mem.forget(target, hard=True)
        exported = "".join(export_lines(mem.store, "dana"))
        assert "QX4471" not in exported and ("gym locker" in exported) == (put is None) and "swim" in exported
        if put is not None:
            assert not [i.text for i in mem.recall("where is my gym locker?").items if "locker" in i.text]
    assert store.search(("dana",), limit=50) == []
    assert not [f for f in (tmp_path / "s").rglob("*") if f.is_file() and b"QX4471" in f.read_bytes()]


def test_a_recall_record_whose_query_holds_a_plain_secret_goes_with_it(mem: Memory) -> None:
    """Fifteenth breaker run (low): a recall record whose query quoted an erased plain value ("is my PIN 4471 or
    4417?", a phone number's last digits) stayed, and recall records are never listed among possible quotes. A
    recall record is the system's log: it goes when its query or task holds what a kept message is listed for."""
    refs = _observe(mem, ["My bank PIN is 4471.", "My phone number is +49 170 5550123.", "I swim on Tuesdays.",
                          "My locker code is QX4471."])
    asked = [mem.recall("is my PIN 4471 or 4417?"), mem.recall("whose number is 5550123?"),
             mem.recall("when do I swim?", task="pin 4471"), mem.recall("when do I swim?", task="locker QX4471")]
    kept = mem.recall("what do I do on Tuesdays?")
    for text in ["My bank PIN is 4471.", "My phone number is +49 170 5550123.", "My locker code is QX4471."]:
        mem.forget(_memory_of(mem, refs[text]), hard=True)
    exported = "".join(export_lines(mem.store, "dana"))
    assert "4471" not in exported and "5550123" not in exported  # a task label learned in stats went too
    recall_ids = {r["id"] for r in map(json.loads, exported.splitlines()) if r["type"] == "recall"}
    assert recall_ids == {kept.id} and not recall_ids & {r.id for r in asked}


def test_a_user_id_holding_the_erased_number_keeps_the_users_items(store: MemoryStore, tmp_path: Path) -> None:
    """Sixteenth breaker run (critical): user "cust-48213597" erasing "My customer number is 48213597." lost
    every item it had put: each item's path and ref begin with the user id, which was read as a quote."""
    user = "cust-48213597"
    store.put((user, "prefs"), "tea", {"content": "I like green tea in the morning."})
    store.put((user, "calendar"), "dentist", {"content": "Dentist appointment on Friday at 9."})
    with _memory(tmp_path / "s", user) as mem:
        target = mem.observe("My customer number is 48213597.", time="2024-01-01")[0]["id"]
        preview = mem.forget(target, hard=True, dry_run=True)
        assert preview["items"] == [] and list(preview["observation_texts"].values()) == ["My customer number is 48213597."]
        mem.forget(target, hard=True)
    assert {i.key for i in store.search((user,), limit=10)} == {"tea", "dentist"}


def test_an_item_whose_older_put_quoted_the_code_keeps_its_current_text(store: MemoryStore, tmp_path: Path) -> None:
    """Sixteenth breaker run (high): an item put twice, whose first version quoted the erased code, was deleted,
    and the message of its current version stayed without it, recallable. The old version's message goes (it
    quoted), the item and its current message stay."""
    store.put(("dana", "tickets"), "t1", {"content": "Ticket about locker QX4471 opened."})
    store.put(("dana", "tickets"), "t1", {"content": "Ticket closed: the gym replaced the broken bench."})
    with _memory(tmp_path / "s", "dana") as mem:
        target = mem.observe("My locker code is QX4471.", time="2030-01-01")[0]["id"]
        preview = mem.forget(target, hard=True, dry_run=True)
        assert preview["items"] == []
        assert set(preview["observation_texts"].values()) == {"My locker code is QX4471.",
                                                              "Ticket about locker QX4471 opened."}
        mem.forget(target, hard=True)
        exported = "".join(export_lines(mem.store, "dana"))
    item = store.get(("dana", "tickets"), "t1")
    assert item is not None and item.value == {"content": "Ticket closed: the gym replaced the broken bench."}
    assert "QX4471" not in exported and "broken bench" in exported


def test_a_label_holding_the_code_is_relabelled_and_the_speakers_name_is_no_quote(mem: Memory) -> None:
    """Sixteenth and seventeenth breaker runs: a message whose session id held the erased code stayed with it; then
    erasing it took every message sharing the label (a session, an ingested file named after the number). A label
    quoting erased content is replaced by ``erased:`` and a digest (distinct labels stay distinct), the messages
    kept. Who said a message is never judged: erasing a friend's name does not take every message she said."""
    mem.observe("We talked about the gym.", session_id="case-QX4471", time="2024-01-01")
    mem.observe("We booked the climbing wall.", session_id="case-QX4471", time="2024-01-01T01:00:00")
    mem.observe("The garden party is on Sunday.", speaker="Melanie", time="2024-01-02")
    target = mem.observe("My locker code is QX4471.", time="2024-01-03")[0]["id"]
    friend = mem.observe("My best friend is called Melanie.", time="2024-01-04")[0]["id"]
    assert len(mem.forget(target, hard=True)["relabelled"]) == 2
    mem.forget(friend, hard=True)
    records = [json.loads(line) for line in export_lines(mem.store, "dana")]
    exported = json.dumps(records)
    assert "QX4471" not in exported and "The garden party is on Sunday." in exported
    sessions = {r["session_id"] for r in records if r["type"] == "observation" and "gym" in r["text"] + "wall"}
    kept = [r for r in records if r["type"] == "observation" and r["text"] in
            ("We talked about the gym.", "We booked the climbing wall.")]
    assert len(kept) == 2 and len({r["session_id"] for r in kept}) == 1 and kept[0]["session_id"].startswith("erased:")
    assert sessions


def test_a_ref_shaped_like_an_item_ref_naming_no_item_is_relabelled(mem: Memory) -> None:
    """Eighteenth breaker run (medium): a message whose ref only looked like an item's ("item:[...]:QX4471", no
    such item) was skipped as the item's business, and kept the code, neither relabelled nor listed."""
    mem.observe("I like green tea.", ref='item:["dana","tickets"]:QX4471', time="2024-01-01")
    target = mem.observe("My locker code is QX4471.", ref="r1", time="2024-01-02")[0]["id"]
    assert len(mem.forget(target, hard=True)["relabelled"]) == 1
    exported = "".join(export_lines(mem.store, "dana"))
    assert "QX4471" not in exported and "I like green tea." in exported


def test_a_relabelled_ref_said_again_or_imported_takes_its_label_again(mem: Memory, tmp_path: Path) -> None:
    """Eighteenth breaker run (high): after a hard delete relabelled the ref "QX4471-notes.jsonl:2" of a kept
    message, ingesting the file again stored that message a second time under its old ref (the re-ingest was
    idempotent before), and importing another store's export of the same file brought the ref back. A relabelled
    label is remembered (a salted digest): said again or imported, it takes its relabelled form."""
    turns = [{"text": "My locker code is QX4471.", "ref": "QX4471-notes.jsonl:1", "time": "2025-01-01T10:00:00"},
             {"text": "I like green tea.", "ref": "QX4471-notes.jsonl:2", "time": "2025-01-01T10:01:00",
              "session_id": "QX4471-notes"}]
    with _memory(tmp_path / "other", "dana") as other:
        other.observe_many(turns)
        exported = [json.loads(line) for line in export_lines(other.store, "dana")]
    mem.observe_many(turns)
    code = next(r["id"] for r in mem.inspect()["recent"] if "QX4471" in r["text"])
    assert mem.forget(code, hard=True)["relabelled"]
    mem.observe_many(turns[1:])
    import_records(mem.store, exported)
    rows = mem.store.ledger.query("SELECT text, ref, session_id FROM observations WHERE namespace='dana'")
    assert not any("QX4471" in str(r["ref"]) + str(r["session_id"]) for r in rows)
    assert "QX4471" not in "".join(export_lines(mem.store, "dana"))
    assert sum(r["text"] == "I like green tea." and r["ref"].startswith("erased:") for r in rows) >= 1


def test_the_users_own_id_is_never_a_quote(store: MemoryStore, tmp_path: Path) -> None:
    """Seventeenth breaker run (critical, high): user "cust-48213597" erasing the number 48213597 lost every item
    whose key, label or field named the user, every message whose ref or session named it, and the history of
    every item's memory; an ingested file named after the number lost its whole history. The user id is cut out of
    every text before needles are sought; a label is relabelled, never a reason to erase what was said."""
    user = "cust-48213597"
    store.put((user, "profile"), f"{user}-profile", {"content": "I like green tea in the morning."})
    store.put((user, f"tickets-{user}"), "t1", {"content": "Dentist appointment on Friday at 9."})
    store.put((user, "notes"), "n1", {"content": "My favourite band is Muse.", "owner": user})
    with _memory(tmp_path / "s", user) as mem:
        mem.observe("I play tennis on Sundays.", ref=f"{user}/msg-7", time="2024-01-01")
        mem.observe("I drive a blue Volvo.", session_id=f"sess-{user}", time="2024-01-02")
        mem.observe("I read before bed.", ref="acct-48213597.jsonl:3", time="2024-01-03")
        target = mem.observe("My customer number is 48213597.", time="2024-01-04")[0]["id"]
        preview = mem.forget(target, hard=True, dry_run=True)
        assert preview["items"] == [] and list(preview["observation_texts"].values()) == ["My customer number is 48213597."]
        mem.forget(target, hard=True)
        records = [json.loads(line) for line in export_lines(mem.store, user)]
    texts = {r["text"] for r in records if r["type"] == "observation"}
    assert {"I play tennis on Sundays.", "I drive a blue Volvo.", "I read before bed."} <= texts
    reading = {r["id"] for r in records if r["type"] == "observation" and r["text"] == "I read before bed."}
    from_file = {r["id"] for r in records if r["type"] == "memory"
                 and any(s["observation_id"] in reading for s in r["provenance"])}
    blanked = {r["memory_id"] for r in records if r["type"] == "event" and r["event"] == "formed" and r["detail"] == {}}
    assert blanked <= from_file  # only the history that named the file holding the number was scrubbed
    assert len(store.search((user,), limit=10)) == 3
    refs = {r["ref"] for r in records if r["type"] == "observation"}
    assert f"{user}/msg-7" in refs and "acct-48213597.jsonl:3" not in refs  # the file name quoted the number


def test_an_item_put_again_with_an_earlier_text_points_at_that_text(store: MemoryStore, tmp_path: Path) -> None:
    """Seventeenth breaker run (high): put A, B, A re-used A's stored message (the same ref and text) but the item
    pointed at B's, the newest of its ref; erasing what B quoted deleted the item and its current text."""
    for text in ["I like oolong tea.", "Locker QX4471 note.", "I like oolong tea."]:
        store.put(("dana", "notes"), "j", {"content": text})
    with _memory(tmp_path / "s", "dana") as mem:
        current = mem.store.ledger.item('["dana","notes"]', "j")
        assert mem.store.ledger.observations("dana", [current["observation_id"]])[current["observation_id"]]["text"] == "I like oolong tea."
        target = mem.observe("My locker code is QX4471.", time="2030-01-01")[0]["id"]
        mem.forget(target, hard=True)
        exported = "".join(export_lines(mem.store, "dana"))
    item = store.get(("dana", "notes"), "j")
    assert item is not None and item.value == {"content": "I like oolong tea."}
    assert "QX4471" not in exported and "oolong" in exported


def test_an_import_does_not_bring_back_a_task_label_that_quoted_erased_content(tmp_path: Path) -> None:
    """Sixteenth breaker run (critical by the contract): the statistics learned under the task "support ticket
    QX4471" kept the code after its recall record was erased, and an older export brought them back."""
    from memory_graph.transfer import import_records

    with _memory(tmp_path / "s", "dana") as mem:
        target = mem.observe("My locker code is QX4471.", time="2024-01-01")[0]["id"]
        mem.observe("I swim on Tuesdays.", time="2024-01-02")
        mem.recall("when do I swim?", task="support ticket QX4471")
        before = [json.loads(line) for line in export_lines(mem.store, "dana")]
        assert any(r["type"] == "stats" and "QX4471" in r["task_class"] for r in before)
        mem.forget(target, hard=True)
        result = import_records(mem.store, before)
        assert result["skipped"]["stats"] >= 1
        exported = "".join(export_lines(mem.store, "dana"))
    assert "QX4471" not in exported and "swim" in exported


def test_a_recall_naming_the_user_id_stays_when_the_id_holds_a_listed_number(tmp_path: Path) -> None:
    """Review of the seventeenth run's fix: the listed values (a PIN, a number of the erased message) were matched
    in recall queries and task labels without the user-id rule, so user "acct-4471" erasing a PIN 4471 would lose
    every recall and task statistic that named the user."""
    with _memory(tmp_path / "s", "acct-4471") as mem:
        target = mem.observe("My bank PIN is 4471.", time="2024-01-01")[0]["id"]
        mem.observe("I swim on Tuesdays.", time="2024-01-02")
        named = mem.recall("what does acct-4471 do on Tuesdays?", task="acct-4471 weekly")
        quoted = mem.recall("is my PIN 4471?")
        mem.forget(target, hard=True)
        records = [json.loads(line) for line in export_lines(mem.store, "acct-4471")]
    recalls = {r["id"] for r in records if r["type"] == "recall"}
    assert named.id in recalls and quoted.id not in recalls
    assert any(r["type"] == "stats" and r["task_class"] == "acct-4471 weekly" for r in records)


def test_the_list_of_kept_messages_puts_those_holding_the_secret_first(mem: Memory) -> None:
    """Twelfth breaker run (N3): ``possible_quotes`` was cut to 50 in id order, so among 300 messages naming the
    year the one quoting the PIN was left out, with no sign of the cut. Those holding a secret's value come first,
    and ``possible_total`` counts them all."""
    secret = "I changed my PIN to 4471 in March 2024."
    turns = [secret, *(f"Trip {i} was in 2024." for i in range(60)), "Typed 4471 at the ATM."]
    for i, text in enumerate(turns):
        mem.observe(text, speaker="user", time=f"2024-05-01T{i // 60:02d}:{i % 60:02d}:00", ref=f"t{i}")
    result = mem.forget(_memory_of(mem, "t0"), hard=True)
    assert result["possible_total"] == 61 and len(result["possible_quotes"]) == 50
    assert next(iter(result["possible_quotes"].values())) == "Typed 4471 at the ATM."
