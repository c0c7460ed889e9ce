"""Python's HTTP routes and requests (``igg.codemap.routes``), from the ``ast`` tree the analyzer parsed.

Servers: FastAPI (``@app.get("/p")``, ``APIRouter(prefix=)``, ``include_router(r, prefix=)``), Flask
(``@bp.route("/p", methods=[...])``, ``Blueprint(url_prefix=)``, ``register_blueprint(bp, url_prefix=)``),
Django (``path()``/``re_path()`` in ``urlpatterns``, ``include("app.urls")``). Clients: ``requests`` and
``httpx`` (module functions, and clients built with ``base_url=``: ``httpx.Client``, ``httpx.AsyncClient``). A
router is a name bound to one of those constructors in this file; a URL is a string the code decides:
literals, f-strings, ``+``, ``%`` and ``.format`` over constants of the file, of the enclosing function, or
imported from another module of the tree (the join looks those up).
"""

from __future__ import annotations

import ast
import re

from igg.codemap.columns import Columns
from igg.codemap.facts import FileFacts, HttpFacts, MountDecl, RequestDecl, RouteDecl
from igg.codemap.routes import METHODS, Value, concat, constant, join_paths, normalize

HINTS = (
    "fastapi",
    "flask",
    "django",
    "requests",
    "httpx",
    "http://",
    "https://",
    "BASE",
    "base_url",
    "URL",
    "_url",
    "prefix",
    "PREFIX",
)
"""A file without any of these has no route nor request (its tree is not walked again)."""


def hinted(text: str) -> bool:
    """Whether ``text`` has one of ``HINTS`` (substring tests: a regex costs more than the rest on most
    files)."""
    return any(h in text for h in HINTS)


_APPS = {"FastAPI": None, "Flask": None, "APIRouter": "prefix", "Blueprint": "url_prefix"}
"""Router constructors -> the keyword naming their own prefix."""
_CLIENT_MODULES = ("requests", "httpx")
_CLIENTS = {"Client", "AsyncClient", "Session"}
_VERBS = {m.lower(): m for m in METHODS}
_PERCENT = re.compile(r"%[-+ #0-9.]*[sdrfix]")

"""A URL as far as the code decides it: (the imported constant it starts with, or None; the rest, ``{}`` for
what is computed)."""
Scope = tuple[str, int, int] | None


def _scope(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, int, int]:
    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    return fn.name, first, fn.end_lineno or fn.lineno


class _Http:
    def __init__(self, facts: FileFacts, columns: Columns) -> None:
        self.facts = facts
        self.columns = columns
        self.http = HttpFacts()
        self.imported: dict[str, str] = {}
        """Local name -> what it imports: ``module:M#NAME`` (a name from a module) or ``module:M#`` (a
        module)."""
        self.modules: dict[str, str] = {}
        """Local name -> the dotted module it binds (``import requests``, ``from app import views``)."""
        for i in facts.imports:
            local = i.alias or i.target.rpartition(".")[2]
            if i.module_only:
                self.modules[local] = i.target
            elif i.source is not None:
                self.imported[local] = f"module:{i.source}#{i.target.rpartition('.')[2]}"
                self.modules.setdefault(local, i.target)
        self.clients: dict[str, Value] = {}
        """Client names (``client``, ``self.client``) -> their base URL."""
        self.aliases: dict[str, str] = {}
        """A second name of a router -> its first (``users_router = r = APIRouter()``)."""
        self.classes: dict[str, dict[str, Value]] = {}
        """Module-level classes -> their string attributes (a settings class)."""
        self.calls = True
        """Whether a call of this file can be a mount or a request (``calls_matter``): else no statement's
        calls are listed."""

    def calls_matter(self, text: str) -> bool:
        """Whether ``text`` may hold a call ``mount`` or ``request`` reads (or a client ``client`` binds): a
        mount names ``include_router`` or ``register_blueprint``; a request, and a client's construction, is
        an attribute of a name bound to ``requests`` or ``httpx``, written in the text as that name, then
        ``.``, then the attribute (only spaces, ``)``, line continuations and comments may come between). A
        file that is not ASCII is walked (an identifier may be written in another form of the same name)."""
        if not text.isascii() or "include_router" in text or "register_blueprint" in text:
            return True
        names = [re.escape(local) for local, module in self.modules.items() if module in _CLIENT_MODULES]
        if not names:
            return False
        attrs = "|".join(sorted({*_VERBS, "request", *_CLIENTS}))
        # a comment ends at its newline: each character between is read one way (no backtracking blow-up)
        pattern = (
            rf"(?<![\w.])(?:{'|'.join(names)})(?:[\s)\\]|#[^\n]*\n)*\.(?:[\s\\]|#[^\n]*\n)*(?:{attrs})\b"
        )
        return re.search(pattern, text) is not None

    # values -------------------------------------------------------------------------------------------------
    def value(self, node: ast.expr | None, env: dict[str, Value]) -> Value | None:
        """What the code decides of the string ``node`` (None: nothing: its start is computed at run time)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return None, node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            ref = self.imported.get(node.id)
            return (ref, "") if ref is not None else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):  # settings.API_PREFIX
            dotted = f"{node.value.id}.{node.attr}"
            if dotted in env:
                return env[dotted]
            ref = self.imported.get(node.value.id)
            return (f"{ref}.{node.attr}", "") if ref is not None else None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):  # CONFIG["orders_url"], of a dict of the module or imported
            dotted = f"{node.value.id}.{node.slice.value}"
            if dotted in env:
                return env[dotted]
            ref = self.imported.get(node.value.id)
            return (f"{ref}.{node.slice.value}", "") if ref is not None else None
        if isinstance(node, ast.JoinedStr):
            return concat(
                [
                    self.value(v.value, env) if isinstance(v, ast.FormattedValue) else self.value(v, env)
                    for v in node.values
                ]
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return concat([self.value(node.left, env), self.value(node.right, env)])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return self._percent(node, env)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
        ):
            return self.value(node.func.value, env)
        return None

    def _percent(self, node: ast.BinOp, env: dict[str, Value]) -> Value | None:
        """``"%s/users/%d" % (BASE, id)``: the format's text with each argument's value where it stands."""
        fmt = self.value(node.left, env)
        if fmt is None or fmt[0] is not None:
            return None
        args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        texts = _PERCENT.split(fmt[1])
        parts: list[Value | None] = [(None, texts[0])] if texts[0] else []
        for i, text in enumerate(texts[1:]):
            parts.append(self.value(args[i], env) if i < len(args) else None)
            parts.append((None, text))
        return concat(parts)

    # servers ------------------------------------------------------------------------------------------------
    def routers(self, stmt: ast.stmt, env: dict[str, Value]) -> None:
        if not (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)):
            return
        call = stmt.value
        first = stmt.targets[0].id  # type: ignore[attr-defined]
        if isinstance(call, ast.Call):
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
            if name in _APPS:
                key = _APPS[name]
                prefix = (
                    next((self.value(k.value, env) for k in call.keywords if k.arg == key), None)
                    if key
                    else None
                )
                self.http.routers[first] = normalize(prefix[1]) if prefix and not prefix[0] else ""
                if key is not None:  # APIRouter, Blueprint: served where an application includes them
                    self.http.mounted_only.append(first)
                for other in stmt.targets[1:]:  # users_router = r = APIRouter(): r is users_router
                    self.aliases[other.id] = first  # type: ignore[attr-defined]
        if first == "urlpatterns" and isinstance(call, ast.List | ast.BinOp):
            self.http.routers.setdefault("urlpatterns", "")
            self.django(call, "", env)

    def decorated(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, Value]) -> None:
        for d in fn.decorator_list:
            if not (
                isinstance(d, ast.Call)
                and isinstance(d.func, ast.Attribute)
                and isinstance(d.func.value, ast.Name)
                and self.aliases.get(d.func.value.id, d.func.value.id) in self.http.routers
                and d.args
            ):
                continue
            router = self.aliases.get(d.func.value.id, d.func.value.id)
            path = self.value(d.args[0], env)
            if path is None or path[0] is not None:
                continue
            verb = d.func.attr
            if verb in _VERBS:
                methods = [_VERBS[verb]]
            elif verb in ("route", "api_route"):
                methods = self._methods(d) or ["GET"]
            else:
                continue
            for m in methods:
                self.http.routes.append(
                    RouteDecl(
                        method=m,
                        path=normalize(path[1]),
                        router=router,
                        scope=_scope(fn),
                        line=d.lineno,
                        column=self.columns(d.lineno, d.col_offset),
                    )
                )

    @staticmethod
    def _methods(call: ast.Call) -> list[str]:
        for k in call.keywords:
            if k.arg == "methods" and isinstance(k.value, ast.List | ast.Tuple | ast.Set):
                return [
                    e.value.upper()
                    for e in k.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.upper() in METHODS
                ]
        return []

    def mount(self, call: ast.Call, env: dict[str, Value]) -> None:
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in ("include_router", "register_blueprint")
            and isinstance(func.value, ast.Name)
            and func.value.id in self.http.routers
            and call.args
        ):
            return
        key = "prefix" if func.attr == "include_router" else "url_prefix"
        prefix = next((self.value(k.value, env) for k in call.keywords if k.arg == key), (None, ""))
        child = self._child(call.args[0])
        if child is not None:  # a prefix the code does not decide: the mount's routes are left out
            self.http.mounts.append(
                MountDecl(
                    prefix=normalize(prefix[1]) if prefix is not None else "",
                    base="?" if prefix is None else prefix[0],
                    router=func.value.id,
                    child=child,
                    line=call.lineno,
                )
            )

    def _child(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            if node.id in self.http.routers:
                return f"local:{node.id}"
            return self.imported.get(node.id)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.modules
        ):
            return f"module:{self.modules[node.value.id]}#{node.attr}"
        return None

    def django(self, node: ast.expr, prefix: str, env: dict[str, Value]) -> None:
        """The ``path()``/``re_path()`` entries of a ``urlpatterns`` list (``+`` of lists too)."""
        if isinstance(node, ast.BinOp):
            self.django(node.left, prefix, env)
            self.django(node.right, prefix, env)
            return
        if not isinstance(node, ast.List):
            return
        for e in node.elts:
            if not (
                isinstance(e, ast.Call)
                and getattr(e.func, "id", getattr(e.func, "attr", None)) in ("path", "re_path", "url")
                and len(e.args) >= 2
            ):
                continue
            route = self.value(e.args[0], env)
            if route is None or route[0] is not None:
                continue
            path, target = join_paths(prefix, route[1]), e.args[1]
            if isinstance(target, ast.Call) and getattr(target.func, "id", None) == "include" and target.args:
                inner = target.args[0]
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    self.http.mounts.append(
                        MountDecl(
                            prefix=path,
                            router="urlpatterns",
                            child=f"module:{inner.value}#urlpatterns",
                            line=e.lineno,
                        )
                    )
                elif isinstance(inner, ast.List):
                    self.django(inner, path, env)
                continue
            handler = self._view(target)
            if handler is not None:
                self.http.routes.append(
                    RouteDecl(
                        method="*",
                        path=path,
                        router="urlpatterns",
                        handler=handler,
                        line=e.lineno,
                        column=self.columns(e.lineno, e.col_offset),
                    )
                )

    def _view(self, node: ast.expr) -> str | None:
        """``module:M#NAME`` of a view function or class (``views.detail``, ``Detail.as_view()``)."""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "as_view"
        ):
            node = node.func.value
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.modules
        ):
            return f"module:{self.modules[node.value.id]}#{node.attr}"
        if isinstance(node, ast.Name):
            return self.imported.get(node.id) or f"module:{self.facts.module}#{node.id}"
        return None

    # clients ------------------------------------------------------------------------------------------------
    def client(self, target: ast.expr, call: ast.expr | None, env: dict[str, Value]) -> None:
        """A name bound to ``httpx.Client(base_url=...)`` (or a ``requests.Session()``) is a client."""
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _CLIENTS
            and isinstance(call.func.value, ast.Name)
            and self.modules.get(call.func.value.id) in _CLIENT_MODULES
        ):
            return
        base = next((self.value(k.value, env) for k in call.keywords if k.arg == "base_url"), (None, ""))
        name = _dotted(target)
        if name is not None and base is not None:
            self.clients[name] = base

    def request(self, call: ast.Call, env: dict[str, Value], scope: Scope) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        receiver = _dotted(func.value)
        base: Value | None
        if receiver in self.modules and self.modules[receiver] in _CLIENT_MODULES:
            base = (None, "")
        elif receiver is not None and receiver in self.clients:
            base = self.clients[receiver]
        else:
            return
        args = list(call.args)
        if (
            func.attr == "request"
            and args
            and isinstance(args[0], ast.Constant)
            and str(args[0].value).upper() in METHODS
        ):
            method, args = str(args[0].value).upper(), args[1:]
        elif func.attr in _VERBS:
            method = _VERBS[func.attr]
        else:
            return
        url_node = args[0] if args else next((k.value for k in call.keywords if k.arg == "url"), None)
        url = self.value(url_node, env)
        if url is None:
            return
        if url[0] is None and base != (None, "") and not re.match(r"https?://", url[1]):
            url = base[0], base[1].rstrip("/") + "/" + url[1].lstrip("/")
        elif url[0] is None and base[0] is not None and not url[1].startswith("http"):
            url = base[0], url[1]
        self.http.requests.append(
            RequestDecl(
                method=method,
                url=_clean(url[1]),
                base=url[0],
                scope=scope,
                line=call.lineno,
                column=self.columns(call.lineno, call.col_offset),
            )
        )


def _clean(url: str) -> str:
    """A URL's path normalized, its scheme and host kept."""
    m = re.match(r"^(https?://[^/?#]*)(.*)$", url)
    return m.group(1) + normalize(m.group(2)) if m else normalize(url)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner is not None else None
    return None


def _constant(http: _Http, stmt: ast.stmt, env: dict[str, Value]) -> None:
    """``NAME = "..."`` (or ``NAME: str = ...``): bound for the statements after it."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, node = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, node = stmt.target, stmt.value
    else:
        return
    http.client(target, node, env)
    if (
        isinstance(target, ast.Name)
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and (node.func.id in http.classes)
    ):  # settings = Settings(): its attributes as the class declares them
        env.update({f"{target.id}.{k}": v for k, v in http.classes[node.func.id].items()})
    if isinstance(target, ast.Name) and isinstance(node, ast.Dict):  # CONFIG = {"orders_url": "http://..."}
        for key, item in zip(node.keys, node.values, strict=True):
            found = (
                http.value(item, env)
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
                else None
            )
            if found is not None:
                env[f"{target.id}.{key.value}"] = found  # type: ignore[union-attr]
    if isinstance(target, ast.Name):
        value = http.value(node, env)
        if value is not None:
            env[target.id] = value
        else:
            env.pop(target.id, None)


def _attributes(http: _Http, cls: ast.ClassDef, env: dict[str, Value]) -> None:
    """``self.base = BILLING_URL`` in ``__init__``: ``self.base`` for every method of the class (and clients
    built there, ``self.client = httpx.Client(base_url=...)``)."""
    init = next(
        (
            s
            for s in cls.body
            if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "__init__"
        ),
        None,
    )
    for stmt in init.body if init is not None else ():
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Attribute)
            and isinstance(stmt.targets[0].value, ast.Name)
            and stmt.targets[0].value.id == "self"
        ):
            value = http.value(stmt.value, env)
            if value is not None:
                env[f"self.{stmt.targets[0].attr}"] = value


def _walk(http: _Http, body: list[ast.stmt], env: dict[str, Value], scope: Scope, top: bool) -> None:
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            http.decorated(stmt, env)
            a = stmt.args
            params = {
                p.arg
                for p in (
                    *a.posonlyargs,
                    *a.args,
                    *a.kwonlyargs,
                    *((a.vararg,) if a.vararg else ()),
                    *((a.kwarg,) if a.kwarg else ()),
                )
            }
            _walk(http, stmt.body, {k: v for k, v in env.items() if k not in params}, _scope(stmt), False)
            continue
        if isinstance(stmt, ast.ClassDef):
            attrs = dict(env)
            _attributes(http, stmt, attrs)
            _walk(http, stmt.body, attrs, scope, False)
            if top:  # a settings class: its string attributes, for ``settings = Settings()``
                http.classes[stmt.name] = {k: v for k, v in attrs.items() if k not in env or env[k] != v}
            continue
        if top:
            http.routers(stmt, env)
            if (
                isinstance(stmt, ast.AugAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == "urlpatterns"
            ):  # urlpatterns += [...]
                http.http.routers.setdefault("urlpatterns", "")
                http.django(stmt.value, "", env)
        _constant(http, stmt, env)
        if isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                if item.optional_vars is not None:
                    http.client(item.optional_vars, item.context_expr, env)
        for node in _calls(stmt) if http.calls else ():
            http.mount(node, env)
            http.request(node, env, scope)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt | ast.ExceptHandler):
                _walk(
                    http,
                    [s for h in inner for s in (h.body if isinstance(h, ast.ExceptHandler) else [h])],
                    env,
                    scope,
                    False,
                )


_BLOCKS = frozenset(("body", "orelse", "finalbody", "handlers"))
"""A statement's fields holding nested statements (walked as statements of their own)."""
_NOT_WALKED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.expr_context)
"""Nodes ``_calls`` does not enter: nested callables (walked as scopes of their own) and load/store marks."""


def _calls(stmt: ast.stmt) -> list[ast.Call]:
    """The calls of one statement, nested blocks left out (walked as statements of their own), in the order
    a depth-first walk from the last field meets them."""
    found: list[ast.Call] = []
    stack: list[ast.AST] = [stmt]
    pop, push, AST, Call, skip = stack.pop, stack.append, ast.AST, ast.Call, _NOT_WALKED
    while stack:
        node = pop()
        blocks = _BLOCKS if isinstance(node, ast.stmt) else ()
        for name in node._fields:
            if name in blocks:
                continue
            child = getattr(node, name, None)
            if child.__class__ is list:
                for each in child:
                    if isinstance(each, AST) and not isinstance(each, skip):
                        push(each)
            elif isinstance(child, AST) and not isinstance(child, skip):
                push(child)
        if node.__class__ is Call:
            found.append(node)
    return found


def http_facts(
    tree: ast.Module, facts: FileFacts, columns: Columns, text: str | None = None
) -> HttpFacts | None:
    """The routes, routers, mounts, requests and URL constants of the file ``tree`` is (None when none);
    ``text``, its source, spares listing the calls of a file where none can be a mount or a request."""
    http = _Http(facts, columns)
    if text is not None:
        http.calls = http.calls_matter(text)
    env: dict[str, Value] = {}
    _walk(http, tree.body, env, None, True)
    for name, (base, text) in env.items():
        kept = constant(base, text)
        if kept is not None:
            http.http.constants[name] = kept
    return http.http or None
