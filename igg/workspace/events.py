"""Per-session event streams: the loop's ``Event`` objects, fanned out to any number of listeners.

Publishers may be threads (sync API handlers) or coroutines; listeners are async iterators. A listener gets
every event of the session from the first one on, in order, then live ones, and stops after
``run_finished`` (or when the hub forgets the session).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from igg.record.records import Event

_END = object()


@dataclass
class _Stream:
    history: list[dict[str, Any]] = field(default_factory=list)
    listeners: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[Any]]] = field(default_factory=list)
    closed: bool = False


class EventHub:
    """Keeps each session's events (bounded) and hands them to listeners."""

    def __init__(self, max_events: int = 10_000, max_sessions: int = 256) -> None:
        self._streams: dict[str, _Stream] = {}
        self._lock = threading.Lock()
        self._max = max_events
        self._max_sessions = max_sessions
        """Streams kept; beyond this the oldest ended ones (no listeners) are forgotten."""

    def publish(self, event: Event) -> None:
        """Record an event and wake the session's listeners (callable from any thread)."""
        data = event.to_dict()
        with self._lock:
            stream = self._streams.get(event.session_id)
            if stream is None:
                stream = self._streams[event.session_id] = _Stream()
                self._forget_old()
            if event.kind == "run_started":
                stream.closed = False
            if len(stream.history) < self._max:
                stream.history.append(data)
            if event.kind == "run_finished":
                stream.closed = True
            listeners = list(stream.listeners)
        for loop, queue in listeners:
            loop.call_soon_threadsafe(queue.put_nowait, data)
            if event.kind == "run_finished":
                loop.call_soon_threadsafe(queue.put_nowait, _END)

    def _forget_old(self) -> None:
        excess = len(self._streams) - self._max_sessions
        for sid in [s for s, st in self._streams.items() if not st.listeners][: max(excess, 0)]:
            del self._streams[sid]

    def has(self, session_id: str) -> bool:
        """Whether the session has published any event."""
        with self._lock:
            return session_id in self._streams

    async def listen(self, session_id: str, *, follow: bool = True) -> AsyncIterator[dict[str, Any]]:
        """Every event of the session so far, then (``follow``) live ones until ``run_finished``."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        with self._lock:
            stream = self._streams.setdefault(session_id, _Stream())
            backlog = list(stream.history)
            closed = stream.closed or not follow
            if not closed:
                stream.listeners.append((loop, queue))
        try:
            for data in backlog:
                yield data
            if closed:
                return
            while True:
                item = await queue.get()
                if item is _END:
                    return
                yield item
        finally:
            with self._lock:
                if (loop, queue) in stream.listeners:
                    stream.listeners.remove((loop, queue))
