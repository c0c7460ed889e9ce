"""``igg mcp``: serve the workspace as an MCP server, over stdio (default) or streamable HTTP at /mcp.

Over HTTP the listener is guarded like ``igg serve``: loopback only without ``IGG_API_TOKEN``, loopback host
names only unless ``--allowed-host`` adds more, and deadlines for slow clients.
"""

from __future__ import annotations

import argparse
import sys

from igg.errors import WorkspaceError
from igg.interfaces.cli import EXIT_INVALID, workspace_options
from igg.interfaces.cli.listen import address, listen_or_explain
from igg.interfaces.cli.serve import add_listener_options, listener_settings
from igg.interfaces.http.security import DEFAULT_MAX_BODY, bearer_guard, check_bind, token_from_env


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "mcp", help="serve IGG as an MCP server (stdio or streamable HTTP)", description=__doc__
    )
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: for an MCP client that launches igg) or streamable HTTP",
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    add_listener_options(p)
    workspace_options.add_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    early = None
    if args.transport == "stdio":  # answer the client's handshake before the heavy imports (start-up time)
        from igg.interfaces.mcp.handshake import answer_early
        from igg.interfaces.version import package_version

        early = answer_early(name="igg", version=package_version())
    from igg.interfaces.mcp.server import build_server, run_http, run_stdio

    workspace_options.configure_logging(args)
    token = token_from_env()
    try:
        hosts, timeouts = listener_settings(args, token)
        if args.transport == "http":
            check_bind(args.host, token)
    except WorkspaceError as exc:
        print(f"igg: {exc.message}", file=sys.stderr)
        return EXIT_INVALID
    if args.transport == "stdio":
        run_stdio(build_server(workspace_options.build_workspace(args)), early)
        return 0
    sock = listen_or_explain(args.host, args.port)  # before anything says "serving": a busy port is exit 2
    if sock is None:
        return EXIT_INVALID
    server = build_server(workspace_options.build_workspace(args))
    print(
        f"igg: MCP over streamable HTTP at {address(sock)}/mcp (token "
        f"{'required' if token else 'not set: loopback only'}; answers {hosts.describe()})",
        file=sys.stderr,
        flush=True,
    )
    run_http(
        server,
        host=args.host,
        port=args.port,
        max_body=DEFAULT_MAX_BODY,
        timeouts=timeouts,
        wrap=lambda app: bearer_guard(app, token, DEFAULT_MAX_BODY, hosts=hosts),
        sock=sock,
    )
    return 0
