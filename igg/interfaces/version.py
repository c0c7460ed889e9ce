"""The installed package's version, as the servers announce it (OpenAPI ``info.version``, MCP
``serverInfo``)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    """IGG's version from its package metadata (``0+unknown`` for a source tree that was never installed)."""
    try:
        return version("igg")
    except PackageNotFoundError:
        return "0+unknown"
