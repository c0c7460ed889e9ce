"""Turning what a user hands ``igg batch`` into jobs: request files, JSON Lines of requests, source trees.

* a **folder** holds request files (``*.json``, read in name order; other files are ignored);
* a **JSON Lines file** (``*.jsonl``) holds one request per line;
* a **request file** (``*.json``) is one request.

Every request is checked on the client before anything runs (exit 2 naming every bad file or line). A
request without a ``session_id`` gets one derived from where it came from and what it says
(``<file stem>-<hash>``, ``<file stem>-<line>-<hash>``), so running the same batch again finds its sessions
in the store instead of starting duplicates. Session ids must be unique within a batch.

``--agent script:PATH`` replays a transcript: PATH is one transcript for every request, or a folder holding
``<session_id>.jsonl`` or ``<request file stem>.jsonl`` per request. The client reads the transcripts, so
workers need none of these files.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from igg.agents.scripted import ScriptedAgent
from igg.batch.tasks import SessionJob, TreeJob
from igg.errors import Problem, RequestInvalid
from igg.io.inputs import parse_json, read_text
from igg.request.load import load_request

SCRIPT_PREFIX = "script:"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def request_jobs(inputs: Sequence[str | Path], *, agent: str) -> list[SessionJob]:
    """One job per request found in ``inputs`` (folders, ``.jsonl`` files, ``.json`` files); raises
    ``RequestInvalid`` listing every problem (unreadable input, invalid request, duplicate session id,
    missing transcript)."""
    problems: list[Problem] = []
    found: list[tuple[str, str, dict[str, Any]]] = []  # (source, default id, payload)
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
            if not files:
                problems.append(
                    Problem(
                        str(path),
                        "the folder holds no request files (*.json); give a JSON Lines "
                        "file of requests by its name",
                    )
                )
            for f in files:
                _read_file(f, found, problems)
        elif path.is_file():
            _read_file(path, found, problems)
        else:
            problems.append(
                Problem(
                    str(path),
                    "no such file or folder; give request files (*.json), JSON Lines "
                    "files of requests (*.jsonl) or folders of them",
                )
            )
    jobs: list[SessionJob] = []
    for source, default_id, payload in found:
        payload.setdefault("session_id", default_id)
        try:
            request = load_request(payload, source_name=source)
        except RequestInvalid as exc:
            problems += [
                Problem(f"{source}: {p.path}" if p.path else source, p.message) for p in exc.problems
            ]
            continue
        jobs.append(
            SessionJob(
                session_id=request.session_id or default_id, request=request, agent=agent, source=source
            )
        )
    if not found and not problems:
        problems.append(Problem("REQUESTS", "no requests given"))
    _check_unique([(j.session_id, j.source) for j in jobs], problems)
    if not problems and agent.startswith(SCRIPT_PREFIX):
        _attach_transcripts(jobs, agent[len(SCRIPT_PREFIX) :], problems)
    if problems:
        raise RequestInvalid(problems, source="the batch")
    return jobs


def tree_jobs(
    paths: Sequence[str | Path], *, agent: str = "code", options: dict[str, Any] | None = None
) -> list[TreeJob]:
    """One mapping session per source tree. The session id is ``map-<folder name>-<hash of its absolute
    path>``, so mapping the same trees again finds their sessions in the store."""
    problems: list[Problem] = []
    jobs: list[TreeJob] = []
    for item in paths:
        path = Path(item)
        if not path.exists():
            problems.append(Problem(str(path), "no such file or directory"))
            continue
        absolute = path.resolve()
        session_id = f"map-{_safe(absolute.name or 'root')}-{_digest(str(absolute))}"
        jobs.append(
            TreeJob(
                session_id=session_id,
                paths=[str(absolute)],
                agent=agent,
                options=dict(options or {}),
                source=str(path),
            )
        )
    if not jobs and not problems:
        problems.append(Problem("DIR", "no source trees given"))
    _check_unique([(j.session_id, j.source) for j in jobs], problems)
    if problems:
        raise RequestInvalid(problems, source="the batch")
    return jobs


def _read_file(path: Path, found: list[tuple[str, str, dict[str, Any]]], problems: list[Problem]) -> None:
    try:
        text = read_text(path, source=str(path))
    except RequestInvalid as exc:
        problems += [Problem(str(path), p.message) for p in exc.problems]
        return
    stem = _safe(path.stem)
    if path.suffix == ".jsonl":
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if not lines:
            problems.append(Problem(str(path), "the file holds no requests (one JSON object per line)"))
        for n, line in lines:
            _add(f"{path}:{n}", f"{stem}-{n}-{_digest(line)}", line, found, problems)
    else:
        _add(str(path), f"{stem}-{_digest(text)}", text, found, problems)


def _add(
    source: str,
    default_id: str,
    text: str,
    found: list[tuple[str, str, dict[str, Any]]],
    problems: list[Problem],
) -> None:
    try:
        payload = parse_json(text, source=source)
    except RequestInvalid as exc:
        problems += [Problem(source, p.message) for p in exc.problems]
        return
    if not isinstance(payload, dict):
        problems.append(Problem(source, f"a request must be a JSON object, got {type(payload).__name__}"))
        return
    found.append((source, default_id, payload))


def _check_unique(ids: list[tuple[str, str]], problems: list[Problem]) -> None:
    counts = Counter(sid for sid, _ in ids)
    for sid, n in counts.items():
        if n > 1:
            where = ", ".join(src for s, src in ids if s == sid)
            problems.append(
                Problem(
                    sid,
                    f"{n} requests have this session_id ({where}); session ids must be unique within a batch",
                )
            )


def _attach_transcripts(jobs: list[SessionJob], where: str, problems: list[Problem]) -> None:
    if not where:
        problems.append(
            Problem("--agent", "script: needs a transcript file or a folder of <session_id>.jsonl")
        )
        return
    base = Path(where)
    cache: dict[Path, list[dict[str, Any]]] = {}
    for job in jobs:
        if base.is_dir():
            stem = Path(job.source.rsplit(":", 1)[0] if ".jsonl:" in job.source else job.source).stem
            candidates = [base / f"{job.session_id}.jsonl", base / f"{stem}.jsonl"]
            path = next((c for c in candidates if c.is_file()), None)
            if path is None:
                problems.append(
                    Problem(
                        job.source,
                        f"no transcript for session {job.session_id!r} in {base} "
                        f"(looked for {candidates[0].name} and {candidates[1].name})",
                    )
                )
                continue
        else:
            path = base
        if path not in cache:
            try:
                cache[path] = ScriptedAgent.from_path(path).turns
            except RequestInvalid as exc:
                problems += [
                    Problem(f"{path}: {p.path}" if p.path else str(path), p.message) for p in exc.problems
                ]
                cache[path] = []
                continue
        job.turns = cache[path]
        job.agent = f"{SCRIPT_PREFIX}{path.resolve()}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _safe(name: str) -> str:
    return _UNSAFE.sub("-", name).strip("-") or "request"
