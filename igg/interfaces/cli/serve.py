"""``igg serve``: the workspace as an HTTP JSON API (FastAPI + uvicorn), with an OpenAPI document.

Without ``IGG_API_TOKEN`` it listens on loopback only and answers loopback host names only (more with
``--allowed-host``); with it, every request needs ``Authorization: Bearer <token>``. Clients that stall
(headers, body, reading) are dropped after the ``--*-timeout`` deadlines.
"""

from __future__ import annotations

import argparse
import sys

from igg.errors import WorkspaceError
from igg.interfaces.cli import EXIT_INVALID, workspace_options
from igg.interfaces.cli.listen import address, listen_or_explain
from igg.interfaces.http.security import (
    DEFAULT_MAX_BODY,
    HOSTS_ENV,
    HostPolicy,
    check_bind,
    hosts_from_env,
    token_from_env,
)
from igg.interfaces.http.server import Timeouts


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="serve IGG as an HTTP JSON API", description=__doc__)
    p.add_argument(
        "--host", default="127.0.0.1", help="bind address (default 127.0.0.1; others need a token)"
    )
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument(
        "--max-body",
        type=int,
        default=DEFAULT_MAX_BODY,
        metavar="BYTES",
        help=f"largest request body accepted (default {DEFAULT_MAX_BODY})",
    )
    add_listener_options(p)
    workspace_options.add_options(p)
    p.set_defaults(handler=run)


def add_listener_options(p: argparse.ArgumentParser) -> None:
    """``--allowed-host`` and the timeouts, shared with ``igg mcp --transport http``."""
    defaults = Timeouts()
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help=f"a Host name to answer besides loopback names (repeatable; '*' for any; also "
        f"{HOSTS_ENV}, comma-separated). Without a token only loopback names are answered",
    )
    p.add_argument(
        "--header-timeout",
        type=float,
        default=defaults.header,
        metavar="S",
        help=f"seconds a client has to send a request's headers (default {defaults.header:g})",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=defaults.body,
        metavar="S",
        help=f"seconds a client has to send a request's body (default {defaults.body:g})",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=defaults.idle,
        metavar="S",
        help=f"seconds an idle keep-alive connection stays open (default {defaults.idle:g})",
    )


def listener_settings(args: argparse.Namespace, token: str | None) -> tuple[HostPolicy, Timeouts]:
    """The host policy and timeouts the options describe; ``WorkspaceError`` when a value is unusable."""
    for name in ("header_timeout", "body_timeout", "idle_timeout"):
        if not getattr(args, name) > 0:
            raise WorkspaceError(
                "INVALID_ARGUMENTS",
                f"--{name.replace('_', '-')} must be a positive number of seconds, not {getattr(args, name)}",
            )
    policy = HostPolicy.build([*args.allowed_host, *hosts_from_env()], token=token)
    return policy, Timeouts(header=args.header_timeout, body=args.body_timeout, idle=args.idle_timeout)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from igg.interfaces.http.app import build_app
    from igg.interfaces.http.security import bearer_guard
    from igg.interfaces.http.server import uvicorn_config
    from igg.interfaces.http.ui_auth import with_ui_login

    workspace_options.configure_logging(args)
    token = token_from_env()
    try:
        check_bind(args.host, token)
        hosts, timeouts = listener_settings(args, token)
    except WorkspaceError as exc:
        print(f"igg: {exc.message}", file=sys.stderr)
        return EXIT_INVALID
    sock = listen_or_explain(args.host, args.port)  # before anything says "serving": a busy port is exit 2
    if sock is None:
        return EXIT_INVALID
    app = with_ui_login(
        bearer_guard(build_app(workspace_options.build_workspace(args)), token, args.max_body, hosts=hosts),
        token,
    )
    print(
        f"igg: serving {address(sock)} (token {'required' if token else 'not set: loopback only'}"
        f"; answers {hosts.describe()}; OpenAPI at /openapi.json, graph viewer at /ui/)",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.Server(uvicorn_config(app, timeouts=timeouts)).run(sockets=[sock])
    return 0
