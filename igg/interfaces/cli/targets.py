"""Checking ``--export`` file targets before a run starts, so a bad target costs nothing.

A run writes its exports after its last iteration; a target that cannot be written would then fail after
all the work (an LLM's tokens, a long static pass). ``check_export_targets`` finds the problems that can be
known in advance: a target that is a directory, a directory in the way that is a file, a directory that
is not writable. A missing directory is fine when it can be created (exports create it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from igg.errors import Problem, RequestInvalid


def check_export_targets(specs: Sequence[Any], out: Path | None) -> None:
    """Raise ``RequestInvalid`` (exit 2) naming every file target of ``specs`` that cannot be written.

    ``specs`` are ``igg.export.ExportSpec``s; a file target defaults to ``out/graph.<ext>`` (else the working
    directory), as ``perform_exports`` writes it. Neo4j targets are URIs, checked when the spec is parsed.
    """
    from igg.export.spec import DEFAULT_FILES

    problems = []
    for spec in specs:
        if spec.format == "neo4j" or getattr(spec, "base", None) is not None:
            continue
        path = Path(spec.target) if spec.target else (out or Path.cwd()) / DEFAULT_FILES[spec.format]
        reason = unwritable(path, DEFAULT_FILES[spec.format])
        if reason:
            problems.append(Problem("--export", f"{spec}: {reason}"))
    if problems:
        raise RequestInvalid(problems, source="the command line")


def unwritable(path: Path, example: str = "graph.json") -> str | None:
    """Why the file ``path`` could not be written (None when it can, as far as can be told beforehand);
    ``example`` is the file name suggested inside a directory given by mistake."""
    if path.is_dir():
        return f"{path} is a directory; give a file path, e.g. {path / example}"
    if path.exists():
        return None if os.access(path, os.W_OK) else f"{path} is not writable"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent  # the nearest directory that exists: the export creates the rest
    if not parent.is_dir():
        return f"{parent} is a file, so {path} cannot be created"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"the directory {parent} is not writable"
    return None
