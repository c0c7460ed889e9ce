"""What a store says of its sessions (their rows: status, agent, last step, size), read without loading a
graph or importing the modules that do: ``SessionStore.sessions`` and ``SessionStore.session`` read through
here, and so does the start of ``igg map-code --update`` (``igg.mapping.update``), which answers a tree with
no change from these rows and the tree's index alone."""

from __future__ import annotations

import json
import os
import socket
from typing import Any

from igg.errors import SessionError, SessionNotFound
from igg.persistence import TOOL_AGENT, SessionInfo, SessionStatus
from igg.store.sql import Connection, Database

SESSION_COLS = (
    "session_id, status, stop_reason, goal, agent, options, created_at, updated_at, last_step,"
    " last_iteration, nodes, edges, owner, result,"
    # whether the last step is a review plan still waiting (igg.workspace.review): awaiting_review
    " (SELECT s.kind = 'review' AND s.review_state = 'pending' FROM steps s"
    "  WHERE s.session_id = sessions.session_id ORDER BY s.step DESC LIMIT 1)"
)
"""The columns ``session_info`` reads, in its order."""


def owner_alive(owner: str | None) -> bool:
    """Whether the process named by an owner token is still running (unknown hosts count as alive)."""
    if not owner:
        return False
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname():
        return True
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    try:  # a killed child not yet reaped by its parent is a zombie: not alive
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def status_of(stored: str, owner: str | None, agent: str | None, pending: bool = False) -> SessionStatus:
    """The status word of a stored session (see ``igg.persistence.SessionStatus``); ``pending``: its last step
    is a review plan still waiting for a decision."""
    if stored == "finished":
        return "finished"
    if pending:
        return "awaiting_review"
    if agent == TOOL_AGENT:
        return "open"
    return "running" if owner_alive(owner) else "interrupted"


def session_info(r: tuple[Any, ...]) -> SessionInfo:
    """A session's row (``SESSION_COLS``) as its ``SessionInfo``."""
    return SessionInfo(
        session_id=r[0],
        status=status_of(r[1], r[12], r[4], bool(r[14])),
        stop_reason=r[2],
        goal=r[3],
        agent=r[4],
        options=json.loads(r[5] or "{}"),
        created_at=r[6],
        updated_at=r[7],
        last_step=r[8],
        last_iteration=r[9],
        nodes=r[10],
        edges=r[11],
        owner=r[12],
        result=json.loads(r[13]) if r[13] else None,
    )


def sessions(db: Database) -> list[SessionInfo]:
    """Every session of ``db``, most recently updated first."""
    query = f"SELECT {SESSION_COLS} FROM sessions ORDER BY updated_at DESC"
    rows = db.read(lambda c: c.execute(query).fetchall())
    return [session_info(r) for r in rows]


def session(db: Database, session_id: str) -> SessionInfo:
    """One session of ``db``; ``SessionNotFound`` naming the sessions it holds when it is not there."""

    def work(conn: Connection) -> SessionInfo:
        query = f"SELECT {SESSION_COLS} FROM sessions WHERE session_id = ?"
        row = conn.execute(query, (session_id,)).fetchone()
        if row is None:
            raise unknown(conn, db.location, session_id)
        return session_info(row)

    return db.read(work)


def unknown(conn: Connection, where: object, session_id: str) -> SessionError:
    """The error for a session ``where`` does not hold, naming (up to ten of) those it does."""
    known = [r[0] for r in conn.execute("SELECT session_id FROM sessions ORDER BY updated_at DESC LIMIT 10")]
    hint = f"; sessions there: {', '.join(known)}" if known else "; it holds no sessions"
    return SessionNotFound(f"no session {session_id!r} in {where}{hint}", session_id=session_id)


__all__ = ["SESSION_COLS", "owner_alive", "session", "session_info", "sessions", "status_of", "unknown"]
