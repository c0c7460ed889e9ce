"""``igg tools --format openai``: print the workspace operations as tool definitions (JSON on stdout).

``openai``: OpenAI function-calling definitions (pass the list as ``tools=`` to chat completions);
``mcp``: name, description, annotations and input schema per tool, as ``igg mcp`` lists them.
"""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "tools", help="print IGG's tool definitions (OpenAI function calling, MCP)", description=__doc__
    )
    p.add_argument("--format", choices=("openai", "mcp"), default="openai", help="definition format")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.workspace.toolschema import mcp_tools, openai_tools

    out = openai_tools() if args.format == "openai" else mcp_tools()
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0
