"""One log format on standard error for the servers: records of libraries that log through the standard
library (the MCP SDK, uvicorn) are rendered by the processors IGG's entry point gave structlog."""

from __future__ import annotations

import logging

from igg.record.logs import configured_structlog


def route_stdlib_logging(level: int = logging.WARNING) -> None:
    """Render standard-library log records (``level`` and above) like IGG's own events: the same renderer
    (console or JSON lines), timestamps and secret redaction, on standard error (never stdout, which is the
    protocol stream of MCP over stdio). Replaces handlers others installed on the root logger, such as the
    MCP SDK's rich handler. Does nothing when structlog is not configured (IGG used as a library)."""
    structlog = configured_structlog()
    if not structlog.is_configured():
        return
    processors = structlog.get_config()["processors"]
    handler = logging.StreamHandler()  # standard error
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *processors[:-1]],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, processors[-1]],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
