"""``igg view [SESSION]``: look at graphs in a browser.

Serves the graph viewer (the same HTTP app as ``igg serve``, page at ``/ui/``) over the session store and
prints its address (``--open`` also opens it): the sessions, and for one session its graph (pan, zoom,
search by name, filters and colours by type, details with provenance), its iterations with every rejection,
a slider back through the iterations, and live growth while a run goes on (in this server or in another
process writing the same store). Without ``IGG_API_TOKEN`` it listens on loopback only; with it, the page
asks for the token once.

``igg view SESSION --export html:PATH`` writes the viewer with that session's graph (and iterations) into
one self-contained HTML file that opens offline, and exits. SESSION may also be a saved graph document
(``graph.json``), as for ``igg export``.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import quote

from igg.errors import IGGError, SessionError, WorkspaceError
from igg.interfaces.cli import EXIT_INVALID, EXIT_OK, workspace_options
from igg.interfaces.cli.common import add_time_options, state_as_of
from igg.interfaces.cli.listen import address, listen_or_explain
from igg.interfaces.http.security import DEFAULT_MAX_BODY, check_bind, token_from_env

DEFAULT_PORT = 8765


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "view",
        help="look at graphs in a browser (live viewer, or a self-contained HTML file)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "session", nargs="?", help="the session to show first (or, with --export, a graph document)"
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="bind address (default 127.0.0.1; others need a token)"
    )
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument(
        "--export",
        metavar="html:PATH",
        help="write SESSION as one self-contained HTML file instead of serving, then exit",
    )
    p.add_argument("--iteration", type=int, metavar="N", help="with --export: the graph after iteration N")
    add_time_options(p)
    workspace_options.add_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.export is not None:
        return export(args)
    for option, value in (
        ("--iteration", args.iteration),
        ("--as-of", args.as_of),
        ("--known-at", args.known_at),
    ):
        if value is not None:
            print(
                f"igg: {option} applies to --export; in the page, the slider steps through iterations",
                file=sys.stderr,
            )
            return EXIT_INVALID
    return serve(args)


def export(args: argparse.Namespace) -> int:
    """``--export html:PATH``: one self-contained page for SESSION."""
    fmt, _, target = str(args.export).partition(":")
    if fmt != "html" or not target:
        print(
            f"igg: --export takes html:PATH (e.g. --export html:graph.html), not {args.export!r}",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if not args.session:
        print("igg: --export needs the SESSION (or graph document) to write", file=sys.stderr)
        return EXIT_INVALID
    from igg.export.html import write_html

    state, metadata, iterations, context = _source(args)
    path = Path(target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        summary = write_html(state, path, metadata=metadata, iterations=iterations, context=context)
    except OSError as exc:
        raise IGGError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"html: {path} ({summary['nodes']} nodes, {summary['edges']} edges, {summary['bytes']:,} bytes)")
    return EXIT_OK


def _source(args: argparse.Namespace) -> tuple[Any, dict[str, Any], list[dict[str, Any]], Any]:
    """(state, metadata, iteration summaries, context chunks) of SESSION: a graph document file, or a stored
    session (whose context shows each piece of evidence in its passage)."""
    if Path(args.session).is_file():
        if args.iteration is not None or args.known_at is not None:
            raise IGGError("--iteration and --known-at apply to a stored session, not a graph document")
        from igg.export import document_to_state, load_document

        doc = load_document(args.session)
        return (
            state_as_of(document_to_state(doc, source=str(args.session)), args.as_of),
            dict(doc.metadata),
            [],
            None,
        )
    if args.memory:
        raise IGGError("--export reads a stored session; --memory has none")
    from igg.store import SessionStore, resolve_store_path
    from igg.view.data import context_chunks, iteration_summaries

    store = SessionStore(resolve_store_path(args.store))
    try:
        info = store.session(args.session)
        step = store.step_of_iteration(args.session, args.iteration) if args.iteration is not None else None
        from igg.store.session_graph import time_arg

        told = time_arg("--known-at", args.known_at)
        if told is not None:
            known = store.step_known_at(args.session, told.timestamp())
            step = known if step is None else min(step, known)
        request, state, _ = store.load_state(args.session, upto_step=step)
        state = state_as_of(state, args.as_of)
        steps = store.steps(args.session)
    finally:
        store.close()
    upto = args.iteration if args.iteration is not None else info.last_iteration
    iterations = iteration_summaries(steps, upto)
    metadata = {
        "session_id": info.session_id,
        "goal": info.goal,
        "status": info.status,
        "stop_reason": info.stop_reason,
        "iteration": upto,
    }
    return state, metadata, iterations, context_chunks(request)


def serve(args: argparse.Namespace) -> int:
    """Serve the viewer until interrupted."""
    import uvicorn

    from igg.interfaces.http.app import build_app
    from igg.interfaces.http.security import bearer_guard
    from igg.interfaces.http.server import uvicorn_config
    from igg.interfaces.http.ui_auth import with_ui_login

    workspace_options.configure_logging(args)
    token = token_from_env()
    try:
        check_bind(args.host, token)
    except WorkspaceError as exc:
        print(f"igg: {exc.message}", file=sys.stderr)
        return EXIT_INVALID
    workspace = workspace_options.build_workspace(args)
    if args.session:
        try:
            workspace.get(args.session)
        except WorkspaceError as exc:
            print(f"igg: {exc.message}", file=sys.stderr)
            return EXIT_INVALID
        except SessionError as exc:
            print(f"igg: {exc}", file=sys.stderr)
            return EXIT_INVALID
    sock = listen_or_explain(args.host, args.port)
    if sock is None:
        return EXIT_INVALID
    app = with_ui_login(bearer_guard(build_app(workspace), token, DEFAULT_MAX_BODY), token)
    url = f"{address(sock)}/ui/" + (f"#session={quote(args.session, safe='')}" if args.session else "")
    print(url, flush=True)
    print(
        "igg: graph viewer "
        + ("(log in with the token in IGG_API_TOKEN); " if token else "")
        + "Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    if args.open:
        webbrowser.open(url)
    server = uvicorn.Server(uvicorn_config(app))  # igg serve's deadlines for slow clients
    server.run(sockets=[sock])
    return EXIT_OK
