"""The code agent fed as it goes: a request's source files are read, parsed and linked in growing batches.

``igg run --agent auto`` (and ``--agent code``) on a context of marked source files used to split, parse and
link every file before its first turn: a context of a million files meant minutes and gigabytes before the
first action, even for a run whose ``max_iterations`` lets it propose a handful of files. Here the files are
found lazily (one marker at a time), and the code agent (``igg.agents.code.CodeAgent``) starts on the first
batch; only when it has proposed everything of the files read so far is the next batch read (each batch three
times as large as everything read before it, so the links, each over every file read so far, cost at most 4/3
of the last one), and the facts of every file read so far are linked again, so a file of a later batch still
gets the edges that point into an earlier one. The code agent reads the graph, not its memory: what is there
already is never proposed again. The time and memory of a run follow the files it reaches, and it starts
within the first batch.

Until the whole context has been read, names the files read so far do not resolve are left out, not made
external nodes or ``external_supertypes`` (a later batch may define them); the last link, once every file is
read, is the code agent's usual one (a class proposed before it does not get ``external_supertypes`` later). A
Python ``from pkg.sub import x`` read before ``pkg/sub.py`` would link to ``pkg`` (its ``__init__``), so
before the last link no ``IMPORTS`` edge to a package is proposed; the last link proposes them, as the code
agent would. A context of up to ``FIRST_BATCH`` files is read whole before the first turn, exactly as the code
agent reads it. Python module names come from the paths of every Python file of the context (found by one scan
of the markers when the first Python file is read), so they are the same whichever batch a file is in.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from igg.agents.base import AgentCapabilities, Observation
from igg.agents.code.agent import CodeAgent
from igg.codemap.facts import FileFacts
from igg.codemap.link import Relation, link
from igg.codemap.sources import MARKER_RE, SourceFile, analyze, language_of, split_context, with_modules
from igg.errors import AgentFailed
from igg.record.logs import get_logger

log = get_logger("igg.code")

FIRST_BATCH = 512
"""Files read before the first turn (a context of up to this many files is read whole, as before)."""


def marked_files(text: str) -> Iterator[SourceFile]:
    """The files of a context with file markers, one at a time, as ``split_context`` finds them (a context
    without markers: ``split_context``'s single guess, or nothing)."""
    marks = MARKER_RE.finditer(text)
    current = next(marks, None)
    if current is None:
        yield from split_context(text)
        return
    while current is not None:
        following = next(marks, None)
        end = following.start() if following is not None else len(text)
        path = current.group(1).strip().strip("`'\"").replace("\\", "/").lstrip("./")
        yield SourceFile(path, text[current.end() : end].strip("\n") + "\n")
        current = following


def marked_paths(text: str) -> list[str]:
    """The paths of every source file marked in a context (the input of module naming)."""
    paths = (
        m.group(1).strip().strip("`'\"").replace("\\", "/").lstrip("./") for m in MARKER_RE.finditer(text)
    )
    return [p for p in paths if language_of(p) is not None]


def _package_import(relation: Relation) -> bool:
    """Whether ``relation`` is an ``IMPORTS`` of a package (its ``__init__``): before the whole context is
    read, ``from pkg.sub import x`` resolves to ``pkg`` when ``pkg/sub.py`` is in a later batch, so such edges
    wait for the last link."""
    return (
        relation.label == "IMPORTS"
        and relation.target.startswith("module:")
        and relation.target.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")
    )


def _full(obs: Observation) -> bool:
    """Whether the graph can take nothing more (max_nodes and max_edges reached): reading on is pointless."""
    if obs.state is None or obs.request is None:
        return False
    limits = obs.request.config.constraints
    return obs.state.node_count >= limits.max_nodes and obs.state.edge_count >= limits.max_edges


class StreamingCodeAgent(AgentCapabilities):
    """``CodeAgent`` over a request's context, reading the files in growing batches (see the module doc)."""

    name = "code"

    def __init__(self, context: str, *, first_batch: int = FIRST_BATCH) -> None:
        self._context = context
        self._files: Iterator[SourceFile] | None = marked_files(context)
        self._batch = max(1, first_batch)
        self._facts: list[FileFacts] = []
        self._names: dict[str, str] | None = None
        self.inner: CodeAgent | None = None
        self.batches = 0
        """How many batches were read (and linked) so far."""

    @property
    def reads_markdown(self) -> bool:
        return False

    @property
    def files_read(self) -> int:
        """Source files read and parsed so far."""
        return len(self._facts)

    def __call__(self, obs: Observation) -> dict[str, Any]:
        while True:
            if self.inner is None:
                self._read_batch()
            assert self.inner is not None
            turn = self.inner(obs)
            if not turn.get("finished") or self._files is None or _full(obs):
                return turn
            # everything read so far is proposed (its closing turn carries no actions): read on
            self.inner = None

    def _read_batch(self) -> None:
        files = self._files
        assert files is not None
        wanted, read = self._batch, 0
        for source in files:
            if source.language is None:
                continue
            module = self._module(source.path)
            if module is not None:
                source = SourceFile(source.path, source.text, module)
            self._facts.append(analyze(source))
            read += 1
            if read >= wanted:
                break
        else:
            self._files = None  # the context is read to its end
        if not self._facts:
            raise AgentFailed(
                "the code agent found no source file of a language it reads in the context (mark each file"
                " with a line such as '// File: src/App.java' or '# File: app/main.py')"
            )
        self.batches += 1
        self._batch = 3 * len(self._facts)  # after the next batch, four times what was read
        done = self._files is None
        model = link(self._facts, external_imports=done)
        if not done:  # what is unresolved now may be defined in a later batch: claim nothing about it yet
            for symbol in model.symbols.values():
                symbol.properties.pop("external_supertypes", None)
            for plan in model.files:  # an import of a package may name a submodule of a later batch
                plan.relations = [r for r in plan.relations if not _package_import(r)]
        self.inner = CodeAgent(model=model, external_imports=done)
        log.info(
            "code_context_read",
            files=len(self._facts),
            batch=self.batches,
            complete=done,
            symbols=len(model.symbols),
        )

    def _module(self, path: str) -> str | None:
        """The module name its language gives ``path`` among every file of the context (None: its analyzer
        names it from its text)."""
        if self._names is None:
            named = with_modules([SourceFile(p, "") for p in marked_paths(self._context)])
            self._names = {f.path: f.module for f in named if f.module is not None}
        return self._names.get(path)

    def summary(self) -> dict[str, Any]:
        """The code agent's counts over the files read so far."""
        out = (
            self.inner.summary()
            if self.inner is not None
            else {"files": 0, "symbols": 0, "relations": 0, "skipped": {}}
        )
        return {**out, "files": len(self._facts)}

    async def aclose(self) -> None:
        self._files = None
