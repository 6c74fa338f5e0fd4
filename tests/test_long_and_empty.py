"""A long message is stored in chunks and read in full; an empty one is a documented no-op (issue 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_graph import Memory
from memory_graph.nodes import CHUNK_CHARS, split_long
from memory_graph.store.ledger import CHUNKS_FROM
from memory_graph.store.tx import legacy_chunks
from memory_graph.transfer import export_user, import_records


def test_split_long_cuts_at_sentence_ends_and_keeps_provenance() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(400))
    chunks = split_long({"text": text, "ref": "m1", "speaker": "user", "time": "2024-01-01T00:00:00Z"})
    assert len(chunks) > 1 and all(len(c["text"]) <= CHUNK_CHARS for c in chunks)
    assert all(c["text"].endswith(".") for c in chunks)
    assert [(c["ref"], c["chunk"]) for c in chunks][:3] == [("m1", 1), ("m1", 2), ("m1", 3)]
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
    assert refs and refs[0] == "long-1"
    assert "Porto" in mem.recall("Where does the user live?").items[0].text
    assert mem.observe(message, ref="long-1", time="2024-01-01T00:00:00") == []  # the same message again: no-op


def test_empty_and_whitespace_messages_are_a_no_op(mem: Memory) -> None:
    before = mem.inspect()
    assert mem.observe("") == []
    assert mem.observe("  \n\t ") == []
    assert mem.observe_many([{"text": " "}, {"text": ""}]) == []
    assert mem.inspect() == before


def test_a_callers_ref_with_a_hash_is_never_read_as_a_chunk(mem: Memory) -> None:
    """Issue 21: chunk ``k`` of message ``m`` was stored under ref ``m#k``, so another message whose own ref is
    ``m#2`` and whose text equals that chunk was taken for it and dropped; chunk identity is a column now."""
    text = " ".join(f"Sentence number {i} is here." for i in range(200))
    chunks = split_long({"text": text, "ref": "m", "speaker": "user", "time": "2024-01-01T00:00:00Z"})
    assert {c["ref"] for c in chunks} == {"m"} and [c["chunk"] for c in chunks] == list(range(1, len(chunks) + 1))
    mem.observe(text, ref="m", time="2024-01-01T00:00:00")
    before = mem.store.ledger.observation_count("alice")
    mem.observe(chunks[1]["text"], ref="m#2", time="2024-01-02T00:00:00")  # its own message, not chunk 2 of m
    assert mem.store.ledger.observation_count("alice") == before + 1
    rows = mem.store.ledger.observations_of_ref("alice", "m#2")
    assert len(rows) == 1 and rows[0]["chunk"] == 1 and rows[0]["time"].startswith("2024-01-02")
    assert [r["chunk"] for r in mem.store.ledger.observations_of_ref("alice", "m")] == list(range(1, len(chunks) + 1))


def test_chunk_refs_of_older_stores_and_exports_are_read_once(tmp_path: Path) -> None:
    """A store (schema < 9) or an export (format 1) wrote chunk N of message ``X`` as ref ``X#N``: the migration and
    the import read those as ``(X, N)`` where the rows show a chunk (same time, speaker, source, session, after chunk
    N-1); a caller's own ``#`` stays."""
    rows = [{"id": "a", "ref": "X", "time": "t", "speaker": "u", "source": "u", "session_id": None},
            {"id": "b", "ref": "X#2", "time": "t", "speaker": "u", "source": "u", "session_id": None},
            {"id": "c", "ref": "X#3", "time": "t", "speaker": "u", "source": "u", "session_id": None},
            {"id": "d", "ref": "k#2", "time": "t", "speaker": "u", "source": "u", "session_id": None},
            {"id": "e", "ref": "X#5", "time": "t", "speaker": "u", "source": "u", "session_id": None},
            {"id": "f", "ref": "Y", "time": "t", "speaker": "u", "source": "u", "session_id": None},
            {"id": "g", "ref": "Y#2", "time": "later", "speaker": "u", "source": "u", "session_id": None}]
    assert legacy_chunks(rows) == {"b": ("X", 2), "c": ("X", 3)}
    path = tmp_path / "old"
    text = " ".join(f"Sentence number {i} is here." for i in range(200))
    with Memory(path, user_id="alice") as mem:
        mem.observe(text, ref="m", time="2024-01-01T00:00:00")
        mem.observe("I like tea.", ref="k#2", time="2024-01-01T00:00:00")
        old_export = [r for r in export_user(mem.store, "alice")]
        with mem.store.write() as tx:  # as the older version wrote it
            for row in mem.store.ledger.observations_of_ref("alice", "m"):
                if row["chunk"] > 1:
                    tx.execute("UPDATE observations SET ref=? WHERE id=?", (f"m#{row['chunk']}", row["id"]))
            tx.execute("ALTER TABLE observations DROP COLUMN chunk")
            tx.execute(f"PRAGMA user_version={CHUNKS_FROM - 1}")
    with Memory(path, user_id="alice") as mem:
        assert [r["chunk"] for r in mem.store.ledger.observations_of_ref("alice", "m")] == [1, 2, 3]
        assert len(mem.store.ledger.observations_of_ref("alice", "k#2")) == 1
    old_export[0]["format_version"] = 1
    for r in old_export:
        if r["type"] == "observation":
            r["ref"] = r["ref"] if r["chunk"] == 1 else f"{r['ref']}#{r['chunk']}"
            del r["chunk"]
    with Memory(tmp_path / "target", user_id="alice") as target:
        import_records(target.store, old_export)
        assert [r["chunk"] for r in target.store.ledger.observations_of_ref("alice", "m")] == [1, 2, 3]


def test_a_pasted_log_is_kept_and_searchable_but_forms_no_memories_of_raw_chunks(tmp_path: Path) -> None:
    """Issue 21: a 200 KB pasted log formed 91 memories that were raw slabs of its chunks (and took 21-62 s, most
    of it embedding them). A paste is kept as its chunks (searchable, recalled raw) and forms only the slot facts
    said in it; the store's lock is held only for the writes."""
    from fakes import StemBagEmbedder

    lines = [f"2024-05-0{1 + i % 9} 12:{10 + i % 50}:{10 + i % 49} INFO worker-{i % 7} request id={1000 + i * 7} "
             f"path=/api/v1/items/list status={(200, 404, 500)[i % 3]} took {i % 900}ms" for i in range(2100)]
    lines[900] = "I live in Porto."
    log = "\n".join(lines)
    assert len(log) > 180_000

    with Memory(tmp_path / "s", user_id="alice") as mem:
        held_while_embedding: list[int] = []  # the store's session depth at each embedding call

        class Watched(StemBagEmbedder):
            def embed(self, texts: list[str]) -> Any:
                held_while_embedding.append(mem.store._depth)
                return super().embed(texts)

        mem.store._embedder = Watched()  # type: ignore[assignment]
        formed = mem.observe(log, ref="paste-1", time="2024-06-01T00:00:00")
        assert [(f["attribute"], f["value"]) for f in formed] == [("location", "Porto")]
        chunks = mem.store.ledger.observations_of_ref("alice", "paste-1")
        assert len(chunks) > 50 and " ".join(c["text"] for c in chunks).count("request id=") == 2099
        assert all(c["indexed"] == 1 for c in chunks)  # each chunk is in the vector index
        # the store's lock (its session) is held only for the writes: the embedding of the chunks, the costly
        # part (seconds), runs outside it, so other writers are not held up (they gave up after 120 s)
        assert held_while_embedding and set(held_while_embedding) == {0}


def test_no_other_process_reembeds_a_paste_being_observed(tmp_path: Path) -> None:
    """Breaker run (issue 21, high): a process opening the store during a paste found its chunks stored but not yet
    indexed and embedded them all itself while holding the store (an open took 34-44 s). An observation not yet
    linked is left to the link node that forms its memories (which indexes it in the turn's one write), so another
    process's reconcile embeds nothing of it; whenever a hold ends, every linked observation is indexed."""
    import contextlib

    from fakes import StemBagEmbedder

    from memory_graph.store import Store

    log = "\n".join(f"12:00:{i % 60:02d} INFO worker-{i % 7} request id={1000 + i} took {i % 900}ms" for i in range(900))
    linked_unindexed_at_release: list[int] = []
    session = Store.session

    @contextlib.contextmanager
    def watched(self: Store) -> Any:
        outer = self._depth == 0
        with session(self) as held:
            yield held
            if outer:
                linked_unindexed_at_release.append(self.ledger.query(
                    "SELECT COUNT(*) AS n FROM observations WHERE indexed=0 AND processed=1")[0]["n"])

    with Memory(tmp_path / "s", user_id="alice") as mem:
        mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        Store.session = watched  # type: ignore[method-assign]
        try:
            mem.observe(log, ref="paste-1", time="2024-06-01T00:00:00")
        finally:
            Store.session = session  # type: ignore[method-assign]
        chunks = mem.store.ledger.observations_of_ref("alice", "paste-1")
        assert len(chunks) > 10 and all(c["indexed"] == 1 for c in chunks)
        with mem.store.ledger.tx() as cur:  # as another process sees a paste stored, not yet linked
            cur.execute("UPDATE observations SET indexed=0, processed=0")
    assert linked_unindexed_at_release and set(linked_unindexed_at_release) == {0}
    embedded: list[str] = []

    class Watched(StemBagEmbedder):
        def embed(self, texts: list[str]) -> Any:
            embedded.extend(texts)
            return super().embed(texts)

    other = Store.open(tmp_path / "s")  # as another process opens it: its reconcile embeds nothing of the paste
    try:
        assert other.last_reconcile["indexed"] == 0
        other._embedder = Watched()  # type: ignore[assignment]
        assert other.reconcile()["indexed"] == 0 and embedded == []
    finally:
        other.release()
