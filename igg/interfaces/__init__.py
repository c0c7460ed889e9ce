"""Thin adapters over IGG's Python API: the command line, the MCP server and the HTTP API."""
