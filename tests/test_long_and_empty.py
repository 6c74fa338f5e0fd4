"""A long message is stored in chunks and read in full; an empty one is a documented no-op (issue 11)."""

from __future__ import annotations

from memory_graph import Memory
from memory_graph.nodes import CHUNK_CHARS, split_long


def test_split_long_cuts_at_sentence_ends_and_keeps_provenance() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(400))
    chunks = split_long({"text": text, "ref": "m1", "speaker": "user", "time": "2024-01-01T00:00:00Z"})
    assert len(chunks) > 1 and all(len(c["text"]) <= CHUNK_CHARS for c in chunks)
    assert all(c["text"].endswith(".") for c in chunks)
    assert [c["ref"] for c in chunks][:3] == ["m1", "m1#2", "m1#3"]
    assert " ".join(c["text"] for c in chunks) == text
    assert split_long({"text": "short", "ref": None})[0]["ref"] is None


def test_a_60000_character_message_is_stored_and_its_facts_formed(mem: Memory) -> None:
    filler = " ".join(f"Paragraph {i} talks about the weather being mild today." for i in range(1100))
    message = filler + " I live in Porto. My dentist is Dr. Okonkwo."
    assert len(message) > 60_000
    formed = mem.observe(message, ref="long-1", time="2024-01-01T00:00:00")
    values = {f["value"] for f in formed}
    assert "Porto" in values
    porto = next(f for f in formed if f["value"] == "Porto")
    refs = [p["ref"] for p in mem.inspect(porto["id"])["provenance"]]
    assert refs and refs[0].startswith("long-1#")
    assert "Porto" in mem.recall("Where does the user live?").items[0].text
    assert mem.observe(message, ref="long-1", time="2024-01-01T00:00:00") == []  # the same message again: no-op


def test_empty_and_whitespace_messages_are_a_no_op(mem: Memory) -> None:
    before = mem.inspect()
    assert mem.observe("") == []
    assert mem.observe("  \n\t ") == []
    assert mem.observe_many([{"text": " "}, {"text": ""}]) == []
    assert mem.inspect() == before
