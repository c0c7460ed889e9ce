"""The deadlines of one HTTP listener (``Timeouts``): a small module of its own, so that the command line can
name the defaults without loading asyncio, uvicorn or the protocol that enforces them (``deadlines.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    """Deadlines of one HTTP listener (seconds) and the smallest body pieces it accepts in bulk."""

    header: float = 10.0
    """From connection (or the start of the next request) to the end of the request's headers."""
    body: float = 30.0
    """From the end of the headers to the end of the body."""
    idle: float = 5.0
    """A keep-alive connection without a request is closed after this long (uvicorn's keep-alive)."""
    write: float = 30.0
    """A response whose client reads nothing for this long is dropped."""
    min_pieces: int = 1024
    """Body pieces accepted before their average size is checked."""
    min_piece_bytes: int = 256
    """Smallest average size of a body's pieces once ``min_pieces`` have arrived."""
