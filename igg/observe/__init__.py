"""The observe step: what the agent sees each iteration, within a token budget.

- ``estimate_tokens``: the character-based token estimate every budget uses (``igg.observe.tokens``)
- ``split_context`` / ``Chunk``: context_data split on files, paragraphs and lines (``igg.observe.chunks``)
- ``render_observation``: the budgeted markdown observation (``igg.observe.render``)
- ``open_todos``: unmet completeness rules as to-dos (``igg.observe.todos``)
"""

from igg.observe.chunks import Chunk, ContextChunks, split_context
from igg.observe.render import render_observation
from igg.observe.todos import open_todos
from igg.observe.tokens import estimate_tokens

__all__ = ["Chunk", "ContextChunks", "estimate_tokens", "open_todos", "render_observation", "split_context"]
