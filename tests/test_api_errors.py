"""Every failure of the public API is a documented error of the project's hierarchy (``MemoryGraphError``):
bad arguments of any type, unknown ids, extreme dates, a closed memory. Nothing else escapes, and a rejected
call writes nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_graph import Memory
from memory_graph.errors import ClosedError, InvalidInputError, MemoryGraphError, NotFoundError


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    with Memory(tmp_path_factory.mktemp("api") / "s", user_id="fuzz") as m:
        m.observe("I live in Berlin.", time="2024-01-01T00:00:00")
        yield m


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.inspect([]),
        lambda m: m.history([]),
        lambda m: m.forget([]),
        lambda m: m.feedback([], True),
        lambda m: m.inspect(10**30),
        lambda m: m.search_observations(None),
        lambda m: m.observe("x", time="9999-12-31T23:59:59-01:00"),
        lambda m: m.recall("x", as_of="0001-01-01T00:00:00+01:00"),
        lambda m: m.observe(b"bytes"),
        lambda m: m.observe_many("not turns"),
        lambda m: m.recall("x", budget_tokens="many"),
        lambda m: m.recall("x", include_history="yes"),
        lambda m: m.search_observations("x", k=10**9),
        lambda m: m.feedback("abc", "yes"),
        lambda m: m.forget("abc", hard="yes"),
        lambda m: m.recall("x", budget_tokens=2),  # below the block's own size (found by the breaker)
        lambda m: m.recall("x", task="t" * 201),  # a task label was cut to 200 characters silently
    ],
)
def test_reported_reproductions_raise_invalid_input(shared: Memory, call: Any) -> None:
    before = shared.inspect()
    with pytest.raises(InvalidInputError):
        call(shared)
    assert shared.inspect() == before  # nothing was written


@pytest.mark.parametrize("call", [lambda m: m.inspect("nosuchid"), lambda m: m.history("nosuchid"),
                                  lambda m: m.forget("nosuchid"), lambda m: m.feedback("nosuchid", True)])
def test_unknown_ids_are_not_found(shared: Memory, call: Any) -> None:
    with pytest.raises(NotFoundError):
        call(shared)


def test_another_namespace_is_not_found_either(tmp_path: Path) -> None:
    with Memory(tmp_path / "s", user_id="alice") as alice:
        mid = alice.observe("My pin code is zeta1234.")[0]["id"]
        rid = alice.recall("pin code").id
    with Memory(tmp_path / "s", user_id="bob") as bob:
        for call in (lambda: bob.inspect(mid), lambda: bob.history(mid), lambda: bob.forget(mid, hard=True),
                     lambda: bob.feedback(rid, True)):
            with pytest.raises(NotFoundError):
                call()
    with Memory(tmp_path / "s", user_id="alice") as alice:
        assert alice.inspect(mid)["status"] == "current"


def test_a_closed_memory_says_so(tmp_path: Path) -> None:
    m = Memory(tmp_path / "s", user_id="u")
    m.close()
    m.close()  # idempotent
    with pytest.raises(ClosedError):
        m.recall("anything")


def test_bad_configuration_is_invalid_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the breaker: a model with no key, an embedding model that cannot load, an unknown encoding."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with Memory(tmp_path / "s", user_id="u", model="gpt-x") as m:
        with pytest.raises(InvalidInputError, match="OPENAI_API_KEY"):
            m.observe("I live in Berlin.")
        assert m.inspect()["observations"] == 0  # nothing was written
    with pytest.raises(InvalidInputError, match="encoding"):
        Memory(tmp_path / "s", user_id="u", encoding="no-such-encoding")
    with Memory(tmp_path / "s2", user_id="u", embedding_model=str(tmp_path / "no-model")) as m, pytest.raises(InvalidInputError):
        m.recall("where")


def test_bad_constructor_arguments(tmp_path: Path) -> None:
    for kwargs in ({"user_id": ""}, {"user_id": None}, {"user_id": "x" * 300}, {"budget_tokens": -1},
                   {"trust": "everyone"}, {"user_id": "\ud800"}):
        with pytest.raises(InvalidInputError):
            Memory(tmp_path / "s", **kwargs)
    for kwargs in ({"model": 5}, {"base_url": 5}, {"max_items": 1000}):  # found by the breaker
        with pytest.raises(InvalidInputError):
            Memory(tmp_path / "s", user_id="u", **kwargs)
    for path in ("/proc/self/nope", "/dev/null/x"):
        with pytest.raises(InvalidInputError):
            Memory(path, user_id="u")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInputError):
        Memory(tmp_path / "file", user_id="u")


values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30), st.binary(max_size=10),
    st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    st.sampled_from(["", " ", "\x00", "\ud800", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00",
                     "2024-13-45", "yesterday", "1.27", "Ben", "x" * 30_000]),
)
METHODS = {
    "observe": lambda m, a, b: m.observe(a, time=b),
    "observe_speaker": lambda m, a, b: m.observe("I like tea.", speaker=a, ref=b),
    "recall": lambda m, a, b: m.recall(a, as_of=b),
    "recall_budget": lambda m, a, b: m.recall("where", budget_tokens=a, task=b),
    "feedback": lambda m, a, b: m.feedback(a, b),
    "feedback_used": lambda m, a, b: m.feedback("abc", True, used_ids=a, answer=b),
    "inspect": lambda m, a, b: m.inspect(a),
    "history": lambda m, a, b: m.history(a),
    "forget": lambda m, a, b: m.forget(a, hard=b),
    "search": lambda m, a, b: m.search_observations(a, k=b),
}


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(sorted(METHODS)), a=values, b=values)
def test_fuzzed_arguments_raise_only_documented_errors(shared: Memory, method: str, a: Any, b: Any) -> None:
    with contextlib.suppress(MemoryGraphError):
        METHODS[method](shared, a, b)


@pytest.mark.parametrize("payload", [
    {"messages": [5]}, {"messages": [{}]}, {"query": "x", "task": 1.0}, {"query": "x", "task": "\ud800"},
    {"feedback": {"recall_id": {"a": 1}, "success": True}}, {"feedback": {"recall_id": "r", "success": "yes"}},
    {"query": 5}, {"observations": "x"}, {"observations": [5]}, {"query": "x", "budget_tokens": -1},
])
def test_the_memory_graph_invoked_directly_reports_bad_input_as_invalid_input(tmp_path: Path, payload: dict[str, Any]) -> None:
    """Third breaker run: 24 undocumented exceptions (LangChain's NotImplementedError, pydantic's
    ValidationError, sqlite3.ProgrammingError, AttributeError) from JSON a ``langgraph dev`` run can send."""
    from memory_graph.graph import build_memory_graph

    with pytest.raises(InvalidInputError):
        build_memory_graph().invoke(payload, context={"store_path": str(tmp_path), "user_id": "a"})


@pytest.mark.parametrize("context", [
    {"user_id": "a\udfffb"}, {"user_id": "a" * 300}, {"user_id": "a\x00b"}, {"store_path": "/tmp/" + "x" * 300},
])
def test_a_graph_context_is_checked_like_memorys_arguments(tmp_path: Path, context: dict[str, Any]) -> None:
    """Fourth breaker run: a lone surrogate or a 2,000-character user_id in a graph run's context (JSON from
    ``langgraph dev``) reached SQLite and Chroma (UnicodeEncodeError, Chroma's InvalidArgumentError); a store name
    over 255 bytes was a plain OSError."""
    from memory_graph.graph import build_memory_graph

    with pytest.raises(InvalidInputError):
        build_memory_graph().invoke({"query": "x"}, context={"store_path": str(tmp_path), "user_id": "a", **context})
    with pytest.raises(InvalidInputError):
        Memory(context.get("store_path", tmp_path), user_id=context.get("user_id", "a"))
