"""The LangGraph-native boundary (issue 12): ``MemoryStore`` as a ``BaseStore``, injected into graphs and tools,
and storage injected into the memory subgraph (two stores in one process never mix)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from fakes import StemBagEmbedder
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode
from langgraph.store.base import InvalidNamespaceError

from memory_graph import Memory
from memory_graph.errors import InvalidInputError
from memory_graph.langgraph_store import MemoryStore, namespace_path


@pytest.fixture()
def mstore(store_location: tuple[str, dict[str, str]]) -> Any:
    """On both backends: a folder, and PostgreSQL + a Chroma server."""
    location, options = store_location
    store = MemoryStore(location, **options)
    yield store
    store.close()


def test_put_get_search_delete_through_the_memory(mstore: MemoryStore) -> None:
    mstore.put(("alice", "notes"), "k1", {"content": "I live in Lisbon.", "tag": "home"})
    item = mstore.get(("alice", "notes"), "k1")
    assert item is not None and item.value == {"content": "I live in Lisbon.", "tag": "home"}
    assert item.namespace == ("alice", "notes") and item.key == "k1"
    assert mstore.get(("alice",), "k1") is None and mstore.get(("bob", "notes"), "k1") is None
    mstore.put(("alice", "notes"), "k2", {"content": "I moved to Porto."})
    hits = mstore.search(("alice",), query="Where do I live?")
    assert hits and "Porto" in hits[0].value["content"]  # the memory resolved the chain: current value first
    lisbon = [h for h in hits if "Lisbon" in h.value["content"]]
    assert all(h.value["status"] == "superseded" for h in lisbon)
    assert hits[0].value["recall_id"] and hits[0].score is not None
    assert mstore.search(("bob",), query="Where do I live?") == []  # another user's namespace
    listed = mstore.search(("alice", "notes"))  # no query: the items as put, newest first
    assert [i.key for i in listed] == ["k2", "k1"]
    assert [i.key for i in mstore.search(("alice",), filter={"tag": "home"})] == ["k1"]
    assert ("alice", "notes") in mstore.list_namespaces() and ("alice",) in mstore.list_namespaces(max_depth=1)
    mstore.delete(("alice", "notes"), "k2")
    assert mstore.get(("alice", "notes"), "k2") is None
    assert not any("Porto" in h.value["content"] for h in mstore.search(("alice",), query="Where do I live?"))


def test_a_longer_prefix_keeps_the_memories_of_its_items(mstore: MemoryStore) -> None:
    mstore.put(("alice", "work"), "a", {"content": "Our deploy day is Thursday."})
    mstore.put(("alice", "home"), "b", {"content": "Our cleaning day is Monday."})
    work = mstore.search(("alice", "work"), query="which day")
    assert work and all("Thursday" in h.value["content"] for h in work)


def test_bad_namespaces_keys_and_values_are_refused(mstore: MemoryStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        mstore.put((), "k", {"content": "x"})
    with pytest.raises((InvalidInputError, InvalidNamespaceError, ValueError)):
        mstore.put(("alice",), "", {"content": "x"})
    with pytest.raises((InvalidInputError, ValueError)):
        mstore.put(("alice",), "k", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        mstore.put(("a" * 300,), "k", {"content": "x"})  # a user id the memory refuses
    assert mstore.get(("alice",), "k") is None  # nothing was written


def test_a_value_nested_deeper_than_the_export_can_read_is_refused(mstore: MemoryStore, tmp_path: Path) -> None:
    """Sixteenth breaker run (high): a value nested 490 deep was stored, and ``memory-graph export`` then failed
    with Python's RecursionError, so the user's store could not be moved. ``MAX_VALUE_DEPTH`` levels export and
    import back; one more is refused before anything is written."""
    from memory_graph.store.items import MAX_VALUE_DEPTH
    from memory_graph.transfer import export_lines, import_records

    def nested(depth: int) -> dict[str, Any]:
        value: dict[str, Any] = {"content": "the deepest note"}
        for _ in range(depth - 1):
            value = {"inner": value}
        return value

    with pytest.raises(InvalidInputError, match="nest"):
        mstore.put(("alice", "deep"), "too", nested(MAX_VALUE_DEPTH + 1))
    assert mstore.get(("alice", "deep"), "too") is None
    mstore.put(("alice", "deep"), "ok", nested(MAX_VALUE_DEPTH))
    lines = list(export_lines(mstore.memory_graph_store, "alice"))
    other = MemoryStore(tmp_path / "copy")
    try:
        import_records(other.memory_graph_store, [json.loads(line) for line in lines])
        got = other.get(("alice", "deep"), "ok")
        assert got is not None and got.value == nested(MAX_VALUE_DEPTH)
    finally:
        other.close()
    with pytest.raises(InvalidInputError, match="keys are not all strings"):
        mstore.search(("alice",), filter={1: 2})  # type: ignore[dict-item]


def test_async_forms_work(mstore: MemoryStore) -> None:
    async def run() -> Any:
        await mstore.aput(("carol",), "k", {"content": "My dog is called Rex."})
        got = await mstore.aget(("carol",), "k")
        hits = await mstore.asearch(("carol",), query="dog's name")
        return got, hits

    got, hits = asyncio.run(run())
    assert got.value["content"] == "My dog is called Rex." and any("Rex" in h.value["content"] for h in hits)


def test_the_subgraph_uses_the_injected_store_not_the_context_path(tmp_path: Path) -> None:
    """Two stores in one process never mix: a graph compiled with a MemoryStore writes there, whatever
    ``Context.store_path`` says."""
    from memory_graph import Context, build_memory_graph

    injected = MemoryStore(tmp_path / "injected")
    try:
        graph = build_memory_graph(store=injected)
        other = tmp_path / "named-by-context"
        graph.invoke({"observations": [{"text": "My favourite colour is teal.", "speaker": "user"}]},
                     context=Context(store_path=str(other), user_id="dana"))
        with Memory(tmp_path / "injected", user_id="dana") as mem:
            assert any("teal" in r["text"] for r in mem.inspect()["recent"])
        assert not (other / "ledger.sqlite3").exists()
    finally:
        injected.close()


def test_a_tool_reads_the_memory_through_injected_store(mstore: MemoryStore) -> None:
    @tool
    def lookup(query: str, store: Annotated[Any, InjectedStore()]) -> str:
        """Look up memories."""
        return " | ".join(h.value["content"] for h in store.search(("erin",), query=query))

    mstore.put(("erin",), "k", {"content": "My manager is Priya."})
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([lookup]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    graph = builder.compile(store=mstore)
    call = AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"query": "who is my manager"}, "id": "c1"}])
    out = graph.invoke({"messages": [call]})
    assert "Priya" in out["messages"][-1].content


def test_namespace_path_is_unambiguous() -> None:
    assert namespace_path(("a", "b")) != namespace_path(("a,b",))
    assert namespace_path(('a"]', "b")) != namespace_path(("a", "b"))


def test_breaker_findings_on_items(mstore: MemoryStore) -> None:
    """Breaker run (issue 12): get missed an item once a deeper namespace held the same key; a search without a
    query saw only a window of items; a delete left the later chunks of a long item; a bad value was half-written."""
    mstore.put(("ann", "a", "deeper"), "k", {"content": "deeper note"})
    mstore.put(("ann", "a"), "k", {"content": "the note"})
    mstore.put(("ann", "a", "deeper"), "k", {"content": "deeper note, again"})  # newest: listed first
    got = mstore.get(("ann", "a"), "k")
    assert got is not None and got.value["content"] == "the note"
    for i in range(130):
        mstore.put(("ann", "bulk"), f"b{i}", {"content": f"bulk note {i}", "tag": "old" if i else "wanted"})
    assert [i.key for i in mstore.search(("ann", "bulk"), filter={"tag": "wanted"})] == ["b0"]
    assert len(mstore.search(("ann", "bulk"), limit=10, offset=125)) == 5
    long_text = ("Filler sentence about the garden. " * 70) + "The vault combination is zq7749xk."
    mstore.put(("ann", "long"), "v", {"content": long_text})
    mstore.delete(("ann", "long"), "v")
    assert not any("zq7749xk" in h.value["content"] for h in mstore.search(("ann",), query="vault combination"))
    for bad in ({"content": "x", "note": "\ud800"}, {"content": "x", "raw": b"bytes"}, {"content": float("nan")}):
        with pytest.raises(InvalidInputError):
            mstore.put(("ann", "bad"), "k", bad)
    assert mstore.get(("ann", "bad"), "k") is None and mstore.search(("ann", "bad")) == []
    with pytest.raises(InvalidInputError):
        mstore.search(("ann",), limit=2**62)


def test_a_namespace_lists_only_its_own_items_whatever_the_case(mstore: MemoryStore) -> None:
    mstore.put(("GUS", "diary"), "p", {"content": "My PIN is 4417."})
    mstore.put(("gus", "diary"), "q", {"content": "I like tea."})
    assert [i.key for i in mstore.search(("gus",))] == ["q"]


def test_deleting_an_item_never_erases_another_whose_key_holds_a_hash(mstore: MemoryStore) -> None:
    """Issue 21: chunk ``N`` of an item's message was read out of the ref ``...:k#N``, so deleting item ``k`` erased
    item ``k#2``'s message and every memory formed from it (the item itself stayed, its memory gone)."""
    mstore.put(("alice", "notes"), "k#2", {"content": "My locker number is 4471."})
    mstore.put(("alice", "notes"), "k", {"content": "My bike is blue."})
    mstore.delete(("alice", "notes"), "k")
    kept = mstore.get(("alice", "notes"), "k#2")
    assert kept is not None and kept.value["content"] == "My locker number is 4471."
    hits = mstore.search(("alice",), query="What is my locker number?")
    assert any("4471" in h.value["content"] for h in hits)
    assert not any("blue" in h.value["content"] for h in hits)


@pytest.mark.parametrize("bad", [[1, 2], "tag", 3, ("tag", "x")])
def test_a_filter_that_is_not_a_dict_is_invalid_input(tmp_path: Path, bad: Any) -> None:
    """Issue 21: ``search(ns, filter=[1, 2])`` raised AttributeError from deep inside; it is the caller's mistake."""
    store = MemoryStore(tmp_path / "s")
    try:
        store.put(("alice", "notes"), "k", {"content": "I like tea.", "tag": "x"})
        for query in (None, "tea"):
            with pytest.raises(InvalidInputError, match="filter"):
                store.search(("alice",), query=query, filter=bad)
        with pytest.raises(InvalidInputError, match="limit"):  # the same mistake in list_namespaces' paging
            store.list_namespaces(limit=[1, 2])  # type: ignore[arg-type]
    finally:
        store.close()


def test_deleting_an_item_with_a_short_text_erases_only_that_item(tmp_path: Path) -> None:
    """Breaker run (issue 21, critical): the erased item's whole text was searched for as a substring, so deleting
    an item "no" erased "I work at Northwind as a nurse." (and "e" erased every message of the user)."""
    store = MemoryStore(tmp_path / "s")
    ns = ("alice", "notes")
    facts = ["I live in Porto.", "I work at Northwind as a nurse.", "I have a dog named Pixel."]
    for i, fact in enumerate(facts):
        store.put(ns, f"fact{i}", {"content": fact})
    for short in ("no", "e", "a nurse"):
        store.put(ns, "todo", {"content": short})
        store.delete(ns, "todo")
        assert store.get(ns, "todo") is None
        assert [store.get(ns, f"fact{i}") is not None for i in range(3)] == [True, True, True]
    texts = [r["text"] for r in store.memory_graph_store.ledger.query("SELECT text FROM observations WHERE namespace='alice'")]
    assert sorted(texts) == sorted(facts)
    store.put(ns, "pin", {"content": "pin 7734qk"})
    store.put(ns, "copy", {"content": "note to self: the pin is 7734qk"})
    store.delete(ns, "pin")  # one item, as a BaseStore deletes (eighth breaker run): the app's copy is its own record
    assert store.get(ns, "pin") is None and store.get(ns, "copy") is not None and store.get(ns, "fact1") is not None
    store.close()


def test_deleting_an_item_keeps_the_items_that_repeat_or_extend_it(tmp_path: Path) -> None:
    """Eighth breaker run (F4, critical): an item of 8+ words was searched for as a whole text in the other items, so
    deleting an outdated item took its refined successor, which extends its text, and an exact duplicate; and (F5)
    an e-mail held in a field other than ``content`` was not chased while one in ``content`` was. A ``BaseStore``
    delete now erases that item, its message and what it formed; quotation-chasing is ``forget``'s."""
    store = MemoryStore(tmp_path / "s")
    try:
        store.memory_graph_store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        ns = ("alice", "prefs")
        old = "User prefers dark mode in all editors and terminals"
        store.put(ns, "old", {"content": old})
        store.put(ns, "new", {"content": old + ", except light mode on weekends"})
        store.put(ns, "dup", {"content": old})
        store.put(ns, "mail", {"content": "Rent reminders go to landlord.x@example.org"})
        store.put(ns, "landlord", {"content": "Landlord contact landlord.x@example.org"})
        store.delete(ns, "old")
        store.delete(ns, "landlord")
        assert store.get(ns, "old") is None and store.get(ns, "landlord") is None
        assert [store.get(ns, k) is not None for k in ("new", "dup", "mail")] == [True, True, True]
        texts = store.memory_graph_store.ledger.query("SELECT text FROM observations WHERE namespace='alice'")
        assert sorted(r["text"] for r in texts) == sorted([old + ", except light mode on weekends", old,
                                                           "Rent reminders go to landlord.x@example.org"])
    finally:
        store.close()


def test_a_filter_takes_langgraphs_comparison_operators(tmp_path: Path) -> None:
    """Breaker run (issue 21): ``{"content": {"$eq": ...}}`` matched nothing where LangGraph's own stores match."""
    from langgraph.store.memory import InMemoryStore

    ours, theirs = MemoryStore(tmp_path / "s"), InMemoryStore()
    for store in (ours, theirs):
        store.put(("alice", "notes"), "a", {"content": "I live in Porto.", "n": 3, "meta": {"tag": "home"}})
        store.put(("alice", "notes"), "b", {"content": "My bike is blue.", "n": 7, "meta": {"tag": "gear"}})
    for flt in ({"content": {"$eq": "I live in Porto."}}, {"n": {"$gt": 2, "$lt": 5}}, {"n": {"$ne": 3}},
                {"n": {"$gte": 7}}, {"n": {"$lte": 3}}, {"meta": {"tag": "gear"}}):
        got = [i.key for i in ours.search(("alice", "notes"), filter=flt)]
        assert got == [i.key for i in theirs.search(("alice", "notes"), filter=flt)], flt
    assert [i.key for i in ours.search(("alice", "notes"), filter={"n": {"$gt": 2, "$lt": 5}})] == ["a"]
    assert ours.search(("alice", "notes"), filter={"content": {"$gt": 1}}) == []  # a string is not compared with 1
    with pytest.raises(InvalidInputError, match="unknown filter operator"):
        ours.search(("alice", "notes"), filter={"n": {"$in": [3]}})
    ours.close()


def test_filter_comparisons_coerce_numbers_as_langgraphs_in_memory_store(tmp_path: Path) -> None:
    """Issue 21: ``$gt``/``$gte``/``$lt``/``$lte`` compared values as they were, where LangGraph's ``InMemoryStore``
    compares them as numbers (``float``): a count stored as the string "10" passed ``{"$gt": 9}`` there, not here,
    and a boolean counts as 0 or 1. Values that are no numbers are compared as they are (dates as ISO strings), and
    values that do not compare do not match."""
    from langgraph.store.memory import InMemoryStore

    ours, theirs = MemoryStore(tmp_path / "s"), InMemoryStore()
    values = {
        "a": {"n": "10", "d": "2024-05-01"},
        "b": {"n": 9.5, "d": "2023-01-01"},
        "c": {"n": True},
        "e": {"n": "2"},
        "f": {"n": 3},
    }
    for store in (ours, theirs):
        for key, value in values.items():
            store.put(("alice", "nums"), key, {"content": f"Item {key} counts things.", **value})
    for flt in (
        {"n": {"$gt": 9}},
        {"n": {"$gte": "9.5"}},
        {"n": {"$lt": 2.5}},
        {"n": {"$lte": 1}},
        {"n": {"$gt": 1, "$lt": "5"}},
    ):
        got = sorted(i.key for i in ours.search(("alice", "nums"), filter=flt))
        assert got == sorted(i.key for i in theirs.search(("alice", "nums"), filter=flt)), flt
    assert sorted(i.key for i in ours.search(("alice", "nums"), filter={"n": {"$gt": 9}})) == ["a", "b"]
    assert [i.key for i in ours.search(("alice", "nums"), filter={"d": {"$gt": "2024-01-01"}})] == ["a"]
    assert (
        ours.search(("alice", "nums"), filter={"d": {"$gt": 5}}) == []
    )  # InMemoryStore raises ValueError here
    ours.close()


def test_deleting_an_item_with_a_time_an_amount_or_a_pleasantry_keeps_the_rest(tmp_path: Path) -> None:
    """Second breaker run (issue 21, critical): a time, an amount or a date counted as a distinctive code ("call mom
    10:30am" erased "My dentist appointment is at 10:30am on Friday."), and a 4-word pleasantry as a quote ("Thank
    you very much!" erased a message that began with it)."""
    store = MemoryStore(tmp_path / "s")
    ns = ("alice", "notes")
    facts = {"dentist": "My dentist appointment is at 10:30am on Friday.",
             "salary": "My salary went up by 1,200 euros this year, and I adopted a cat named Luna.",
             "trip": "The trip starts on 2025-06-10 in Oslo.",
             "tom": "Thank you very much! By the way, my brother Tom lives in Oslo.",
             "noon": "OK so the meeting is at noon tomorrow."}
    for key, fact in facts.items():
        store.put(ns, key, {"content": fact})
    for short in ("call mom 10:30am", "rent 1,200", "due 2025-06-10", "Thank you very much!", "the meeting is at noon"):
        store.put(ns, "todo", {"content": short})
        store.delete(ns, "todo")
        assert [k for k in facts if store.get(ns, k) is None] == [], short
    store.close()


def test_an_order_filter_beyond_floats_matches_nothing_without_an_error(mstore: MemoryStore) -> None:
    """F6 (eighth breaker run): ``{"$gt": 10**400}`` raised a raw ``OverflowError`` (no float holds it)."""
    mstore.put(("ann", "n"), "k", {"content": "a number", "n": 5})
    assert mstore.search(("ann", "n"), filter={"n": {"$gt": 10**400}}) == []
    assert [i.key for i in mstore.search(("ann", "n"), filter={"n": {"$lt": 10**400}})] == ["k"]
