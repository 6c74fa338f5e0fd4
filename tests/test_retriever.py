"""``MemoryRetriever``: a LangChain retriever over the memory, in an LCEL chain with a scripted chat model.
Fake embedder (no model load)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import StemBagEmbedder
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from memory_graph import Memory, MemoryRetriever
from memory_graph.errors import ClosedError, InvalidInputError
from memory_graph.tokens import count_tokens


@pytest.fixture()
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "s", user_id="u") as m:
        m.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        m.observe("I live in Leeds.", time="2024-01-01T09:00:00Z")
        m.observe("I moved to York.", time="2024-06-01T09:00:00Z")
        yield m


class PromptSpy(BaseCallbackHandler):
    """Records the messages each chat model call was given."""

    def __init__(self) -> None:
        self.prompts: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.prompts.extend(messages)


def format_docs(docs: list[Document]) -> str:
    return "\n".join(f"[{d.metadata['id']}] {d.page_content}" for d in docs)


def test_in_an_lcel_chain_the_model_sees_the_current_value_only(mem: Memory) -> None:
    retriever = MemoryRetriever(memory=mem, budget_tokens=300)
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from these memories:\n{context}"), ("human", "{question}")])
    model = GenericFakeChatModel(messages=iter([AIMessage("You live in York.")]))
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
    spy = PromptSpy()

    answer = chain.invoke("Where do I live?", config={"callbacks": [spy]})

    assert answer == "You live in York."
    seen = "\n".join(str(m.content) for m in spy.prompts[0])
    assert "York" in seen and "Leeds" not in seen and "Where do I live?" in seen
    docs = retriever.invoke("Where do I live?")
    assert docs[0].page_content == "The user lives in York." and docs[0].metadata["status"] == "current"
    meta = docs[0].metadata
    assert set(meta) >= {"id", "status", "valid_from", "valid_to", "scope", "source", "provenance", "recall_id"}
    assert meta["valid_from"] == "2024-06-01T09:00:00Z" and meta["valid_to"] is None
    assert meta["source"] == "user" and meta["provenance"] and docs[0].id == meta["id"]
    assert meta["recall_id"] == retriever.last_recall.id  # type: ignore[union-attr]


def test_the_token_budget_is_honoured(mem: Memory) -> None:
    for i, city in enumerate(["Rome", "Oslo", "Lima", "Kyiv", "Riga", "Bern", "Doha", "Baku"]):
        mem.observe(f"My friend number {i} lives in {city} and visits the old harbour every summer.",
                    time=f"2024-07-0{i + 1}T09:00:00Z")
    budget = 90
    docs = MemoryRetriever(memory=mem, budget_tokens=budget).invoke("Where do my friends live? harbour summer")
    assert docs
    assert sum(count_tokens(d.page_content, mem.context.encoding) for d in docs) <= budget
    assert sum(d.metadata["tokens"] for d in docs) <= budget
    more = MemoryRetriever(memory=mem, budget_tokens=2000).invoke("Where do my friends live? harbour summer")
    assert len(more) > len(docs)


def test_as_of_returns_the_old_value_and_history_marks_it(mem: Memory) -> None:
    then = MemoryRetriever(memory=mem, as_of="2024-03-01").invoke("Where do I live?")
    assert then[0].page_content == "The user lives in Leeds." and "York" not in " ".join(d.page_content for d in then)
    both = MemoryRetriever(memory=mem, include_history=True).invoke("Where do I live?")
    by_text = {d.page_content: d.metadata for d in both}
    york, leeds = by_text["The user lives in York."], by_text["The user lives in Leeds."]
    assert leeds["status"] == "superseded" and leeds["superseded_by"] == york["id"] and york["status"] == "current"
    assert leeds["valid_to"].startswith("2024-06-01")


def test_feedback_applies_to_the_last_recall(mem: Memory) -> None:
    retriever = MemoryRetriever(memory=mem)
    with pytest.raises(InvalidInputError, match="invoke the retriever first"):
        retriever.feedback(success=True)
    docs = retriever.invoke("Where do I live?")
    out = retriever.feedback(success=True, used_ids=[docs[0].metadata["id"]])
    assert out["recall_id"] == docs[0].metadata["recall_id"] and docs[0].metadata["id"] in out["credited"]
    assert mem.inspect(docs[0].metadata["id"])["stats"]["overall"]["credited"] >= 1
    with pytest.raises(InvalidInputError):  # one outcome per recall
        retriever.feedback(success=False)


def test_bad_settings_are_the_projects_errors(mem: Memory) -> None:
    with pytest.raises(InvalidInputError):
        MemoryRetriever(memory=mem, budget_tokens=0)
    with pytest.raises(InvalidInputError):
        MemoryRetriever(memory=mem, as_of="Ben")
    with pytest.raises(InvalidInputError):
        MemoryRetriever(memory=mem).invoke("   ")
    # breaker run: these were pydantic's own error, or silently read (12345 as a 1970 date, another user_id)
    for bad in ({"budget_tokens": 1.5}, {"budget_tokens": "lots"}, {"as_of": 12345}, {"user_id": "mallory"}):
        with pytest.raises(InvalidInputError):
            MemoryRetriever(memory=mem, **bad)


def test_a_retriever_can_open_and_close_its_own_memory(tmp_path: Path) -> None:
    retriever = MemoryRetriever(store=str(tmp_path / "own"), user_id="carol")
    try:
        assert retriever.memory is not None and retriever.memory.context.user_id == "carol"
        retriever.memory.store._embedder = StemBagEmbedder()  # type: ignore[assignment]
        retriever.memory.observe("I live in Leeds.", time="2024-01-01T09:00:00Z")
        assert [d.page_content for d in retriever.invoke("Where do I live?")] == ["The user lives in Leeds."]
    finally:
        retriever.close()
    with pytest.raises(ClosedError):
        retriever.invoke("Where do I live?")
