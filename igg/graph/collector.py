"""Python's cyclic garbage collector paused while a graph, a document or a batch of actions is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block; reference counting still frees every acyclic
    object at once. Building a graph allocates many small acyclic containers (properties, journal entries,
    verdicts), and the collector's full passes over the growing graph cost more than the work itself
    (measured: 1.6 s vs 1.0 s for 100,000 actions; about 40% of a static code map's CPU). Nested uses are one
    pause.

    When the block ends, what it allocated and still holds is handed to the collector's oldest generation, as
    if it had survived its passes (``gc.freeze`` then ``gc.unfreeze``): else the first young pass after the
    block walks every object the block left (0.3-0.4 s after a map of openai's 2,077 files), and the passes
    after it walk them again as they age. The few cycles the block left are freed by the next full pass. A
    process that froze objects of its own (``gc.get_freeze_count()``) keeps them frozen: its young pass then
    runs as before.

    As a decorator (``@collector_paused()``, as any ``contextmanager``), each call of the function is the
    block."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        gc.enable()


__all__ = ["collector_paused"]
