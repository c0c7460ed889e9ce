"""``igg serve``: the workspace as an HTTP JSON API (FastAPI + uvicorn), with an OpenAPI document.

Without ``IGG_API_TOKEN`` it listens on loopback only; with it, every request needs
``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import argparse
import sys

from igg.errors import WorkspaceError
from igg.interfaces.cli import EXIT_INVALID, workspace_options
from igg.interfaces.http.security import DEFAULT_MAX_BODY, check_bind, token_from_env


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="serve IGG as an HTTP JSON API", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1; others need a token)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument("--max-body", type=int, default=DEFAULT_MAX_BODY, metavar="BYTES",
                   help=f"largest request body accepted (default {DEFAULT_MAX_BODY})")
    workspace_options.add_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from igg.interfaces.http.app import build_app
    from igg.interfaces.http.security import bearer_guard
    from igg.view.auth import with_ui_login

    workspace_options.configure_logging(args)
    token = token_from_env()
    try:
        check_bind(args.host, token)
    except WorkspaceError as exc:
        print(f"igg: {exc.message}", file=sys.stderr)
        return EXIT_INVALID
    app = with_ui_login(bearer_guard(build_app(workspace_options.build_workspace(args)), token, args.max_body), token)
    print(f"igg: serving http://{args.host}:{args.port} (token {'required' if token else 'not set: loopback only'}"
          f"; OpenAPI at /openapi.json, graph viewer at /ui/)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
