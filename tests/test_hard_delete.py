"""Hard delete leaves nothing: no byte of the text and no vector of an erased record in any file of the store
folder (ledger, Chroma's files and log, chat checkpoints), and nothing of another user or another fact is lost."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from fakes import StemBagEmbedder
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_graph import Memory, MemoryStore
from memory_graph.threads import THREADS_FILE, thread_key
from memory_graph.transfer import export_lines

PIN = "alpha247514q9"
LOCKER = "lockr5561zq"


def _files_containing(folder: Path, needle: bytes) -> list[str]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file() and needle.lower() in path.read_bytes().lower():
            hits.append(str(path.relative_to(folder)))
    return hits


def _chat(mem: Memory, thread: str, lines: list[str]) -> list[str]:
    from agent.graph import build_agent_graph

    conn = sqlite3.connect(str(mem.store.path / THREADS_FILE), check_same_thread=False)
    try:
        graph = build_agent_graph(checkpointer=SqliteSaver(conn))
        config = {"configurable": {"thread_id": thread_key(mem.context.user_id, thread)}}
        answers = []
        for line in lines:
            out = graph.invoke({"messages": [HumanMessage(line)]}, config=config, context=mem.context)
            answers.append(str(out["messages"][-1].content))
        return answers
    finally:
        conn.close()


def test_hard_delete_leaves_no_text_and_no_vector_in_any_file(tmp_path: Path) -> None:
    store = tmp_path / "s"
    with Memory(store, user_id="bob") as bob:
        bob.observe("I live in Oslo.", time="2024-01-01T00:00:00")
    with Memory(store, user_id="alice") as mem:
        mem.observe("I live in Berlin.", time="2024-01-01T00:00:00")
        answers = _chat(mem, "default", [f"My pin code is {PIN}.", "What is my pin code?", "Where do I live?"])
        assert PIN in answers[1]  # the offline answer quoted the memory: that assistant turn must go too
        mem.recall(f"is {PIN} still my pin?")  # a recall record whose query quotes it
        items = MemoryStore(mem.store)  # an item put through the LangGraph store keeps its value (issue 21)
        items.put(("alice", "gym"), "locker", {"content": f"My locker code is {LOCKER}.", "note": f"not {LOCKER}"})
        items.put(("alice", "gym"), "day", {"content": "My gym day is Monday."})
        locker_id = next(r["id"] for r in mem.inspect()["recent"] if LOCKER in r["text"])
        pin_id = next(r["id"] for r in mem.inspect()["recent"] if PIN in r["text"])
        texts = [mem.inspect(pin_id)["text"]] + [o["text"] for o in mem.search_observations(PIN, k=3) if PIN in o["text"]]
        vectors = mem.store.embed(texts)
        assert _files_containing(store, PIN.encode())  # the test can fail: the text is on disk before

        result = mem.forget(pin_id, hard=True)
        assert pin_id in result["forgotten"] and result["threads"] == 1
        assert locker_id in mem.forget(locker_id, hard=True)["forgotten"]
        assert items.get(("alice", "gym"), "locker") is None and items.get(("alice", "gym"), "day") is not None
        assert LOCKER not in "".join(export_lines(mem.store, "alice"))

        # nothing else was lost: alice's other fact, her thread's other turns, bob's memory
        assert "Berlin" in mem.recall("Where does the user live?").items[0].text
        with pytest.raises(KeyError):
            mem.inspect(pin_id)
        assert _chat(mem, "default", ["Where do I live?"])  # the rewritten thread resumes
    with Memory(store, user_id="bob") as bob:
        assert "Oslo" in bob.recall("Where does the user live?").items[0].text

    assert _files_containing(store, PIN.encode()) == []
    assert _files_containing(store, LOCKER.encode()) == []
    for vector in np.asarray(vectors, dtype=np.float32):
        assert _files_containing(store, vector.tobytes()[:64]) == []


def test_a_queued_index_delete_is_finished_by_the_next_open(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        formed = mem.observe("I live in Berlin.", time="2024-01-01T00:00:00")
        mid = formed[0]["id"]
        with mem.store.ledger.tx() as cur:  # as if the process died after the ledger transaction of a hard delete
            cur.execute("DELETE FROM memories WHERE id=?", (mid,))
            cur.execute("INSERT INTO index_deletes(collection, id) VALUES ('memories', ?)", (mid,))
    with Memory(tmp_path / "s", user_id="u") as mem:
        assert mem.store.last_reconcile["removed"] == 1
        assert mem.store.index_counts()["memories"] == 0
        assert mem.store.ledger.query("SELECT COUNT(*) AS n FROM index_deletes")[0]["n"] == 0


def test_scrub_zeroes_only_the_unused_capacity_of_an_hnsw_segment(tmp_path: Path) -> None:
    import struct

    from memory_graph.store.index import scrub_unused_capacity

    segment = tmp_path / "chroma" / "seg"
    segment.mkdir(parents=True)
    size, capacity, count = 16, 5, 2
    (segment / "header.bin").write_bytes(struct.pack("<iQQQQ", 1, 0, capacity, count, size) + b"rest")
    live, garbage = b"L" * (count * size), b"G" * ((capacity - count) * size)
    (segment / "data_level0.bin").write_bytes(live + garbage)
    (segment / "length.bin").write_bytes(b"l" * (count * 4) + b"pin1" * (capacity - count))  # one uint32 each
    assert scrub_unused_capacity(tmp_path / "chroma") == len(garbage) + 4 * (capacity - count)
    assert (segment / "data_level0.bin").read_bytes() == live + bytes(len(garbage))
    assert (segment / "length.bin").read_bytes() == b"l" * (count * 4) + bytes(4 * (capacity - count))
    (segment / "length.bin").unlink()
    # a header that does not describe the data file (more bytes than its capacity) is left alone
    (segment / "header.bin").write_bytes(struct.pack("<iQQQQ", 1, 0, capacity - 1, count, size))
    (segment / "data_level0.bin").write_bytes(live + garbage)
    assert scrub_unused_capacity(tmp_path / "chroma") == 0
    assert (segment / "data_level0.bin").read_bytes() == live + garbage


def test_a_segment_file_holding_only_its_live_slots_is_fine_and_judged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Fresh-install helper: past 1,000 vectors Chroma's header says capacity 1024 while data_level0.bin holds
    only the live slots; that is not an unknown layout (1,572 warnings in one quick eval before)."""
    import struct

    from memory_graph.store.index import scrub_unused_capacity

    segment = tmp_path / "chroma" / "seg"
    segment.mkdir(parents=True)
    (segment / "header.bin").write_bytes(struct.pack("<iQQQQ", 1, 0, 1024, 3, 16))
    (segment / "data_level0.bin").write_bytes(b"L" * 48)
    seen: dict[str, tuple[int, int]] = {}
    with caplog.at_level("WARNING"):
        assert scrub_unused_capacity(tmp_path / "chroma", seen) == 0
        (segment / "header.bin").write_bytes(struct.pack("<iQQQQ", 7, 0, 1024, 3, 16))  # unknown version
        (segment / "data_level0.bin").write_bytes(b"L" * 48 + b"x")
        scrub_unused_capacity(tmp_path / "chroma", seen)
        scrub_unused_capacity(tmp_path / "chroma", seen)  # unchanged since: not judged (nor warned) again
    assert (segment / "data_level0.bin").read_bytes() == b"L" * 48 + b"x"
    assert len([r for r in caplog.records if "unexpected size" in r.getMessage()]) == 1


def test_no_erased_vector_in_the_hnsw_capacity_after_repeated_hard_deletes(tmp_path: Path) -> None:
    """Breaker repro: hnswlib writes its malloc'ed capacity to data_level0.bin; after five hard deletes in a
    300-record store the erased vectors were found there in 2 of 8 runs before the capacity was zeroed."""
    store = tmp_path / "s"
    with Memory(store, user_id="alice") as mem:
        mem.observe_many(
            [{"text": f"My friend number {i} is called Person{i} and lives in town {i}.", "time": "2024-01-01"} for i in range(300)]
        )
        victims = [r["id"] for r in mem.inspect()["recent"]][::7][:5]
        vectors = mem.store.embed([mem.inspect(v)["text"] for v in victims])
        for victim in victims:
            mem.forget(victim, hard=True)
        assert "town 3" in " ".join(i.text for i in mem.recall("Who lives in town 3?").items)  # the index still works
    for vector in np.asarray(vectors, dtype=np.float32):
        assert _files_containing(store, vector.tobytes()[:64]) == []


def test_a_tool_call_that_quotes_erased_text_goes_with_its_result() -> None:
    """Third breaker run: the agent's AI message with ``tool_calls=[search_memory(query="pin code <secret>")]``
    survived the scrub (only message content was read), and dropping a quoting tool result left a dangling call."""
    from langchain_core.messages import AIMessage, ToolMessage

    from memory_graph.threads import kept_messages

    call = AIMessage("", id="2", tool_calls=[{"name": "search_memory", "args": {"query": f"pin {PIN}"}, "id": "c1"}])
    msgs = [HumanMessage("what is my pin?", id="1"), call, ToolMessage("found it", tool_call_id="c1", id="3"), AIMessage("ok", id="4")]
    assert [m.id for m in kept_messages(msgs, set(), [PIN])] == ["1", "4"]
    plain = AIMessage("", id="2", tool_calls=[{"name": "search_memory", "args": {"query": "pin"}, "id": "c1"}])
    quoting = [msgs[0], plain, ToolMessage(f"[m:x] {PIN}", tool_call_id="c1", id="3"), msgs[3]]
    assert [m.id for m in kept_messages(quoting, set(), [PIN])] == ["1", "4"]
    assert [m.id for m in kept_messages(msgs, set(), ["nothing"])] == ["1", "2", "3", "4"]


def test_a_hard_delete_killed_after_the_ledger_commit_is_finished_on_the_next_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Third breaker run: killed 0.2-0.6 s into ``forget(hard=True)``, the ledger part was committed, the chat
    threads kept 223 copies of the text, and a retry was NotFoundError. The remaining steps are a job in the
    ledger, finished on the next open."""
    import memory_graph.store.checkpoints as checkpoints

    store = tmp_path / "s"
    with Memory(store, user_id="alice") as mem:
        _chat(mem, "default", [f"My pin code is {PIN}.", "What is my pin code?"])
        pin_id = next(r["id"] for r in mem.inspect()["recent"] if PIN in r["text"])

        def killed(*args: object, **kwargs: object) -> int:
            raise KeyboardInterrupt  # the process dies here

        monkeypatch.setattr(checkpoints, "scrub_threads", killed)
        with pytest.raises(KeyboardInterrupt):
            mem.forget(pin_id, hard=True)
        monkeypatch.undo()
    assert PIN.encode() in (store / THREADS_FILE).read_bytes()  # the test can fail: the thread still quotes it
    with Memory(store, user_id="bob") as other:  # any user's open finishes it
        assert other.store.ledger.query("SELECT COUNT(*) AS n FROM erase_jobs")[0]["n"] == 0
    assert _files_containing(store, PIN.encode()) == []


def test_erasing_what_replaced_a_fact_makes_the_fact_current_again(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="u") as mem:
        mem.observe("I live in Lisbon.", time="2024-01-01T00:00:00Z")
        porto = mem.observe("I moved to Porto.", time="2024-06-01T00:00:00Z")[0]
        lisbon = porto["targets"][0]
        assert mem.inspect(lisbon)["status"] == "superseded"
        mem.forget(porto["id"], hard=True)
        restored = mem.inspect(lisbon)
        assert restored["status"] == "current" and restored["valid_to"] is None
        assert [e["type"] for e in restored["events"]][-1] == "status:current"
        assert any("Lisbon" in it.text and it.status == "current" for it in mem.recall("Where do I live?").items)


def test_distinctive_words_inside_a_longer_value_are_needles() -> None:
    """A value of several words ("my token is zqxv9981kk") still marks where it is quoted by its distinctive
    word (breaker run); common words ("Berlin", "token") never do."""
    from memory_graph.store.quoting import identifiers, rare_words

    values = ["my token is zqxv9981kk.", "Berlin", "alpha247514q9", "(Okonkwo)", "tea"]
    assert [n for v in values for n in identifiers(v)] == ["zqxv9981kk", "alpha247514q9"]
    assert [w for v in values for w in rare_words(v)] == ["Okonkwo"]


@pytest.mark.parametrize(("erased", "unrelated"), [
    ("My flight to Tokyo is LH714 on 3 June.", "Dad's flight home is LH7140 on 9 August."),
    ("The router firmware is v10.2.1 now.", "Work laptop runs Zoom v10.2.15 since Monday."),
    ("My physiotherapist is Ameli Brandt.", "Book a table at Amelie's bistro for Friday."),
    ("I run for 30mins every morning.", "Remind me to meditate 30mins before bed."),
    ("Gym membership costs 45GBP per month.", "Send Jana 45GBP for the concert ticket."),
    ("I had COVID-19 in March 2022.", "My mother got her COVID-19 booster on Tuesday."),
    ("Tax filing for FY2024 is due 31 January.", "Bonus for FY2024 paid into savings account."),
])
def test_a_hard_delete_keeps_messages_that_share_no_identifier(tmp_path: Path, erased: str, unrelated: str) -> None:
    """Third breaker run (issue 21, critical): a code was searched for as a substring (LH714 in LH7140, Ameli in
    Amelie) and an amount, a duration or an everyday term counted as a code: the unrelated message was erased."""
    with Memory(tmp_path / "s", user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe(unrelated, time="2024-01-01T00:00:00")
        target = mem.observe(erased, time="2024-01-02T00:00:00")
        mem.forget(target[0]["id"], hard=True)
        texts = [r["text"] for r in mem.store.ledger.query("SELECT text FROM observations WHERE namespace='alice'")]
        assert texts == [unrelated]


def test_a_hard_delete_finds_a_code_written_without_its_separator(tmp_path: Path) -> None:
    """Third breaker run (issue 21, critical): "7734-QK" was searched for with its hyphen, so a copy written
    "7734QK" kept the secret."""
    with Memory(tmp_path / "s", user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        target = mem.observe("My garage door code is 7734-QK, keep it secret.", time="2024-01-01T00:00:00")
        mem.observe("Reminder for the plumber: garage code 7734QK.", time="2024-01-02T00:00:00")
        mem.observe("I live in Porto.", time="2024-01-03T00:00:00")
        mem.forget(target[0]["id"], hard=True)
        texts = [r["text"] for r in mem.store.ledger.query("SELECT text FROM observations WHERE namespace='alice'")]
        assert texts == ["I live in Porto."]


def _thread_texts(store: Path, user_id: str, thread: str) -> list[tuple[str, str]]:
    """``(message type, content)`` of the latest checkpoint of a CLI chat thread."""
    conn = sqlite3.connect(str(store / THREADS_FILE), check_same_thread=False)
    try:
        latest = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": thread_key(user_id, thread)}})
        assert latest is not None
        return [(m.type, str(m.content)) for m in latest.checkpoint["channel_values"]["messages"]]
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("erased", "unrelated", "code"),
    [
        ("My flight to Tokyo is LH714 on 3 June.", "Dad's flight home is LH7140 on 9 August.", "LH714"),
        ("My physiotherapist is Ameli Brandt.", "Book a table at Amelie's bistro for Friday.", "Ameli"),
    ],
)
def test_a_hard_delete_keeps_chat_messages_that_share_no_identifier(
    tmp_path: Path, erased: str, unrelated: str, code: str
) -> None:
    """Issue 21: the chat threads were scrubbed by raw substring while the ledger matches codes and rare words as
    whole words (``quoting.quotes``): erasing "LH714" dropped the chat turns about "LH7140", which the ledger kept."""
    store = tmp_path / "s"
    with Memory(store, user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        answers = _chat(mem, "default", [unrelated, erased])
        target = next(r["id"] for r in mem.inspect()["recent"] if f"{code} " in r["text"])
        assert mem.forget(target, hard=True)["threads"] == 1
        kept = [
            r["text"] for r in mem.store.ledger.query("SELECT text FROM observations WHERE namespace='alice'")
        ]
    assert unrelated in kept  # the ledger kept it: the thread must too
    messages = _thread_texts(store, "alice", "default")
    assert ("human", unrelated) in messages and ("ai", answers[0]) in messages
    assert all(erased not in text for _, text in messages)


def test_a_hard_delete_scrubs_a_chat_copy_of_a_code_written_without_its_separator(tmp_path: Path) -> None:
    """Issue 21: the ledger finds "7734QK" as a quote of "7734-QK" (``quoting.quotes``), the chat scrub looked for
    the needle's bytes: a chat turn that is no observation of the store (an app's system note) kept the code."""
    from langchain_core.messages import AIMessage

    store = tmp_path / "s"
    with Memory(store, user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        _chat(mem, "default", ["My garage door code is 7734-QK, keep it secret.", "I live in Porto."])
        conn = sqlite3.connect(str(store / THREADS_FILE), check_same_thread=False)
        try:  # a message the app added to the thread itself (never observed by the store)
            from agent.graph import build_agent_graph

            graph = build_agent_graph(checkpointer=SqliteSaver(conn))
            config = {"configurable": {"thread_id": thread_key("alice", "default")}}
            graph.update_state(
                config, {"messages": [AIMessage("Note for the plumber: garage code 7734QK.", id="note")]}
            )
        finally:
            conn.close()
        target = next(r["id"] for r in mem.inspect()["recent"] if "7734-QK" in r["text"])
        assert mem.forget(target, hard=True)["threads"] == 1
    messages = _thread_texts(store, "alice", "default")
    assert ("human", "I live in Porto.") in messages
    assert not [text for _, text in messages if "7734" in text]
    assert _files_containing(store, b"7734QK") == [] and _files_containing(store, b"7734-QK") == []


def test_a_hard_delete_scrubs_an_event_detail_that_quotes_in_json_escapes(tmp_path: Path) -> None:
    """Issue 21: an event's detail is JSON (``\\u00eb`` for "ë", ``\\n`` for a line break) and was matched as its
    encoded text, so a detail quoting a non-ASCII erased text kept it. Details are matched on their decoded
    strings, as every other row."""
    with Memory(tmp_path / "s", user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        target = mem.observe(
            "My new neighbour Zoë Wrzesińska moved in next door on Monday.", time="2024-01-01T00:00:00"
        )
        other = mem.observe("I live in Porto.", time="2024-01-02T00:00:00")[0]["id"]
        with mem.store.write() as tx:  # e.g. an imported event whose reason quotes the text
            # the whole erased text, quoted (a rare word of a note's sentence is no needle: fourth breaker run)
            tx.add_event("alice", other, "note", reason="said after: My new neighbour Zoë Wrzesińska moved in next "
                                                         "door on Monday.")
        mem.forget(target[0]["id"], hard=True)
        details = [
            r["detail"] for r in mem.store.ledger.query("SELECT detail FROM events WHERE namespace='alice'")
        ]
    assert not [d for d in details if "Wrzesi" in d]


def test_an_unreadable_threads_file_fails_the_thread_step_only(tmp_path: Path) -> None:
    """F5 (fifth breaker run, critical): a threads.sqlite3 of random bytes made ``forget --hard`` fail with a raw
    ``DatabaseError``, then every open of the store (inspect, export, recall: any user) failed on the pending job,
    which kept the whole erased text in plain text. Now the thread step is a ``StoreError`` naming the file, the
    ledger part is done, the store opens and recalls, and the job keeps no whole erased text."""
    from memory_graph.errors import StoreError
    from memory_graph.transfer import export_lines

    store = tmp_path / "s"
    secret = "My locker at the Northwind gym is number QX4471 downstairs by the sauna."
    with Memory(store, user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        target = mem.observe(secret, time="2024-01-02T00:00:00")
        mem.observe("I live in Porto.", time="2024-01-03T00:00:00")
        (store / "threads.sqlite3").write_bytes(os.urandom(8192))
        with pytest.raises(StoreError, match="threads.sqlite3"):
            mem.forget(target[0]["id"], hard=True)
        texts = [r["text"] for r in mem.store.ledger.query("SELECT text FROM observations WHERE namespace='alice'")]
        assert texts == ["I live in Porto."]
        jobs = [r["needles"] for r in mem.store.ledger.erase_jobs()]
        assert len(jobs) == 1 and "sauna" not in jobs[0] and "Northwind gym" not in jobs[0]
    with Memory(store, user_id="alice") as mem:  # opens although the job cannot finish
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        assert any("Porto" in it.text for it in mem.recall("Where do I live?").items)
        assert mem.inspect()["recent"]
        exported = "".join(export_lines(mem.store, "alice"))
    assert "Porto" in exported and "QX4471" not in exported
    with Memory(store, user_id="bob") as other:
        assert other.inspect() is not None
    (store / "threads.sqlite3").unlink()
    with Memory(store, user_id="alice") as mem:  # the file gone: the pending job finishes
        assert mem.store.ledger.erase_jobs() == []


def test_a_pending_erase_job_still_finds_a_whole_text_it_keeps_as_a_digest() -> None:
    """F5: the job keeps a whole-text needle as a salted digest; the thread scrub still finds a message quoting it."""
    from memory_graph.store import erase, quoting

    text = "Please call me back tomorrow morning before ten o'clock, thanks a lot."
    payload = erase.job_payload([text, "QX4471"], [quoting.same_text(text)], "salt0")
    assert text not in json.dumps(payload) and "QX4471" in payload["needles"]
    needles, said = erase.erase_job_needles(json.dumps(payload))
    assert quoting.quotes(f"She wrote: {text.upper()} ok", needles)
    assert not quoting.quotes("Please call me back tomorrow.", needles)
    assert quoting.same_text(text + "!") in said and "something else" not in said


def test_a_dry_run_lists_what_a_hard_delete_would_erase_and_erases_nothing(tmp_path: Path) -> None:
    """``forget(id, hard=True, dry_run=True)`` (CLI ``forget ID --hard --dry-run``): the messages a hard delete would
    take as quoting the erased content, with their texts, before anything is erased; the store is unchanged."""
    from memory_graph.errors import InvalidInputError

    with Memory(tmp_path / "s", user_id="dana") as mem:
        mem.observe("My locker code is QX4471.", speaker="user", time="2024-05-01T09:00:00", ref="a")
        mem.observe("Open QX4471 for me tomorrow.", speaker="user", time="2024-05-02T09:00:00", ref="b")
        mem.observe("I live in Porto.", speaker="user", time="2024-05-03T09:00:00", ref="c")
        code = mem.store.ledger.query("SELECT memory_id FROM provenance WHERE ref='a'")[0]["memory_id"]
        before = list(export_lines(mem.store, "dana"))
        preview = mem.forget(code, hard=True, dry_run=True)
        assert preview["dry_run"] is True and code in preview["forgotten"]
        assert sorted(preview["observation_texts"].values()) == ["My locker code is QX4471.", "Open QX4471 for me tomorrow."]
        assert list(export_lines(mem.store, "dana")) == before
        with pytest.raises(InvalidInputError):
            mem.forget(code, dry_run=True)
        erased = mem.forget(code, hard=True)
        assert sorted(erased["observations"]) == sorted(preview["observations"])


def test_a_message_that_formed_no_memory_is_erased_by_its_id(tmp_path: Path) -> None:
    """Eighth and ninth breaker runs (medium): "My PIN? It's 4471." forms no memory, so no ``forget`` could reach
    it. ``forget`` takes a message's id too (``[o:ID]`` in ``ask``, ``search_observations``): erased with
    ``hard``, previewed with ``dry_run``, never retracted."""
    from memory_graph.errors import InvalidInputError, NotFoundError

    with Memory(tmp_path / "s", user_id="dana") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        mem.observe("My PIN? It's 4471.", speaker="user", time="2024-05-01T09:00:00", ref="a")
        mem.observe("I live in Porto.", speaker="user", time="2024-05-02T09:00:00", ref="b")
        (message,) = [o for o in mem.search_observations("PIN", k=5) if "4471" in o["text"]]
        with pytest.raises(InvalidInputError):
            mem.forget(message["id"])
        assert mem.forget(message["id"], hard=True, dry_run=True)["observations"] == [message["id"]]
        assert mem.forget(message["id"], hard=True)["observations"] == [message["id"]]
        texts = [r["text"] for r in mem.store.ledger.query("SELECT text FROM observations WHERE namespace='dana'")]
        assert texts == ["I live in Porto."]
        with pytest.raises(NotFoundError):
            mem.forget(message["id"], hard=True)


def test_a_hard_delete_lists_the_kept_messages_that_share_a_number_with_it(tmp_path: Path) -> None:
    """Tenth breaker run: a secret said in a phrasing no rule reads ("the code to get into the building is 4471")
    was kept silently where another message named it. The messages a hard delete keeps that share a number or a
    code with an erased message are listed (``possible_quotes``, in the preview too), not erased."""
    with Memory(tmp_path / "s", user_id="dana") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        for i, text in enumerate(["The code to get into the building is 4471.", "Building code 4471, don't forget.",
                                  "I live in Porto."]):
            mem.observe(text, speaker="user", time=f"2024-05-0{i + 1}T09:00:00", ref=f"t{i}")
        code = mem.store.ledger.query("SELECT memory_id FROM provenance WHERE ref='t0'")[0]["memory_id"]
        preview = mem.forget(code, hard=True, dry_run=True)
        assert list(preview["possible_quotes"].values()) == ["Building code 4471, don't forget."]
        erased = mem.forget(code, hard=True)
        assert list(erased["possible_quotes"].values()) == ["Building code 4471, don't forget."]
        texts = {r["text"] for r in mem.store.ledger.query("SELECT text FROM observations WHERE namespace='dana'")}
        assert texts == {"Building code 4471, don't forget.", "I live in Porto."}


def test_a_thread_named_after_the_erased_code_is_renamed_in_both_files(tmp_path: Path) -> None:
    """Eighteenth breaker run (critical): a chat thread "locker-<code>" kept the code in ``thread_owners`` and in
    ``threads.sqlite3`` after the hard delete. The thread moves to a relabelled name, with its owner and the rest of
    its messages."""
    store = tmp_path / "s"
    with Memory(store, user_id="alice") as mem:
        _chat(mem, f"locker-{LOCKER}", [f"My locker code is {LOCKER}.", "I like green tea."])
        locker_id = next(r["id"] for r in mem.inspect()["recent"] if LOCKER in r["text"])
        mem.forget(locker_id, hard=True)
        owners = mem.store.ledger.thread_owners()
    assert _files_containing(store, LOCKER.encode()) == []
    assert list(owners.values()) == ["alice"] and all(json.loads(t)[1].startswith("erased:") for t in owners)
    conn = sqlite3.connect(str(store / THREADS_FILE))
    (tid,) = {r[0] for r in conn.execute("SELECT thread_id FROM checkpoints")}
    texts = [m.content for m in SqliteSaver(conn).get_tuple({"configurable": {"thread_id": tid}}).checkpoint[
        "channel_values"]["messages"]]
    conn.close()
    assert tid in owners and "I like green tea." in texts and not any(LOCKER in str(t) for t in texts)


def test_a_kept_thread_message_whose_id_quotes_the_code_is_not_observed_again(tmp_path: Path) -> None:
    """Eighteenth breaker run (high): a kept message with the caller's id "note-<code>" was relabelled in the ledger
    only; the thread still held the old id, so the next turn observed it again under its old ref. The thread copy
    takes the ledger's label: the next turn finds it observed."""
    from memory_graph import build_memory_graph

    store = tmp_path / "s"
    with Memory(store, user_id="alice") as mem:
        conn = sqlite3.connect(str(store / THREADS_FILE), check_same_thread=False)
        graph = build_memory_graph(checkpointer=SqliteSaver(conn))
        config = {"configurable": {"thread_id": thread_key("alice", "t1")}}
        graph.invoke({"messages": [HumanMessage(f"My locker code is {LOCKER}.", id="m1")]}, config=config, context=mem.context)
        graph.invoke({"messages": [HumanMessage("I like green tea.", id=f"note-{LOCKER}")]}, config=config, context=mem.context)
        locker_id = next(r["id"] for r in mem.inspect()["recent"] if LOCKER in r["text"])
        assert mem.forget(locker_id, hard=True)["relabelled"]
        graph.invoke({"messages": [HumanMessage("What's the weather?", id="m3")]}, config=config, context=mem.context)
        conn.close()
        rows = mem.store.ledger.query("SELECT text, ref FROM observations WHERE namespace='alice'")
    assert [r["text"] for r in rows].count("I like green tea.") == 1
    assert _files_containing(store, LOCKER.encode()) == []
