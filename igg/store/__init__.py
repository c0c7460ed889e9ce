"""Durable sessions: the SQLite session store, its recorder, resume, replay, undo, diff, explain.

``SessionStore`` keeps sessions in one SQLite file (``igg.store.db``); ``SessionRecorder`` commits a session
into it, one transaction per iteration; ``StoreSessions`` is the store as a ``SessionRepo``
(``igg.persistence``); ``resume_point`` rebuilds an interrupted session; ``igg.store.history`` answers
questions from the stored mutations.
"""

from igg.errors import SessionRefused
from igg.persistence import SessionInfo
from igg.store.db import DEFAULT_STORE, HOME_ENV, PROJECT_STORE, STORE_ENV, home_store, resolve_store_path
from igg.store.history import Change, ReplayReport, diff, explain, replay, undo
from igg.store.recorder import ResumePoint, SessionRecorder, resume_point
from igg.store.sessions import StoreSessions
from igg.store.store import SessionStore, StepInfo

__all__ = [
    "DEFAULT_STORE", "HOME_ENV", "PROJECT_STORE", "STORE_ENV", "Change", "ReplayReport", "ResumePoint", "SessionInfo", "SessionRecorder",
    "SessionRefused", "SessionStore", "StepInfo", "StoreSessions", "diff", "explain", "home_store", "replay",
    "resolve_store_path",
    "resume_point", "undo",
]
