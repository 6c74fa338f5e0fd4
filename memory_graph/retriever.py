"""A LangChain retriever over the memory: ``MemoryRetriever(memory=mem) | format_docs`` in an LCEL chain.

Each ``invoke(query)`` is one :meth:`memory_graph.api.Memory.recall` (the subgraph's retrieve node: current facts
unless ``as_of`` or ``include_history``, chosen under the token budget) and returns its items as ``Document``\\ s,
best first. :meth:`MemoryRetriever.feedback` credits or blames what the last recall showed, so the usefulness
the memory learns applies to chains too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import PrivateAttr

from memory_graph.api import Memory
from memory_graph.errors import InvalidInputError
from memory_graph.records import Recall, RecallItem


def to_document(item: RecallItem, recall_id: str) -> Document:
    """A recalled item as a ``Document``: ``page_content`` is the memory's text; ``metadata`` holds ``id``,
    ``kind``, ``status``, ``valid_from``, ``valid_to`` (ISO-8601 UTC, ``None`` while it holds), ``superseded_by``,
    ``scope``, ``source``, ``provenance`` (``[{observation_id, ref, time}]``), ``tokens`` (of its context line)
    and ``recall_id``."""
    return Document(
        id=item.id,
        page_content=item.text,
        metadata={"id": item.id, "kind": item.kind, "status": item.status, "valid_from": item.valid_from,
                  "valid_to": item.valid_to, "superseded_by": item.superseded_by, "scope": item.scope,
                  "source": item.source, "provenance": item.provenance, "tokens": item.tokens, "recall_id": recall_id},
    )


class MemoryRetriever(BaseRetriever):
    """LangChain ``BaseRetriever`` over one namespace of the memory.

    Args:
        memory: an open :class:`~memory_graph.api.Memory` (the caller closes it); or, without it,
        store: the store folder or ``postgresql://`` URL to open (default ``MEMORY_GRAPH_STORE`` or
            ``./.memory-graph``) with ``user_id`` (default ``"default"``); the retriever then owns that ``Memory``
            and :meth:`close` closes it.
        budget_tokens: tokens of the whole context block a recall may fill (default ``Context.budget_tokens``);
            the documents' texts always fit in it.
        as_of: recall what was held at that time (datetime or ISO-8601; naive = UTC).
        include_history: also return replaced memories (``status`` superseded, ``superseded_by`` set).
        task: the task class whose learned usefulness applies.

    ``invoke(query)`` returns ``list[Document]`` (see :func:`to_document`), best first.

    Raises:
        InvalidInputError: (constructing) a budget out of range or an invalid ``as_of``; (invoking) an empty
            query; see :class:`~memory_graph.api.Memory` for opening errors.
    """

    memory: Memory | None = None
    store: str | None = None
    user_id: str = "default"
    budget_tokens: int | None = None
    as_of: datetime | str | None = None
    include_history: bool = False
    task: str | None = None

    _last_recall: Recall | None = PrivateAttr(default=None)
    _owns_memory: bool = PrivateAttr(default=False)

    def __init__(self, **data: Any) -> None:
        from pydantic import ValidationError

        as_of = data.get("as_of")
        if as_of is not None and not isinstance(as_of, (datetime, str)):  # pydantic would read 12345 as 1970
            raise InvalidInputError(f"as_of must be a datetime or an ISO-8601 string, got {type(as_of).__name__}")
        if data.get("memory") is not None and "user_id" in data and data["user_id"] != data["memory"].context.user_id:
            raise InvalidInputError("user_id is the memory's own when memory is given; leave it out")
        try:
            super().__init__(**data)
        except ValidationError as exc:  # a wrong type (budget_tokens=1.5, "lots"): the project's error
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise InvalidInputError(f"MemoryRetriever {where}: {first.get('msg', 'invalid value')}") from None
        if self.budget_tokens is not None:
            from memory_graph.retrieval import check_budget

            check_budget(self.budget_tokens)
        if self.as_of is not None:
            from memory_graph.timeutil import parse_time

            parse_time(self.as_of)
        if self.memory is None:
            self.memory = Memory(self.store, user_id=self.user_id)
            self._owns_memory = True

    @property
    def last_recall(self) -> Recall | None:
        """The last recall this retriever ran (its ``context`` is the fenced block), or None."""
        return self._last_recall

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        assert self.memory is not None  # set in __init__
        recall = self.memory.recall(query, budget_tokens=self.budget_tokens, as_of=self.as_of, task=self.task,
                                    include_history=self.include_history)
        self._last_recall = recall
        return [to_document(item, recall.id) for item in recall.items]

    def feedback(self, success: bool, used_ids: list[str] | None = None, answer: str | None = None) -> dict[str, Any]:
        """Report the outcome of the answer built from the last recall (see
        :meth:`memory_graph.api.Memory.feedback`; ``used_ids`` are document ``id``\\ s). For concurrent use
        (``batch``), call ``retriever.memory.feedback(doc.metadata["recall_id"], ...)`` instead.

        Returns: ``{"recall_id", "success", "credited", "blamed", "transitions", "replays"}``.

        Raises:
            InvalidInputError: no recall yet (invoke the retriever first), feedback already given for it, or
                ``used_ids`` it did not show.
        """
        if self._last_recall is None:
            raise InvalidInputError("no recall to give feedback on: invoke the retriever first")
        assert self.memory is not None
        return self.memory.feedback(self._last_recall.id, success=success, used_ids=used_ids, answer=answer)

    def close(self) -> None:
        """Close the ``Memory`` when this retriever opened it (idempotent); a given one is left open."""
        if self._owns_memory and self.memory is not None:
            self.memory.close()
