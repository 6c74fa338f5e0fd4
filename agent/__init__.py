"""The memory-graph agent: ``START -> planner -> memory -> tools -> planner ... -> respond -> END``.

``agent.graph.graph`` is the compiled graph that ``langgraph.json`` exposes as ``agent``;
``agent.graph.build_agent_graph`` compiles one with a checkpointer or an injected chat model.
"""
