"""The live progress view of ``igg run`` (and the other run commands) for a person at a terminal.

When standard error is a terminal, a rich progress bar shows the iteration, the graph's size and the
verdict counts while the log lines scroll above it. Otherwise the view does nothing: the log lines (one per
iteration, see ``igg.record.logs``) are the plain progress output.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any

from igg.agents.base import capabilities

if TYPE_CHECKING:
    from igg.record.records import Event


class ProgressView:
    """An ``on_event`` consumer drawing a progress bar; a no-op when ``enabled`` is false."""

    def __init__(
        self,
        *,
        enabled: bool | None = None,
        max_iterations: int = 0,
        console: Any = None,
        title: str = "igg run",
        agent: Any = None,
    ) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.max_iterations = max_iterations
        self.title = title
        """The bar's label (``igg run``, ``igg map-code``), followed by the session id."""
        self.agent = agent
        """The run's agent: one that reads the graph itself (``reads_markdown`` false, the static pass of
        ``map-code``) is not "asked"."""
        self.console = console
        """The rich console to draw on (default: standard error)."""
        self._progress: Any = None
        self._task: Any = None
        self._parse: Any = None
        self._accepted = self._rejected = 0

    def __enter__(self) -> ProgressView:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=self.console or Console(stderr=True),
                transient=True,
                redirect_stdout=False,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(self.title, total=self.max_iterations or None, status="")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
            self._progress = None

    def refresh(self) -> None:
        """Redraw now (the bar also redraws itself several times a second)."""
        if self._progress is not None:
            self._progress.refresh()

    def walked(self, walk: Any) -> None:
        """A code map walked its trees (a ``WalkResult``): show the parse of its files as a task of its
        own."""
        if self._progress is not None:
            self._parse = self._progress.add_task("parsing", total=len(walk.files), status="")

    def parsed(self, n: int) -> None:
        """``n`` more files parsed."""
        if self._progress is not None and self._parse is not None:
            self._progress.advance(self._parse, n)

    def doing(self) -> str:
        """What the current iteration waits for: the static analysis, or the agent's answer."""
        if self.agent is not None and not capabilities(self.agent).reads_markdown:
            return "applying the static analysis"
        return "asking the agent"

    def __call__(self, event: Event) -> None:
        if self._progress is None:
            return
        data = event.data
        if event.kind == "run_started":
            if self._parse is not None:  # the parse is over when the run starts
                self._progress.remove_task(self._parse)
                self._parse = None
            self._progress.update(
                self._task,
                description=f"{self.title} {event.session_id}",
                completed=data["start_iteration"] - 1,
                total=data["max_iterations"],
            )
        elif event.kind == "iteration_started":
            chunk = f" · {data['chunk']}" if data.get("chunk") else ""
            self._progress.update(self._task, status=f"iteration {event.iteration}{chunk} · {self.doing()}")
        elif event.kind == "iteration_finished":
            self._accepted += data["accepted"]
            self._rejected += data["rejected"]
            self._progress.update(
                self._task,
                completed=event.iteration,
                status=f"nodes {data['nodes']} · edges {data['edges']} · accepted {self._accepted} · "
                f"rejected {self._rejected}",
            )
