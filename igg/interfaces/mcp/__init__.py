"""The MCP adapter (``igg mcp``)."""
