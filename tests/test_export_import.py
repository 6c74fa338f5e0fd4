"""Export and import of one user's memory (issue 14): ``memory_graph.transfer`` and ``memory-graph export|import``.

Round trips embedded -> embedded and embedded -> server -> embedded (``store_location``) keep every record (ids
included), the current value recall gives and the chain history shows; an import is idempotent and all or nothing;
a newer schema or format is refused; a malformed line is named and nothing is written; another user's data and
what a hard delete erased are never exported. Every store uses the fake embedder (``tests/fakes.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_checks import one_error_line
from fakes import StemBagEmbedder

from memory_graph import Memory
from memory_graph.errors import InvalidInputError
from memory_graph.records import FORGET_REQUEST
from memory_graph.store.ledger import SCHEMA_VERSION
from memory_graph.store.tx import Tx
from memory_graph.transfer import (
    FORMAT_VERSION,
    KINDS,
    export_lines,
    export_user,
    import_file,
    import_records,
    parse_lines,
    validate_records,
)

PIN = "alpha247514q9"


def _open(location: str | Path, user: str = "alice", **options: Any) -> Memory:
    mem = Memory(location, user_id=user, **options)
    mem.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
    return mem


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """alice: Lisbon -> Porto -> Berlin, a note, a credited recall, a forgotten (hard) locker code; bob: his own."""
    path = tmp_path_factory.mktemp("export") / "source"
    with _open(path) as mem:
        mem.observe("I live in Lisbon.", time="2024-01-05T10:00:00", ref="msg-1")
        mem.observe("I moved to Porto.", time="2024-06-02T09:00:00", ref="msg-2")
        head = mem.observe("We moved to Berlin.", time="2025-02-01T09:00:00", ref="msg-3", session_id="s2")[0]["id"]
        mem.observe("My favourite colour is green.", time="2025-02-03T09:00:00", ref="msg-4")
        locker = mem.observe(f"My locker code is {PIN}.", time="2025-02-04T09:00:00", ref="msg-5")[0]["id"]
        mem.forget(locker, hard=True)
        recall = mem.recall("Where do I live?")
        assert _held_locations(recall) == [(head, "Berlin")]
        mem.feedback(recall.id, success=True, used_ids=[head])
        with Memory(store=mem.store, user_id="bob") as bob:
            bob.observe("My bank pin is bobsecret9931.", time="2024-02-01T10:00:00")
            bob_ids = [r["id"] for r in bob.inspect()["recent"]]
        chain = mem.history(head)
        assert [c["value"] for c in chain] == ["Lisbon", "Porto", "Berlin"]
        records = list(export_user(mem.store, "alice"))
    yield {"path": path, "records": records, "head": head, "chain": chain, "bob_ids": bob_ids, "erased": locker}


def _body(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An export without the header (whose ``exported_at`` differs between two exports)."""
    assert records[0]["type"] == "header"
    return records[1:]


def _held_locations(recall: Any) -> list[tuple[str, str]]:
    """``(id, value)`` of the recalled locations held now (a replaced one shown as current would be here too)."""
    return [(it.id, it.value) for it in recall.items if it.attribute == "location" and it.status == "current"]


def _check_target(mem: Memory, source: dict[str, Any]) -> None:
    assert _held_locations(mem.recall("Where do I live?")) == [(source["head"], "Berlin")]
    assert mem.history(source["chain"][0]["id"]) == source["chain"]
    assert mem.inspect(source["head"])["stats"]["overall"]["credited"] == 1


def test_the_export_holds_one_user_in_the_documented_order(source: dict[str, Any]) -> None:
    records = source["records"]
    header = records[0]
    assert header["format"] == "memory-graph-export" and header["format_version"] == FORMAT_VERSION
    assert header["schema_version"] == SCHEMA_VERSION and header["user"] == "alice"
    kinds = [r["type"] for r in records[1:]]
    assert kinds == sorted(kinds, key=KINDS.index)  # observations, memories, links, ..., in that order
    assert header["counts"] == {k: kinds.count(k) for k in KINDS}
    assert header["counts"]["memory"] >= 4 and header["counts"]["link"] >= 2 and header["counts"]["stats"] >= 1
    memories = {r["id"]: r for r in records if r["type"] == "memory"}
    assert memories[source["head"]]["provenance"][0]["ref"] == "msg-3"
    assert {r["relation"] for r in records if r["type"] == "link"} >= {"supersedes"}
    assert validate_records(enumerate(records, start=1))[0].user == "alice"  # an export always validates


def test_another_users_data_is_never_exported(source: dict[str, Any]) -> None:
    """Bob's content and ids are nowhere in alice's export. Checked as bob's words and as whole ids, never as a
    substring an id can form: ids are consonant-vowel syllables, so "bob" is inside ~3% of random ids (issue 21)."""
    text = "".join(json.dumps(r) for r in source["records"]).lower()
    assert "bobsecret9931" not in text and "bank pin" not in text
    assert source["records"][0]["user"] == "alice" and all(r.get("user", "alice") == "alice" for r in source["records"])
    ids = {str(r.get(field)) for r in source["records"]
           for field in ("id", "memory_id", "observation_id", "src_id", "dst_id", "recall_id")}
    ids |= {str(p["observation_id"]) for r in source["records"] for p in r.get("provenance", [])}
    ids |= {str(c.get("id")) for r in source["records"] for c in r.get("candidates", [])}
    assert source["bob_ids"] and not ids & set(source["bob_ids"])
    assert not any(re.search(rf"\b{i}\b", text) for i in source["bob_ids"])  # nor quoted in any text


def test_hard_forgotten_memories_are_never_exported(source: dict[str, Any]) -> None:
    text = "".join(json.dumps(r) for r in source["records"])
    assert PIN not in text and "locker" not in text and source["erased"] not in text


def test_round_trip_through_each_backend(source: dict[str, Any], store_location: tuple[str, dict[str, str]],
                                         tmp_path: Path) -> None:
    location, options = store_location
    with _open(location, **options) as middle:
        summary = import_records(middle.store, source["records"])
        assert summary["added"]["memory"] == source["records"][0]["counts"]["memory"]
        assert summary["indexed"] == summary["added"]["memory"] + summary["added"]["observation"]
        again = list(export_user(middle.store, "alice"))
        assert _body(again) == _body(source["records"])  # every record, ids and times as they were
        _check_target(middle, source)
    with _open(tmp_path / "back") as back:
        import_records(back.store, again)
        _check_target(back, source)


def test_importing_twice_changes_nothing(source: dict[str, Any], tmp_path: Path) -> None:
    file = tmp_path / "alice.jsonl"
    with _open(source["path"]) as mem:
        file.write_text("".join(export_lines(mem.store, "alice")), encoding="utf-8")
    with _open(tmp_path / "target") as target:
        first = import_file(target.store, file)
        before = list(export_user(target.store, "alice"))
        second = import_file(target.store, file)
        assert sum(second["added"].values()) == 0 and second["indexed"] == 0
        assert second["unchanged"] == {k: first["added"][k] + first["unchanged"][k] for k in KINDS}
        assert _body(list(export_user(target.store, "alice"))) == _body(before)
        assert target.store.index_counts()["memories"] == first["added"]["memory"]


def test_import_as_another_user(source: dict[str, Any], tmp_path: Path) -> None:
    with _open(tmp_path / "target", user="carol") as carol:
        import_records(carol.store, source["records"], user="carol")
        assert [v for _, v in _held_locations(carol.recall("Where do I live?"))] == ["Berlin"]
        assert not list(export_user(carol.store, "alice"))[1:]
        # ids are kept, so the same records cannot belong to a second user of one store
        with pytest.raises(InvalidInputError, match="another user"):
            import_records(carol.store, source["records"], user="dave")
        assert list(export_user(carol.store, "dave"))[1:] == []


def _header(**changes: Any) -> dict[str, Any]:
    return {"type": "header", "format": "memory-graph-export", "format_version": FORMAT_VERSION,
            "schema_version": SCHEMA_VERSION, "user": "alice", "exported_at": "2025-01-01T00:00:00Z", **changes}


def _nothing_written(location: Path) -> None:
    with _open(location) as mem:
        assert list(export_user(mem.store, "alice"))[1:] == []
        assert mem.store.index_counts() == {"memories": 0, "observations": 0}


def test_a_newer_schema_or_format_is_refused(source: dict[str, Any], tmp_path: Path) -> None:
    with _open(tmp_path / "target") as mem:
        for header, needle in ((_header(schema_version=SCHEMA_VERSION + 1), "newer memory-graph"),
                               (_header(format_version=FORMAT_VERSION + 1), "format version"),
                               (_header(format="something-else"), "not a memory-graph export")):
            with pytest.raises(InvalidInputError, match=needle) as info:
                import_records(mem.store, [header, *source["records"][1:]])
            assert str(info.value).startswith("line 1:")
        with pytest.raises(InvalidInputError, match="first line must be the export header"):
            import_records(mem.store, source["records"][1:])
    _nothing_written(tmp_path / "target")


def test_a_malformed_line_is_named_and_nothing_is_written(source: dict[str, Any], tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in source["records"]]
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines[:5] + ['{"type": "memory", "id": '] + lines[5:]) + "\n", encoding="utf-8")
    with _open(tmp_path / "target") as mem:
        with pytest.raises(InvalidInputError, match=r"broken\.jsonl:6: malformed JSON"):
            import_file(mem.store, broken)
        last_memory = max(i for i, r in enumerate(source["records"]) if r["type"] == "memory")
        for change, needle in (({"status": "held"}, "status"), ({"valid_from": "2025-02-30T00:00:00Z"}, "valid_from"),
                               ({"text": "a\x00b"}, "NUL"), ({"provenance": [{"observation_id": "nowhere"}]}, "'nowhere'"),
                               ({"surprise": 1}, "surprise")):
            records = [dict(r) for r in source["records"]]
            records[last_memory].update(change)
            with pytest.raises(InvalidInputError, match=needle) as info:
                import_records(mem.store, records)
            assert str(info.value).startswith(f"line {last_memory + 1}: memory")
        with pytest.raises(InvalidInputError, match="line 2: expected a JSON object"):
            validate_records(parse_lines([json.dumps(_header()), "[1, 2]"]))
    _nothing_written(tmp_path / "target")


def test_a_failure_midway_rolls_the_whole_import_back(source: dict[str, Any], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    real = Tx.import_rows

    def failing(self: Tx, kind: str, ns: str, rows: Any) -> Any:
        if kind == "recall":  # observations, memories, links, events and statistics are written by now
            raise InvalidInputError("disk full (simulated)")
        return real(self, kind, ns, rows)

    monkeypatch.setattr(Tx, "import_rows", failing)
    with _open(tmp_path / "target") as mem, pytest.raises(InvalidInputError, match="simulated"):
        import_records(mem.store, source["records"])
    monkeypatch.undo()
    _nothing_written(tmp_path / "target")


# ---- the CLI (in process, through typer's runner; the fake embedder stands in for MiniLM) -------------------


@pytest.fixture()
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memory_graph.store.get_embedder", lambda model="": StemBagEmbedder())


def test_cli_export_and_import(source: dict[str, Any], tmp_path: Path, fake_embedder: None) -> None:
    from typer.testing import CliRunner

    from memory_graph.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["export", "--store", str(source["path"]), "--user", "alice"])
    assert out.exit_code == 0, out.output
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert _body(records) == _body(source["records"])
    assert "exported user 'alice'" in out.stderr
    file = tmp_path / "alice.jsonl"
    written = runner.invoke(app, ["export", "--store", str(source["path"]), "--user", "alice", "--out", str(file)])
    assert written.exit_code == 0 and written.stdout == ""
    on_disk = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    assert _body(on_disk) == _body(records)  # the header's exported_at is the second it was written
    assert {**on_disk[0], "exported_at": ""} == {**records[0], "exported_at": ""}

    target = tmp_path / "target"
    first = runner.invoke(app, ["import", str(file), "--store", str(target)])
    assert first.exit_code == 0, first.output
    assert "imported into user 'alice'" in first.stdout and "0 records were already there" in first.stdout
    second = runner.invoke(app, ["import", str(file), "--store", str(target)])
    assert second.exit_code == 0 and "added 0 observations, 0 memories" in second.stdout
    with _open(target) as mem:
        _check_target(mem, source)

    def one_error(args: list[str], code: int, *needles: str) -> None:
        result = runner.invoke(app, args)
        assert result.exit_code == code, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        one_error_line(result.stderr, *needles)

    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps(_header(schema_version=SCHEMA_VERSION + 1)) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh"
    one_error(["import", str(newer), "--store", str(fresh)], 2, "newer.jsonl:1", "newer memory-graph")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(file.read_text(encoding="utf-8") + '{"type": "stats", "memory_id": "x", "shown": -1}\n', encoding="utf-8")
    one_error(["import", str(bad), "--store", str(fresh)], 2, f"bad.jsonl:{len(records) + 1}", "shown")
    one_error(["import", str(tmp_path / "none.jsonl"), "--store", str(fresh)], 2, "no such file")
    assert not fresh.exists()  # every file is checked before a store is opened
    one_error(["export", "--store", str(tmp_path / "nostore"), "--user", "alice"], 1, "does not exist")
    one_error(["export", "--store", str(source["path"]), "--out", str(tmp_path)], 2, "is a folder")


def test_cut_duplicated_or_foreign_records_are_refused(source: dict[str, Any], tmp_path: Path) -> None:
    """Breaker run: a file cut at a line end imported part of itself; a link could name another user's ids; an id
    twice, an end before the start and a count beyond what a ledger stores were let through."""
    records = source["records"]
    last_memory = max(i for i, r in enumerate(records) if r["type"] == "memory")
    link = next(i for i, r in enumerate(records) if r["type"] == "link")
    with _open(tmp_path / "target") as mem:
        with pytest.raises(InvalidInputError, match="header says"):
            import_records(mem.store, records[:last_memory])  # cut after some memories
        cases = [
            (lambda rs: rs.insert(last_memory + 1, dict(rs[last_memory])), "appears twice"),
            (lambda rs: rs[link].update(dst_id=source["bob_ids"][0]), "not in the export"),
            (lambda rs: rs[last_memory].update(valid_to="2000-01-01T00:00:00Z"), "before it begins"),
            (lambda rs: rs[last_memory].update(tokens=10**30), "tokens"),
            (lambda rs: rs[last_memory].update(text="x" * 1_000_001), "1,000,000 characters"),
        ]
        for change, needle in cases:
            changed = [dict(r) for r in records]
            change(changed)
            if needle == "appears twice":
                changed[0] = {**changed[0], "counts": {**changed[0]["counts"], "memory": changed[0]["counts"]["memory"] + 1}}
            with pytest.raises(InvalidInputError, match=needle):
                import_records(mem.store, changed)
    _nothing_written(tmp_path / "target")


def test_imported_store_items_are_the_same_items(tmp_path: Path) -> None:
    """Issue 21: import wrote an item's namespace path with JSON's default spacing while the store reads the compact
    form: after import ``get`` found nothing, a ``put`` of the same key made a second item and ``delete`` left the
    imported one behind."""
    from memory_graph import MemoryStore

    with _open(tmp_path / "a") as mem:
        MemoryStore(mem.store).put(("alice", "notes", "é"), "k", {"content": "My bike is red.", "tag": "x"})
        records = list(export_user(mem.store, "alice"))
    with _open(tmp_path / "b") as mem:
        import_records(mem.store, records)
        items = MemoryStore(mem.store)
        got = items.get(("alice", "notes", "é"), "k")
        assert got is not None and got.value == {"content": "My bike is red.", "tag": "x"}
        items.put(("alice", "notes", "é"), "k", {"content": "My bike is green."})
        assert [i.value["content"] for i in items.search(("alice",))] == ["My bike is green."]
        items.delete(("alice", "notes", "é"), "k")
        assert items.search(("alice",)) == [] and items.get(("alice", "notes", "é"), "k") is None
        items.close()


def test_items_an_older_import_wrote_are_found_after_the_migration(tmp_path: Path) -> None:
    from memory_graph import MemoryStore
    from memory_graph.store.ledger import ITEM_PATHS_FROM

    with _open(tmp_path / "a") as mem:
        items = MemoryStore(mem.store)
        items.put(("alice", "notes"), "k", {"content": "My bike is red."})
        items.close()  # its per-user Memory holds the store open
        with mem.store.write() as tx:  # as an import before schema 10 wrote it
            tx.execute("""UPDATE items SET path='["alice", "notes"]'""")
            tx.execute(f"PRAGMA user_version={ITEM_PATHS_FROM - 1}")
    with _open(tmp_path / "a") as mem:
        items = MemoryStore(mem.store)
        got = items.get(("alice", "notes"), "k")
        items.close()
        assert got is not None and got.value == {"content": "My bike is red."}


def test_importing_an_older_export_never_brings_back_what_a_hard_delete_erased(tmp_path: Path) -> None:
    """Issue 21: export, hard-forget, import the older export into the same store: the erased text was back. The
    store keeps salted hashes of the erased ids and refs (never the text) and the import skips those records."""
    from memory_graph import MemoryStore

    path = tmp_path / "s"
    with _open(path) as mem:
        mem.observe("I live in Lisbon.", time="2024-01-05T10:00:00", ref="msg-1")
        locker = mem.observe(f"My locker code is {PIN}.", time="2025-02-04T09:00:00", ref="msg-5")[0]["id"]
        mem.observe(f"Remember {PIN} is the locker.", time="2025-02-05T09:00:00", ref="msg-6")
        recall = mem.recall(f"is {PIN} my code?")  # credit a line that quotes the code (which one the linker left
        mem.feedback(recall.id, success=True, used_ids=[next(it.id for it in recall.items if PIN in it.text)])  # current)
        items = MemoryStore(mem.store)
        items.put(("alice", "gym"), "bag", {"content": "My gym bag is blue.", "tag": "bagtag77x1"})
        older = list(export_user(mem.store, "alice"))
        assert PIN in json.dumps(older) and "bagtag77x1" in json.dumps(older)
        mem.forget(locker, hard=True)
        items.delete(("alice", "gym"), "bag")
        items.close()
        summary = import_records(mem.store, older)
        text = json.dumps(list(export_user(mem.store, "alice")))
        assert PIN not in text and "bagtag77x1" not in text
        assert summary["skipped"]["observation"] == 3 and summary["skipped"]["memory"] >= 1
        assert summary["skipped"]["item"] == 1 and summary["skipped"]["recall"] == 1
        assert sum(summary["added"].values()) == 0  # nothing else was missing
        salt = mem.store.ledger.meta("erase_salt")
        assert salt and all(PIN not in r["digest"] for r in mem.store.ledger.query("SELECT digest FROM erased"))
    assert not _files_of(path, PIN.encode())


def _files_of(folder: Path, needle: bytes) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


# ---- every store any public write path can make round-trips (issue 21) --------------------------------------

_SAYINGS = ["I live in Lisbon.", "I moved to Porto.", "My favourite colour is green.", "My dog is named Pixel.",
            "We use Redis 7 in production.", f"My locker code is {PIN}.", "I no longer eat fish.",
            "Forget what I said about my dog.", "Forget what I told you about the locker."]


def _apply(mem: Memory, op: tuple[Any, ...], step: int, older: list[list[dict[str, Any]]]) -> None:
    """Run one public write ``op`` on ``mem`` (each a tuple drawn by ``_operations``)."""
    from memory_graph import MemoryStore

    kind = op[0]
    when = f"2024-01-{1 + step % 28:02d}T10:00:00"
    recent = [r["id"] for r in mem.inspect()["recent"]]
    if kind == "observe":
        mem.observe(_SAYINGS[op[1]], time=when, ref=f"msg-{step}" if op[2] else None)
    elif kind == "observe_many":
        mem.observe_many([{"text": _SAYINGS[i], "time": when, "ref": f"b{step}-{n}"} for n, i in enumerate(op[1])])
    elif kind == "long":
        mem.observe(" ".join(f"Line {i} of the pasted notes." for i in range(120)) + " " + _SAYINGS[op[1]],
                    time=when, ref=f"paste#{step}")
    elif kind == "feedback":
        recall = mem.recall("Where do I live?")
        mem.feedback(recall.id, success=op[1], used_ids=[it.id for it in recall.items[:1]])
    elif kind == "forget" and recent:
        mem.forget(recent[op[1] % len(recent)], hard=op[2])
    elif kind in ("put", "delete"):
        items = MemoryStore(mem.store)
        try:
            if kind == "put":
                items.put(("alice", "notes"), op[1], {"content": _SAYINGS[op[2]], "n": step})
            else:
                items.delete(("alice", "notes"), op[1])
        finally:
            items.close()
    elif kind == "export":
        older.append(list(export_user(mem.store, "alice")))
    elif kind == "import" and older:
        import_records(mem.store, older[op[1] % len(older)])


def _operations() -> Any:
    from hypothesis import strategies as st

    saying = st.integers(0, len(_SAYINGS) - 1)
    key = st.sampled_from(["k", "k#2", "n1"])
    return st.lists(st.one_of(
        st.tuples(st.just("observe"), saying, st.booleans()),
        st.tuples(st.just("observe_many"), st.lists(saying, min_size=1, max_size=3)),
        st.tuples(st.just("long"), saying),
        st.tuples(st.just("feedback"), st.booleans()),
        st.tuples(st.just("forget"), st.integers(0, 20), st.booleans()),
        st.tuples(st.just("put"), key, saying),
        st.tuples(st.just("delete"), key),
        st.tuples(st.just("export")),
        st.tuples(st.just("import"), st.integers(0, 5)),
    ), min_size=1, max_size=8)


def test_every_store_the_public_writes_make_round_trips(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 21: "forget what I said about X" wrote a link from the made-up id ``forget-request`` and import
    refused the whole file. Whatever the public writes (observe, observe_many, feedback, forget soft and hard,
    topic forgets, MemoryStore put/delete, import of an earlier export) made, its export imports into a fresh
    store and exports again the same."""
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(_operations())
    def run(ops: list[tuple[Any, ...]]) -> None:
        base = tmp_path_factory.mktemp("prop")
        older: list[list[dict[str, Any]]] = []
        with _open(base / "source") as mem:
            mem.observe("I live in Lisbon.", time="2024-01-01T09:00:00", ref="lisbon")
            mem.observe("Forget what I said about Lisbon.", time="2024-02-01T10:00:00", ref="forget-1")
            seeded = list(export_user(mem.store, "alice"))
            assert any(r["type"] == "link" and r["src_id"] == FORGET_REQUEST for r in seeded)
            for step, op in enumerate(ops):
                _apply(mem, op, step, older)
            records = list(export_user(mem.store, "alice"))
        validate_records(enumerate(records, start=1))
        with _open(base / "target") as target:
            import_records(target.store, records)
            again = list(export_user(target.store, "alice"))
        assert _body(again) == _body(records)

    run()


def test_an_item_imported_under_another_user_is_deleted_with_its_text(tmp_path: Path) -> None:
    """Breaker run (issue 21, high): imported with ``--user bob``, alice's item kept the ref
    ``item:["alice","notes"]:n1``, so bob's ``delete`` left its text stored and recallable (and the file named
    alice in bob's namespace)."""
    import os

    from memory_graph.langgraph_store import MemoryStore

    source = MemoryStore(tmp_path / "src")
    source.put(("alice", "notes"), "n1", {"content": "My locker code is 88123zz."})
    records = list(export_user(source.memory_graph_store, "alice"))
    source.close()
    target = MemoryStore(tmp_path / "dst")
    import_records(target.memory_graph_store, records, user="bob")
    refs = [r["ref"] for r in target.memory_graph_store.ledger.query("SELECT ref FROM observations UNION ALL "
                                                                       "SELECT ref FROM provenance")]
    assert refs and all(r == 'item:["bob","notes"]:n1' for r in refs)
    assert any("88123zz" in h.value["content"] for h in target.search(("bob", "notes"), query="locker code"))
    target.delete(("bob", "notes"), "n1")
    assert target.get(("bob", "notes"), "n1") is None
    assert not any("88123zz" in h.value["content"] for h in target.search(("bob",), query="locker code"))
    target.close()
    holding = [f for root, _, files in os.walk(tmp_path / "dst") for f in files
               if b"88123zz" in (Path(root) / f).read_bytes()]
    assert holding == []


@pytest.mark.parametrize("change", [{"namespace": [""]}, {"key": "two\nlines"}, {"key": "k" * 300},
                                    {"value": {"content": "lone \ud800 surrogate"}}])
def test_an_item_the_store_would_refuse_is_refused_on_import(tmp_path: Path, change: dict[str, Any]) -> None:
    """Breaker run (issue 21): an imported item with an empty namespace label, or a key with a newline or of over
    256 characters, was listed but could be neither read nor deleted; a lone surrogate in its value failed with a
    raw codec error. Import applies ``MemoryStore.put``'s rules: a clear error naming the line, nothing written."""
    from memory_graph.langgraph_store import MemoryStore

    source = MemoryStore(tmp_path / "src")
    source.put(("alice", "notes"), "n1", {"content": "My bike is blue."})
    records = list(export_user(source.memory_graph_store, "alice"))
    source.close()
    line = next(n for n, r in enumerate(records, start=1) if r["type"] == "item")
    records[line - 1] = {**records[line - 1], **change}
    with Memory(tmp_path / "dst", user_id="alice") as target:
        with pytest.raises(InvalidInputError, match=f"line {line}"):
            import_records(target.store, records)
        assert target.store.ledger.query("SELECT COUNT(*) AS n FROM observations")[0]["n"] == 0
        assert target.store.ledger.query("SELECT COUNT(*) AS n FROM items")[0]["n"] == 0


def test_import_refuses_an_id_shared_by_a_memory_and_an_observation_and_a_nul_in_an_item(tmp_path: Path) -> None:
    """Second breaker run (issue 21): a file whose memory took an observation's id was imported, and a hard delete
    of the memory then dropped the message's vector (they share the namespace's index part); an item value with
    a NUL, which ``put`` refuses, was imported. Both are refused whole, naming the problem."""
    from memory_graph.langgraph_store import MemoryStore

    source = MemoryStore(tmp_path / "src")
    source.put(("alice", "notes"), "n1", {"content": "I have a dog named Pixel."})
    records = list(export_user(source.memory_graph_store, "alice"))
    source.close()
    obs_id = next(r["id"] for r in records if r["type"] == "observation")
    mem_id = next(r["id"] for r in records if r["type"] == "memory")
    shared = json.loads(json.dumps(records).replace(json.dumps(mem_id), json.dumps(obs_id)))
    nul = [{**r, "value": {"content": "a\x00b"}} if r["type"] == "item" else r for r in records]
    with Memory(tmp_path / "dst", user_id="alice") as target:
        with pytest.raises(InvalidInputError, match="both a memory and an observation"):
            import_records(target.store, shared)
        with pytest.raises(InvalidInputError, match="NUL"):
            import_records(target.store, nul)
        assert target.store.ledger.query("SELECT COUNT(*) AS n FROM observations")[0]["n"] == 0


def test_an_import_under_another_user_leaves_no_ref_to_the_first_user(tmp_path: Path) -> None:
    """Second breaker run (issue 21): event details kept ``item:["alice",...]`` refs after ``import --user bob``."""
    from memory_graph.langgraph_store import MemoryStore

    source = MemoryStore(tmp_path / "src")
    source.put(("alice", "notes"), "n1", {"content": "My locker code is 88123zz."})
    records = list(export_user(source.memory_graph_store, "alice"))
    source.close()
    with Memory(tmp_path / "dst", user_id="bob") as target:
        import_records(target.store, records, user="bob")
        rows = [json.dumps(dict(r)) for kind in ("observation", "memory", "event", "item")
                for r in target.store.ledger.namespace_rows(kind, "bob")]
        # the user id as a word (never a bare substring: an id of syllables can spell it, as "kobalice" does)
        assert rows and not any(re.search(r"(?<![a-z])alice(?![a-z])", r) for r in rows)


def test_an_item_naming_another_message_of_the_user_is_refused(tmp_path: Path) -> None:
    """Eighteenth breaker run (high): a crafted file's item named an existing message of the user that is not the
    item's ("My sister lives in Oslo."); it was imported, and deleting the item erased that message and its
    memory. An item's message must carry the item's own ref; nothing is written otherwise."""
    from memory_graph.langgraph_store import MemoryStore

    with _open(tmp_path / "s") as mem:
        mem.observe("My sister lives in Oslo.", ref="r1")
        sister = mem.store.ledger.query("SELECT id FROM observations WHERE ref='r1'")[0]["id"]
        item = {"type": "item", "namespace": ["notes"], "key": "todo", "value": {"content": "buy milk"},
                "observation_id": sister, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
        with pytest.raises(InvalidInputError, match="not a message of that item"):
            import_records(mem.store, [_header(counts={"item": 1}), item])
        assert mem.store.ledger.query("SELECT COUNT(*) AS n FROM items")[0]["n"] == 0
    store = MemoryStore(tmp_path / "src")  # the item's own message, exported with it, still imports
    store.put(("alice", "notes"), "n1", {"content": "I have a dog named Pixel."})
    records = list(export_user(store.memory_graph_store, "alice"))
    store.close()
    with _open(tmp_path / "t") as target:
        assert import_records(target.store, records)["added"]["item"] == 1


def test_a_header_user_with_a_control_character_is_refused(tmp_path: Path) -> None:
    """Eighteenth breaker run (medium): ``import_records`` took the user "mallory\\n[ok] imported", a namespace that
    ``Memory`` refuses to open, so nothing imported there could be read, exported or erased."""
    record = {"type": "observation", "id": "obsaaaa1", "text": "I like tea.", "speaker": "user", "source": "user",
              "time": "2026-01-01T00:00:00Z", "created_at": "2026-01-01T00:00:00Z"}
    with _open(tmp_path / "s") as mem:
        with pytest.raises(InvalidInputError, match="control characters"):
            import_records(mem.store, [_header(user="mallory\n[ok] imported", counts={"observation": 1}), record])
        assert mem.store.ledger.query("SELECT COUNT(*) AS n FROM observations")[0]["n"] == 0


def test_an_empty_export_file_is_named_with_a_separator(tmp_path: Path) -> None:
    """Eighteenth breaker run (low): ``import /dev/null`` said "/dev/null:the export is empty" (a file-wide message
    read as a line number); a line's error still reads ``PATH:N: ...``."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_header()) + "\n{not json\n", encoding="utf-8")
    with _open(tmp_path / "s") as mem:
        with pytest.raises(InvalidInputError, match=re.escape(f"{empty}: the export is empty")):
            import_file(mem.store, empty)
        with pytest.raises(InvalidInputError, match=re.escape(f"{bad}:2:")):
            import_file(mem.store, bad)
