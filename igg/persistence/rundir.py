"""``--out DIR``: a ``Recorder`` that writes a run's files as it goes.

* ``records.jsonl`` — one ``IterationRecord`` per line (``IterationRecord.to_dict``), written after each
  iteration;
* ``transcript.jsonl`` — every agent turn in the scripted-transcript format, so
  ``igg run REQUEST --agent script:DIR/transcript.jsonl`` replays the run exactly;
* ``graph.json`` — the final graph as IGG's JSON document (with provenance), written at the end;
* ``summary.json`` — the ``--json`` summary, written at the end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from igg.errors import IGGError
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.io.encodable import first_unencodable
from igg.io.files import open_stream, write_file
from igg.models.request import Request
from igg.record.records import IterationRecord, RunResult, transcript_line
from igg.record.steps import StepRecord

OUTPUT_FILES = ("graph.json", "records.jsonl", "transcript.jsonl", "summary.json")


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if first_unencodable(text) is not None:  # a lone surrogate: its \\u escape reads back the same
        text = json.dumps(value, ensure_ascii=True, default=str)
    return text


class RunDirectory:
    """Writes ``records.jsonl``, ``transcript.jsonl``, ``graph.json`` and ``summary.json`` into a
    directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.request: Request | None = None
        self._records: IO[str] | None = None
        self._transcript: IO[str] | None = None

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        """Create the directory and start both line files (with the prior records of a resumed run)."""
        self.request = request
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self._records = open_stream(self.path / "records.jsonl")
            self._transcript = open_stream(self.path / "transcript.jsonl")
        except (OSError, IGGError) as exc:
            self.close()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise IGGError(f"cannot write the output directory {self.path}: {reason}") from None
        for record in records:
            self._write(record)

    def record(self, record: IterationRecord) -> None:
        """Append one iteration to both line files."""
        self._write(record)

    def keep(
        self, step: StepRecord, mutations: Sequence[Mutation], state: GraphState, *, snapshot: bool = False
    ) -> None:
        """Steps other than iterations are not kept here."""

    def finish(self, result: RunResult) -> None:
        """Write the graph document and the summary; close the line files."""
        self.close()
        self.write_result(result)

    def write_result(self, result: RunResult) -> None:
        """(Re)write ``graph.json`` and ``summary.json`` — e.g. again after exports were added."""
        assert self.request is not None
        document = result.state.to_document(
            self.request.config.schema_, metadata=document_metadata(self.request, result), provenance=True
        )
        try:
            write_file(
                self.path / "graph.json",
                document.model_dump_json(by_alias=True, exclude_none=True, indent=1).encode("utf-8"),
            )
            write_file(self.path / "summary.json", (_dumps(result.summary()) + "\n").encode("utf-8"))
        except IGGError as exc:
            raise IGGError(f"cannot write the output directory {self.path}: {exc}") from None

    def close(self) -> None:
        """Close the line files (idempotent)."""
        for f in (self._records, self._transcript):
            if f is not None:
                f.close()
        self._records = self._transcript = None

    def _write(self, record: IterationRecord) -> None:
        assert self._records is not None and self._transcript is not None
        self._records.write(_dumps(record.to_dict()) + "\n")
        self._records.flush()
        line = transcript_line(record)
        if line is not None:
            self._transcript.write(_dumps(line) + "\n")
            self._transcript.flush()


def document_metadata(request: Request, result: RunResult) -> dict[str, Any]:
    """The metadata IGG puts in a run's graph document."""
    return {
        "session_id": result.session_id,
        "goal": request.goal_prompt,
        "stop_reason": result.stop_reason,
        "iterations": result.iterations,
        "open_todos": list(result.open_todos),
    }
