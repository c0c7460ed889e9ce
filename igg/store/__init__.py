"""Durable sessions: the session store (an SQLite file or a PostgreSQL database), its recorder, resume,
replay, undo, diff, explain.

``SessionStore`` keeps sessions in one SQLite file (``igg.store.db``) or one PostgreSQL database
(``igg.store.postgres``), behind one SQL text (``igg.store.sql``); ``SessionRecorder`` commits a session
into it, one transaction per iteration; ``StoreSessions`` is the store as a ``SessionRepo``
(``igg.persistence``); ``resume_point`` rebuilds an interrupted session; ``igg.store.history`` answers
questions from the stored mutations.

The store's locations (``igg.store.location``) are imported here; the rest on first use (PEP 562's module
``__getattr__``), so the command line can name the default store without loading the graph and its models.
"""

import typing

from igg.errors import SessionRefused
from igg.io.lazy import lazy_names as _lazy_names
from igg.persistence import SessionInfo
from igg.store.location import (
    DEFAULT_STORE,
    HOME_ENV,
    PROJECT_STORE,
    STORE_ENV,
    home_store,
    resolve_store_path,
)

if typing.TYPE_CHECKING:
    from igg.record.history import Change
    from igg.store.history import ReplayReport, diff, explain, replay, undo
    from igg.store.recorder import ResumePoint, SessionRecorder, resume_point
    from igg.store.sessions import StoreSessions
    from igg.store.store import SessionStore, StepInfo

_HOME = {
    "Change": "igg.record.history",
    **dict.fromkeys(("ReplayReport", "diff", "explain", "replay", "undo"), "igg.store.history"),
    **dict.fromkeys(("ResumePoint", "SessionRecorder", "resume_point"), "igg.store.recorder"),
    "StoreSessions": "igg.store.sessions",
    **dict.fromkeys(("SessionStore", "StepInfo"), "igg.store.store"),
}
"""The module each lazily imported name lives in."""


__getattr__ = _lazy_names(__name__, _HOME)

__all__ = [
    "DEFAULT_STORE",
    "HOME_ENV",
    "PROJECT_STORE",
    "STORE_ENV",
    "Change",
    "ReplayReport",
    "ResumePoint",
    "SessionInfo",
    "SessionRecorder",
    "SessionRefused",
    "SessionStore",
    "StepInfo",
    "StoreSessions",
    "diff",
    "explain",
    "home_store",
    "replay",
    "resolve_store_path",
    "resume_point",
    "undo",
]
