"""Structured logging with structlog: configured by entry points only, fed by run events.

``configure_logging("console" | "json")`` sets structlog up to write to standard error (a readable console
line by default, one JSON object per line with ``json``); nothing is configured at import time. IGG's command
line asks for it ``when_needed``: structlog is then imported and configured by the first event at the level
asked (a command that logs nothing never loads it).
``EventLogger`` turns a run's ``Event``s into log events: one ``iteration_finished`` per iteration with
session_id, iteration, proposed/accepted/rejected_by_code, tokens and milliseconds, plus ``run_started``
and ``run_finished`` (individual verdicts at debug level). Keys that name secrets are redacted, and so are
values that look like API keys, whatever their key.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import MutableMapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from igg.record.records import Event

# structlog (and the rich it loads) is imported by the functions that configure or use it, not here: the
# command line's start-up and a library that never configures structlog do not pay for it.

LogFormat = Literal["console", "json"]
LOG_FORMATS: tuple[str, ...] = ("console", "json")

_SECRET_KEY = re.compile(
    r"(?i)(api[_-]?key|password|passwd|secret|authorization|bearer|credential|auth_token)"
)
_SECRET_VALUE = re.compile(r"\b(sk-[A-Za-z0-9_-]{8,}|Bearer\s+\S{8,})")
REDACTED = "[redacted]"


class _StderrLogger:
    """Writes each rendered line to the *current* ``sys.stderr`` (so a live progress view can interleave)."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def _stderr_factory(*_args: Any) -> _StderrLogger:
    return _StderrLogger()


def redact_secrets(
    _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: never let a secret reach a log line."""
    for key, value in list(event_dict.items()):
        if _SECRET_KEY.search(key):
            event_dict[key] = REDACTED
        elif isinstance(value, str) and _SECRET_VALUE.search(value):
            event_dict[key] = _SECRET_VALUE.sub(REDACTED, value)
    return event_dict


def configure_logging(
    fmt: LogFormat | str = "console",
    *,
    level: str = "info",
    colors: bool | None = None,
    when_needed: bool = False,
) -> None:
    """Configure structlog for an entry point: ``console`` (readable) or ``json`` lines on standard error.

    ``when_needed`` (IGG's command line): when structlog is not imported yet, the settings wait for the first
    event IGG logs at ``level`` or above, or the first ``configured_structlog()``, so a command that logs
    nothing (a no-op ``igg map-code --update``) never imports structlog and the rich it loads. Without it
    structlog is configured at once, for an application that then logs through structlog itself."""
    global _pending
    if fmt not in LOG_FORMATS:
        raise ValueError(f"unknown log format {fmt!r}; use one of {', '.join(LOG_FORMATS)}")
    _pending = (fmt, logging.getLevelNamesMapping()[level.upper()], colors)
    if not when_needed or "structlog" in sys.modules:  # already in use (a test capturing events): at once
        configured_structlog()


_pending: tuple[str, int, bool | None] | None = None
"""The settings of the last ``configure_logging`` not applied yet: (format, level number, colors)."""


def configured_structlog() -> ModuleType:
    """structlog, configured as ``configure_logging`` asked when it has not been yet. What logs through
    structlog itself (not through ``get_logger``) asks for it here."""
    global _pending
    import structlog

    if _pending is None:
        return structlog
    fmt, level, colors = _pending
    _pending = None
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(sort_keys=False)
    else:
        use_colors = sys.stderr.isatty() if colors is None else colors
        renderer = structlog.dev.ConsoleRenderer(colors=use_colors)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact_secrets,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=_stderr_factory,
        cache_logger_on_first_use=False,
    )
    return structlog


class LibraryLogger:
    """The logger IGG's library modules use: structlog's when an application has configured structlog (as
    IGG's own entry points do), else the standard library's ``logging`` under the same name.

    structlog unconfigured would print to standard output, and a library must not write there; through
    ``logging``, an application that set up no logging sees only warnings and errors (on standard error,
    Python's last-resort handler), and one that did gets IGG's events like any other library's.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def _emit(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if _pending is not None:  # an entry point configured logging, structlog not loaded yet
            if level < _pending[1]:
                return  # below the level asked for: structlog would drop it
            configured_structlog()
        structlog = sys.modules.get("structlog")  # not imported yet: nobody configured it
        if structlog is not None and structlog.is_configured():
            getattr(structlog.get_logger(self.name), logging.getLevelName(level).lower())(event, **fields)
            return
        logger = logging.getLogger(self.name)
        if logger.isEnabledFor(level):
            redacted = redact_secrets(None, "", dict(fields))
            text = " ".join([event, *(f"{k}={v!r}" for k, v in redacted.items())])
            logger.log(level, text, extra={"igg_event": event})

    def debug(self, event: str, **fields: Any) -> None:
        self._emit(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._emit(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._emit(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._emit(logging.ERROR, event, fields)


def get_logger(name: str) -> LibraryLogger:
    """A library module's logger (see ``LibraryLogger``): never standard output, no configuration needed."""
    return LibraryLogger(name)


class EventLogger:
    """An ``on_event`` consumer that logs a run: one ``iteration_finished`` event per iteration."""

    def __init__(self, logger: Any = None) -> None:
        self.log = logger or configured_structlog().get_logger("igg")

    def __call__(self, event: Event) -> None:
        data = event.data
        if event.kind == "iteration_finished":
            fields: dict[str, Any] = {
                "session_id": event.session_id,
                "iteration": event.iteration,
                "proposed": data["proposed"],
                "accepted": data["accepted"],
                "rejected": data["rejected"],
                "rejected_by_code": data["rejected_by_code"],
                "tokens": data["tokens"],
                "observation_tokens": data["observation_tokens"],
                "ms": data["ms"],
                "nodes": data["nodes"],
                "edges": data["edges"],
            }
            if data.get("parse_error"):
                fields["invalid_turn"] = data["parse_error"]["code"]
            if data.get("truncated"):
                fields["truncated"] = True
            self.log.info("iteration_finished", **fields)
        elif event.kind == "run_started":
            self.log.info(
                "run_started",
                session_id=event.session_id,
                start_iteration=data["start_iteration"],
                max_iterations=data["max_iterations"],
                chunks=data["chunks"],
                nodes=data["nodes"],
                edges=data["edges"],
                resumed=data["resumed"],
            )
        elif event.kind == "run_finished":
            extra = {"error": data["error"]} if data.get("error") else {}
            self.log.info(
                "run_finished",
                session_id=event.session_id,
                stop_reason=data["stop_reason"],
                iterations=data["iterations"],
                nodes=data["nodes"],
                edges=data["edges"],
                accepted=data["actions"]["accepted"],
                rejected=data["actions"]["rejected"],
                tokens=data["tokens"]["total"],
                ms=data["elapsed_ms"],
                **extra,
            )
        elif event.kind == "action_verdict" and not data["accepted"]:
            self.log.debug(
                "action_rejected",
                session_id=event.session_id,
                iteration=event.iteration,
                index=data["index"],
                action=data["action"],
                code=data.get("code"),
            )
