"""State of the agent graph.

Keys:
  messages        the conversation (``add_messages``); the planner appends tool-calling AI messages, the
                  tool node their results, ``respond`` the answer
  memory_query    what the memory node recalls for (set by the planner; the newest human text)
  memory_context  the fenced block recalled by the memory subgraph (never appended to ``messages``)
  recall          the memory subgraph's recall record (``Recall.model_dump()``) of this turn
  last_recall_id  the recall the latest answer used; the next human turn credits or blames it
  credit          the outcome the memory subgraph applied at the start of this turn (if any)
  as_of, include_history, task   recall options passed through to the memory subgraph
  remember        input, default True: the memory node stores this turn's messages and credits the previous
                  answer; False makes the turn a read (it only recalls; ``memory-graph ask`` without
                  ``--remember``)
  deadline        input, optional: absolute time (epoch seconds, ``time.time()``) by which this turn's model calls
                  must end; the planner's first round consumes it (None: now + ``Context.model_deadline_s``)
  owner, owned, refused   the thread's owner (``memory_graph.threads``): a run of another user is refused
  turn_deadline   the deadline of the current turn (set by the planner's first round; the memory node passes it
                  to the memory subgraph as ``deadline``); see ``memory_graph.deadline``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AnyMessage

from memory_graph.messages import add_checked_messages
from memory_graph.threads import ThreadOwnership


@dataclass(kw_only=True)
class AgentInput:
    """What a caller may send (the ``input_schema``): thread ownership and internal keys are not inputs."""

    messages: Annotated[list[AnyMessage], add_checked_messages] = field(default_factory=list)
    last_recall_id: str | None = None  # a stateless caller passes the previous answer's recall (credit)
    as_of: str | None = None
    include_history: bool = False
    task: str | None = None
    deadline: float | None = None
    remember: bool = True  # False: this turn only recalls (nothing stored, nothing credited)


@dataclass(kw_only=True)
class AgentState(AgentInput, ThreadOwnership):
    """The agent's state: its input keys plus the rest (see the module docstring for each key)."""

    memory_query: str = ""
    memory_context: str = ""
    recall: dict[str, Any] | None = None
    credit: dict[str, Any] | None = None
    turn_deadline: float | None = None

