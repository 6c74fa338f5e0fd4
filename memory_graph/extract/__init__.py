"""Extractors turn one observation into focused memory records (``MemoryRecord``).

``rules`` is the deterministic offline extractor; ``llm`` uses a chat model's structured output and falls
back to ``rules`` on any failure.
"""
