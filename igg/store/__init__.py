"""Durable sessions: the SQLite session store, the loop's recorder, resume, replay, undo, diff, explain.

``SessionStore`` keeps sessions in one SQLite file (``igg.store.db``); ``SessionRecorder`` commits a run into
it, one transaction per iteration; ``resume_point`` rebuilds an interrupted session; ``igg.store.history``
answers questions from the stored mutations.
"""

from igg.store.db import DEFAULT_STORE, STORE_ENV, resolve_store_path
from igg.store.history import Change, ReplayReport, diff, explain, replay, undo
from igg.store.recorder import ResumePoint, SessionRecorder, resume_point
from igg.store.store import SessionInfo, SessionRefused, SessionStore, StepInfo

__all__ = [
    "DEFAULT_STORE", "STORE_ENV", "Change", "ReplayReport", "ResumePoint", "SessionInfo", "SessionRecorder", "SessionRefused",
    "SessionStore", "StepInfo", "diff", "explain", "replay", "resolve_store_path", "resume_point", "undo",
]
