"""HTTP routes across services: one normalizer for every language, and the join of client requests to routes.

Each language's analyzer finds, in one file, the routes a server registers, the routers and mounts that prefix
them, the requests a client makes and the module-level URL strings (``facts.HttpFacts``), writing every path
through ``normalize`` (every parameter ``{}``: ``{id}``, ``:id``, ``<int:id>``, ``%s``, ``${id}``, f-string
fields). After linking, ``join`` resolves those facts across files and languages: a router's prefixes follow
its mounts, a route becomes a ``Route`` node (service, method, path) its handler ``HANDLES``, and a request
whose URL the code decides (its base a constant of the tree) ``REQUESTS`` the one route it matches. Precision
first: a request to a host outside the tree (a dotted public name: ``api.stripe.com``) draws nothing, nor one
whose path is built at run time, nor one two services could serve alike; an internal request that matches no
route reaches a Route of service ``(none)`` with ``handled: false`` (``igg check``'s ``unknown_route``).

A *service* is the top-level folder of a file (``web/``, ``orders/``); a request to ``http://orders:8080/...``
(a host of one label, as a compose file names services) is matched among the routes of service ``orders``
first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from igg.codemap.facts import FileFacts, HttpFacts
from igg.codemap.index import callable_key
from igg.codemap.model import FilePlan, Relation

__all__ = [
    "METHODS",
    "Value",
    "clean_url",
    "concat",
    "constant",
    "external_host",
    "handler_names",
    "is_test",
    "join",
    "join_paths",
    "normalize",
    "split_url",
]

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
"""The methods a route or request names (``*``: any)."""

_PARAM = re.compile(r"\$\{[^}]*\}|\{[^}]*\}|<[^>]*>|\(\?P<\w+>[^)]*\)|%[-+ #0-9.]*[sdvqfixX]")
_COLON = re.compile(r"^[:*]\w+\??$|^\*$")
_SCHEME = re.compile(r"^(https?)://([^/?#]+)(.*)$", re.IGNORECASE)
_INTERNAL = re.compile(
    r"^(?:localhost|127\.0\.0\.1|0\.0\.0\.0|host\.docker\.internal|\[::1\])$|"
    r"\.(?:local|internal|localhost|svc\.cluster\.local)$"
)


def normalize(path: str) -> str:
    """``path`` with every parameter written ``{}``, a leading ``/``, no query, no trailing ``/`` (``/`` alone
    for the root); ``^``/``$`` of a Django ``re_path`` dropped. A segment holding a parameter is one
    ``{}``."""
    path = path.strip()
    if path.startswith("^"):
        path = path[1:]
    if path.endswith("$"):
        path = path[:-1]
    path = _PARAM.sub("{}", path).split("?", 1)[0].split("#", 1)[0]
    out = []
    for seg in path.split("/"):
        if not seg:
            continue
        if "{}" in seg or _COLON.match(seg):
            seg = "{}"
        out.append(seg)
    return "/" + "/".join(out)


Value = tuple[str | None, str]
"""A URL as a language's reader knows it: (the name of the base URL it starts from, or None; its text)."""


def concat(parts: list[Value | None]) -> Value | None:
    """URL pieces joined (a concatenation, a template, a format string): a computed piece, or another base
    joined inside, is one parameter ``{}``; None when nothing is known or the URL would start with a computed
    piece."""
    if not parts or parts[0] is None:
        return None
    base, text = parts[0]
    for part in parts[1:]:
        text += "{}" if part is None or part[0] is not None else part[1]
    if base is None and text.startswith("{}"):
        return None
    return base, text


def clean_url(url: str) -> str:
    """A URL's path normalized, its scheme and host kept ("" stays "": no path given)."""
    m = re.match(r"^(https?://[^/?#]*)(.*)$", url)
    return m.group(1) + normalize(m.group(2)) if m else normalize(url) if url else ""


def join_paths(*parts: str) -> str:
    """The normalized path of ``parts`` one after the other (``/api`` + ``users/{}``: ``/api/users/{}``)."""
    return normalize("/".join(p for p in parts if p))


def split_url(url: str) -> tuple[str | None, str]:
    """(host, path) of a URL (host None for a path alone; its port dropped, lower case)."""
    m = _SCHEME.match(url)
    if m is None:
        return None, url
    host = m.group(2).rsplit("@", 1)[-1]
    host = host if host.startswith("[") else host.split(":", 1)[0]
    return host.lower(), m.group(3) or "/"


def external_host(host: str) -> bool:
    """Whether ``host`` is outside the tree: a dotted name (``api.stripe.com``) or address that is not local
    (``localhost``, ``*.internal``, ``*.svc.cluster.local``); a one-label host is a service of the tree."""
    if _INTERNAL.search(host):
        return False
    return "." in host or ":" in host or host.startswith("{")


_GROUPS = frozenset({"apps", "services", "packages", "projects"})
"""Folders that group services rather than being one (``services/orders``: the service is ``orders``)."""


_TEST = re.compile(
    r"(?:^|/)(?:tests?|__tests__|e2e|testdata|src/test)/|(?:^|/)(?:test_[^/]*\.py|conftest\.py|[^/]*_test\.(?:py|go)"
    r"|[^/]*\.(?:test|spec)\.[cm]?[jt]sx?)$"
)


def is_test(path: str) -> bool:
    """Whether ``path`` is a test (``*_test.go``, ``test_*.py``, ``*.spec.ts``, ``tests/``, ``src/test/``):
    the routes a test registers and the requests it makes are no part of the system's services (their HTTP is
    not read)."""
    return _TEST.search(path) is not None


def constant(base: str | None, text: str) -> str | None:
    """How ``HttpFacts.constants`` keeps a URL (``base``: the other file's constant it starts with): None when
    it is no URL nor path."""
    if base is not None:
        return f"<{base}>{text}"
    m = re.match(r"^(https?://[^/?#]*)(.*)$", text)
    if m is not None:
        return m.group(1) + normalize(m.group(2))
    return normalize(text) if text.startswith("/") else None


ROOT = "(root)"
"""The service of the files at the root of the tree."""
NOWHERE = "(none)"
"""The service of a Route no code of the tree handles (``handled: false``)."""


def service_of(path: str) -> str:
    """The service a file belongs to: its top-level folder, below folders that group services (``services/``,
    ``apps/``); ``ROOT`` for a file at the root."""
    parts = path.split("/")[:-1]
    while len(parts) > 1 and parts[0] in _GROUPS:
        parts = parts[1:]
    return parts[0] if parts else ROOT


@dataclass(frozen=True, slots=True)
class _Route:
    key: str
    service: str
    method: str
    segments: tuple[str, ...]


RouterId = tuple[str, str]
"""(file path, local router name)."""
Symbol = Callable[[FilePlan, str, str, dict[str, object]], str]


class _Join:
    """One join over the files of a link (see the module doc)."""

    def __init__(self, files: Sequence[FileFacts]) -> None:
        self.files = [f for f in files if f.http]
        self.all = files
        self._packages: dict[str, list[FileFacts]] | None = None
        self.modules = {f.module: f for f in files}
        self.stems = {f.path.rsplit(".", 1)[0]: f for f in files}
        self.by_module = {f.module: f for f in self.files}
        self.by_stem: dict[str, FileFacts] = {}
        for f in self.files:
            stem = f.path.rsplit(".", 1)[0]
            self.by_stem.setdefault(stem, f)
            if stem.endswith("/index"):
                self.by_stem.setdefault(stem[:-6], f)
        self.constants = {(f.path, k): v for f in self.files if f.http for k, v in f.http.constants.items()}
        self.mounted: dict[RouterId, list[tuple[RouterId, str | None]]] = {}
        """Router -> (the router it is mounted on, the prefix there: None when the code does not decide
        it)."""
        for f in self.files:
            assert f.http is not None
            for m in f.http.mounts:
                prefix: str | None = m.prefix
                if m.base is not None:
                    base = self.base(m.base) if m.base != "?" else None
                    prefix = None if base is None else join_paths(base, m.prefix)
                for child in self.children(f, m.child):
                    self.mounted.setdefault(child, []).append(((f.path, m.router), prefix))

    def children(self, f: FileFacts, ref: str) -> list[RouterId]:
        """The routers a mount's ``child`` reference names."""
        kind, _, rest = ref.partition(":")
        where, _, name = rest.rpartition("#")
        if kind == "local":
            return [(f.path, rest)]
        target = (
            self.by_module.get(where)
            if kind == "module"
            else self.by_stem.get(where)
            if kind == "path"
            else None
        )
        if target is not None:
            return [(target.path, target.exports.get(name, name) if name else "")]
        if kind == "func":
            return [
                (g.path, f"{name}()")
                for g in self.in_package(where)
                if g.http and f"{name}()" in g.http.routers
            ]
        return []

    def in_package(self, package: str) -> list[FileFacts]:
        """The files of ``package`` (Go's import path)."""
        if self._packages is None:
            self._packages = {}
            for f in self.all:
                self._packages.setdefault(f.package, []).append(f)
        return self._packages.get(package, [])

    def prefixes(self, router: RouterId, depth: int = 0) -> list[str]:
        """Every absolute prefix of ``router``: its mounts' (each under its parent's prefixes) and its own."""
        f = next((g for g in self.files if g.path == router[0]), None)
        own = f.http.routers.get(router[1], "") if f is not None and f.http else ""
        mounts = self.mounted.get(router, [])
        if not mounts or depth > 12:
            return [] if f is not None and f.http and router[1] in f.http.mounted_only else [own]
        return sorted(
            {
                join_paths(p, prefix, own)
                for parent, prefix in mounts
                if prefix is not None
                for p in self.prefixes(parent, depth + 1)
            }
        )

    def handlers(self, ref: str, method: str) -> list[tuple[str, str]]:
        """(method, symbol key) of the handler ``ref`` (``module:MOD#NAME``) names: a function, or each method
        of a class named for an HTTP method (a class-based view); none when the tree does not declare it."""
        kind, _, rest = ref.partition(":")
        where, _, name = rest.rpartition("#")
        if kind in ("func", "method"):  # Go: a function or method of the package ``where``, if one alone
            found = [
                (method, callable_key(c, g.package))
                for g in self.in_package(where)
                for c in g.callables
                if c.name == name and (c.owner is None) == (kind == "func")
            ]
            return found if len(found) == 1 else []
        if kind == "path":  # TypeScript: a function of that file (its export), or a member (``#.list``) of it
            f = self.stems.get(where) or self.stems.get(f"{where}/index")
            if f is None:
                return []
            member = name.startswith(".")
            name = name.lstrip(".") if member else f.exports.get(name, name)
            found = [
                (method, callable_key(c, f.package))
                for c in f.callables
                if c.name == name and (member or c.owner is None)
            ]
            return found if len(found) == 1 else []
        f = self.modules.get(where)
        if f is None:
            return []
        for c in f.callables:
            if c.owner is None and c.name == name:
                return [(method, callable_key(c, f.package))]
        view = next((t.qualified for t in f.types if t.name == name), None)
        return [
            (c.name.upper(), callable_key(c, f.package))
            for c in f.callables
            if view is not None and c.owner == view and c.name.upper() in METHODS
        ]

    def base(self, ref: str, depth: int = 0) -> str | None:
        """The constant a request's ``base`` names, or None when the tree does not say it. A constant that
        starts with another file's constant is written ``<REF>rest`` (``constant``)."""
        kind, _, rest = ref.partition(":")
        where, _, name = rest.rpartition("#")
        if kind == "pkg":  # Go: a constant of any file of the package
            found = next(
                (
                    self.constants[(g.path, name)]
                    for g in self.in_package(where)
                    if (g.path, name) in self.constants
                ),
                None,
            )
        else:
            target = self.by_module.get(where) if kind == "module" else self.by_stem.get(where)
            head, dot, member = name.partition(
                "."
            )  # config.apiUrl: the exported object's own name, then its key
            local = f"{target.exports.get(head, head)}{dot}{member}" if target is not None else name
            found = self.constants.get((target.path, local)) if target is not None else None
        if found is not None and found.startswith("<"):
            inner, _, tail = found[1:].partition(">")
            start = self.base(inner, depth + 1) if depth < 8 else None
            return None if start is None else start.rstrip("/") + "/" + tail.lstrip("/") if tail else start
        return found


def handler_names(files: Iterable[FileFacts]) -> set[str]:
    """The names of the handlers that routes of ``files`` name in other files (Django's views, Go's and
    TypeScript's imported handlers): a file declaring one states no HANDLES edge of its own, the route's file
    does, so ``--update`` links every file when a changed file declares one."""
    return {
        r.handler.rpartition("#")[2].lstrip(".") for f in files if f.http for r in f.http.routes if r.handler
    }


def _segments(path: str) -> tuple[str, ...]:
    return tuple(path.split("/")[1:]) if path != "/" else ()


def _scope_key(f: FileFacts, scope: tuple[str, int, int] | None) -> str:
    """The symbol key of the callable ``scope`` names in ``f`` (its module when none)."""
    if scope is not None:
        name, first, last = scope
        for c in f.callables:
            if c.name == name and first <= c.line <= last:
                return callable_key(c, f.package)
    return f"module:{f.path}"


def _route_symbol(service: str, method: str, path: str, handled: bool) -> tuple[str, dict[str, object]]:
    props: dict[str, object] = {
        "name": f"{method} {path}",
        "method": method,
        "path": path,
        "service": service,
    }
    if not handled:
        props["handled"] = False
    return f"route:{service}:{method} {path}", props


def _match(
    routes: Iterable[_Route], method: str, segments: tuple[str, ...], service: str | None
) -> list[_Route]:
    """The routes a request of ``method`` to ``segments`` reaches: the most literal matches, the same method
    before ``*``, the hinted service's before others'."""
    best: list[tuple[int, int, _Route]] = []
    for r in routes:
        if len(r.segments) != len(segments) or r.method not in (method, "*"):
            continue
        score = 0
        for a, b in zip(r.segments, segments, strict=True):
            if a == b:
                score += 1
            elif a != "{}":
                break
        else:
            best.append((score, r.method == method, r))
    if service is not None:  # a host naming a service of the tree: its routes alone
        best = [b for b in best if b[2].service == service]
    if not best:
        return []
    top = max((s, m) for s, m, _ in best)
    return [r for s, m, r in best if (s, m) == top]


def join(
    files: Sequence[FileFacts],
    plans: dict[str, FilePlan],
    symbol: Symbol,
    relate: Callable[[FilePlan], Callable[[Relation], None]],
) -> None:
    """Add the Route symbols and the HANDLES and REQUESTS relations of ``files`` to their ``plans``
    (``symbol`` creates a symbol in a plan; ``relate(plan)``: where that plan's relations go, nowhere for a
    file linked for its symbols only)."""
    run = _Join(files)
    if not run.files:
        return
    routes: dict[str, _Route] = {}
    for f in run.files:
        assert f.http is not None
        plan, rel = plans[f.path], relate(plans[f.path])
        for r in f.http.routes:
            handlers = (
                run.handlers(r.handler, r.method) if r.handler else [(r.method, _scope_key(f, r.scope))]
            )
            for prefix in run.prefixes((f.path, r.router)):
                path = join_paths(prefix, r.path)
                for method, source in handlers:
                    key, props = _route_symbol(service_of(f.path), method, path, True)
                    symbol(plan, key, "Route", props)
                    routes.setdefault(key, _Route(key, service_of(f.path), method, _segments(path)))
                    rel(Relation("HANDLES", source, key, r.line, r.column))
    services = {service_of(f.path) for f in files}
    for f in run.files:
        assert f.http is not None
        _requests(
            run, f, f.http, list(routes.values()), services, plans[f.path], symbol, relate(plans[f.path])
        )


def _requests(
    run: _Join,
    f: FileFacts,
    http: HttpFacts,
    routes: list[_Route],
    services: set[str],
    plan: FilePlan,
    symbol: Symbol,
    rel: Callable[[Relation], None],
) -> None:
    for q in http.requests:
        url = q.url
        if q.base is not None:
            base = run.base(q.base)
            if base is None:
                continue  # a base the tree does not decide: no edge
            url = base.rstrip("/") + "/" + url.lstrip("/") if url not in ("", "/") else base
        host, path = split_url(url)
        if host is not None and external_host(host):
            continue
        path = normalize(path)
        hint = host if host is not None and host in services else None
        found = _match(routes, q.method, _segments(path), hint)
        if len({r.key for r in found}) > 1:
            continue  # two routes (two services) serve it alike: which one it reaches is not in the code
        if found:
            key = found[0].key
        else:
            key, props = _route_symbol(NOWHERE, q.method, path, False)
            symbol(plan, key, "Route", props)
        rel(Relation("REQUESTS", _scope_key(f, q.scope), key, q.line, q.column))
