"""``igg check [PATH... | SESSION]``: judge the repository's dependency rules, for people and for CI.

The rules come from ``igg.toml`` (or ``[tool.igg]`` in ``pyproject.toml``) in PATH or the working directory,
or ``--rules FILE``. A PATH is mapped on the spot (only files the facts cache beside ``--store`` lacks are
parsed); a SESSION is a stored map. ``--since REF`` judges the tree at that commit too and lists the
dependencies the change added and removed; ``--new-only`` (the ratchet) fails only on violations the change
introduces. Output: text, ``--json``, ``--format github`` (annotations) and ``--sarif FILE`` (code scanning).
Exit codes: 0 no violation (that fails), 1 violations, 2 a bad rules file or command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from igg.errors import Problem, RequestInvalid
from igg.interfaces.cli import EXIT_FAILURE, EXIT_OK, igg_version
from igg.interfaces.cli.common import is_session_id
from igg.interfaces.cli.storecli import STORE_HELP
from igg.store import STORE_ENV, resolve_store_path
from igg.store.location import store_exists, store_text

if TYPE_CHECKING:
    from igg.rules.report import CheckReport, Hop

FORMATS = ("text", "json", "github")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "check",
        help="judge the dependency rules (igg.toml) on a tree or a session",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="PATH|SESSION",
        help="source trees (default: the working directory) or one stored session id",
    )
    add_target_options(p)
    p.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="the rules file (default: igg.toml, else "
        "pyproject.toml's [tool.igg], in PATH or the working directory)",
    )
    p.add_argument(
        "--since",
        metavar="REF",
        help="also judge the tree at this git commit (HEAD~1, origin/main): "
        "violations there are known; list the dependencies the change added and removed",
    )
    p.add_argument(
        "--new-only", action="store_true", help="ratchet: fail only on violations --since REF lacks"
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json, or github (workflow annotations on the pull request)",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.add_argument("--sarif", type=Path, metavar="FILE", help="also write the report as SARIF 2.1.0 there")
    p.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="file paths in SARIF and annotations are relative to "
        "it (default: the top of the git work tree, else the working directory)",
    )
    p.set_defaults(handler=run)


def add_target_options(p: argparse.ArgumentParser) -> None:
    """``--store`` (a session's store, and the facts cache beside it) and ``--package-prefix``."""
    p.add_argument(
        "--store",
        metavar="LOCATION",
        default=None,
        help=STORE_HELP + "; for a PATH, the facts cache beside it spares parsing unchanged files",
    )
    p.add_argument("--package-prefix", metavar="NAME", help="as for igg map-code")


def targets(args: argparse.Namespace) -> tuple[list[Path], str | None, str | None]:
    """(paths, session id, store) from the command line: one argument that is no file or folder is a
    session."""
    given = args.targets or ["."]
    explicit = args.store or os.environ.get(STORE_ENV)
    if len(given) == 1 and not Path(given[0]).exists() and is_session_id(given[0]):
        store = resolve_store_path(args.store)
        if not store_exists(store):
            raise RequestInvalid(
                [
                    Problem(
                        "PATH|SESSION",
                        f"{given[0]}: no such file or folder, and no session store "
                        f"at {store} to find a session of that id in (--store PATH)",
                    )
                ],
                source="the command line",
            )
        return [], given[0], store_text(store)
    missing = [g for g in given if not Path(g).exists()]
    if missing:
        raise RequestInvalid(
            [Problem("PATH", f"{m}: no such file or folder") for m in missing], source="the command line"
        )
    return [Path(g) for g in given], None, store_text(resolve_store_path(args.store)) if explicit else None


def run(args: argparse.Namespace) -> int:
    from igg.io.files import write_file
    from igg.mapping.rule_jobs import check
    from igg.rules.github import to_github
    from igg.rules.sarif import to_sarif

    paths, session, store = targets(args)
    report = check(
        paths,
        session=session,
        store=store,
        rules=args.rules,
        since=args.since,
        new_only=args.new_only,
        package_prefix=args.package_prefix,
    )
    prefix = file_prefix(paths, args.root)
    if args.sarif is not None:
        text = json.dumps(
            to_sarif(report, version=igg_version(), prefix=prefix), indent=1, ensure_ascii=False
        )
        write_file(args.sarif, (text + "\n").encode("utf-8"))
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print(report.model_dump_json(indent=1))
    elif fmt == "github":
        for line in to_github(report, prefix):
            print(line)
    else:
        print_text(report)
    return EXIT_FAILURE if report.failed else EXIT_OK


def file_prefix(paths: list[Path], root: Path | None) -> str | Callable[[str], str]:
    """What makes the report's file paths (relative to the mapped folder) relative to ``root`` (default: the
    git work tree's top, else the working directory): a folder to put before them, or, when several paths were
    checked (each file then reported under its tree's name), a function that puts each under its own tree's
    folder."""
    if not paths:
        return ""
    base = root
    if base is None:
        from igg.mapping.since import git_top

        base = git_top(paths[0]) or Path.cwd()
    top = base.resolve()

    def relative(folder: Path) -> str:
        rel = os.path.relpath(folder.resolve(), top)
        return "" if rel == "." else rel.replace(os.sep, "/")

    if len(paths) == 1:
        return relative(paths[0] if paths[0].is_dir() else paths[0].parent)
    parents: dict[str, str] = {}
    for p in paths:  # a walk of several trees reports each file as ``<tree name>/<path in it>``
        parents.setdefault(p.resolve().name, relative(p.resolve().parent))

    def path_of(file: str) -> str:
        return str(PurePosixPath(parents.get(file.partition("/")[0], "")) / file)

    return path_of


def print_text(report: CheckReport) -> None:
    """The report for a person (and a CI log): each violation with its path of edges, then the count per rule;
    every name and message escaped for a log line (``igg.rules.github.plain``)."""
    from igg.rules.github import plain
    from igg.rules.report import TRUNCATED

    out = sys.stdout
    for v in report.violations:
        tag = f" [{v.status}]" if report.since else ""
        out.write(f"{v.severity}: {plain(v.rule)} ({v.kind}){tag}: {plain(v.message)}\n")
        for h in v.path:
            out.write(f"  {hop_text(h)}\n")
        if v.breaking_edges:
            out.write("  to break it, remove:\n")
            for h in v.breaking_edges:
                out.write(f"    {hop_text(h)}\n")
    if report.since:
        for title, changes in (("added", report.added), ("removed", report.removed)):
            for c in changes:
                where = ", ".join(plain(h.where()) for h in c.edges[:3]) + (
                    " ..." if len(c.edges) > 3 else ""
                )
                out.write(f"{title} {c.level} dependency: {plain(c.source)} -> {plain(c.target)} ({where})\n")
    counted = ", ".join(f"{plain(r.name)} {r.violations}" for r in report.rules)
    new = sum(v.status == "new" for v in report.violations)
    extra = (
        f" ({new} new, {len(report.violations) - new} known since {plain(report.since)})"
        if report.since
        else ""
    )
    verdict = "FAILED" if report.failed else "passed"
    if report.truncated:
        out.write(TRUNCATED + "\n")
    out.write(
        f"igg check {verdict}: {len(report.violations)} violation{'s' * (len(report.violations) != 1)}"
        f"{extra} of {len(report.rules)} rules in {plain(report.target)} ({counted})\n"
    )


def hop_text(h: Hop) -> str:
    """One edge of a path on a log line: ``source -> target (EDGE) at file:line`` (``EDGE, type-only`` for a
    type-only import), escaped."""
    from igg.rules.github import plain

    return plain(h.describe())
