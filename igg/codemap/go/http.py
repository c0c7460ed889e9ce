"""Go's HTTP routes and requests (``igg.codemap.routes``), from the tree the analyzer parsed.

Servers: ``net/http`` (``http.HandleFunc``, a ``ServeMux``'s ``HandleFunc``/``Handle``, Go 1.22 patterns
``"GET /items/{id}"``), chi (``r.Get``, ``r.Method``, ``r.Route`` and ``r.Group`` nesting, ``r.Mount("/p",
sub())`` of the router another function of the package builds), gin (``r.GET``, ``r.Any``,
``r.Group("/v1")``). A router built in function ``F`` is named ``F()``: a mount of ``F()`` in any file of the
package prefixes its routes. Clients: ``http.Get``/``Post``/``Head``, ``http.NewRequest(method, url, body)``
(and ``WithContext``), the methods of an ``http.Client``; a URL is what the code decides: literals, ``+`` and
``fmt.Sprintf`` over constants of the file, of the function, or of another file of the package (the join looks
those up).
"""

from __future__ import annotations

import re
from typing import Any

from igg.codemap.columns import Columns
from igg.codemap.facts import FileFacts, HttpFacts, MountDecl, RequestDecl, RouteDecl
from igg.codemap.routes import METHODS, Value, clean_url, concat, constant, join_paths

HINTS = (
    '"net/http"',
    "go-chi/chi",
    "gin-gonic/gin",
    "gorilla/mux",
    "http://",
    "https://",
    "BASE",
    "Base",
    "base",
)
"""A file without any of these has no route nor request (its tree is not walked again)."""


def hinted(text: str) -> bool:
    """Whether ``text`` has one of ``HINTS`` (substring tests: a regex costs more than the rest on most
    files)."""
    return any(h in text for h in HINTS)


_BODY = re.compile(
    rb"http\.|chi\.|gin\.|mux\.|\.(?:Get|Post|Put|Patch|Delete|Head|Options|Method|Handle|HandleFunc|Route|"
    rb"Group|Mount|GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|Any)\("
)
"""A function whose text has none of these registers no route and makes no request (its body is not
walked)."""

_NEW = {"chi.NewRouter", "chi.NewMux", "gin.Default", "gin.New", "http.NewServeMux", "mux.NewRouter"}
_VERBS = {
    **{m.title(): m for m in METHODS},
    **{m: m for m in METHODS},
    "Any": "*",
    "HandleFunc": "*",
    "Handle": "*",
}
_CLIENT = {"Get": "GET", "Head": "HEAD", "Post": "POST", "PostForm": "POST"}
_METHOD_CONSTS = {f"http.Method{m.title()}": m for m in METHODS}
Scope = tuple[str, int, int] | None
Router = tuple[str, str]
"""(the router's name, the prefix within it) a local name stands for."""


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _string(node: Any) -> str | None:
    if node is not None and node.type in ("interpreted_string_literal", "raw_string_literal"):
        return _text(node)[1:-1]
    return None


def _args(call: Any) -> list[Any]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


class _Http:
    def __init__(self, facts: FileFacts, columns: Columns) -> None:
        self.facts = facts
        self.columns = columns
        self.http = HttpFacts()
        self.package = facts.package
        self.imports = {i.alias or i.target.rpartition("/")[2]: i.target for i in facts.imports}
        """Local package name -> import path."""
        self.functions: dict[str, tuple[str, int, int]] = {}
        self.clients: set[str] = {"http.DefaultClient"}

    def value(self, node: Any, env: dict[str, Value]) -> Value | None:
        if node is None:
            return None
        text = _string(node)
        if text is not None:
            return None, text
        kind = node.type
        if kind == "binary_expression" and _text(node.child_by_field_name("operator")) == "+":
            return concat(
                [
                    self.value(node.child_by_field_name("left"), env),
                    self.value(node.child_by_field_name("right"), env),
                ]
            )
        if kind == "identifier":
            name = _text(node)
            return env[name] if name in env else (f"pkg:{self.package}#{name}", "")
        if kind == "call_expression" and _text(node.child_by_field_name("function")) == "fmt.Sprintf":
            args = _args(node)
            fmt = self.value(args[0], env) if args else None
            if fmt is None or fmt[0] is not None:
                return None
            texts = re.split(r"%[-+ #0-9.]*[sdvqx]", fmt[1])
            parts: list[Value | None] = [(None, texts[0])] if texts[0] else []
            for i, rest in enumerate(texts[1:]):
                parts.append(self.value(args[i + 1], env) if i + 1 < len(args) else None)
                parts.append((None, rest))
            return concat(parts)
        if kind == "parenthesized_expression" and node.named_children:
            return self.value(node.named_children[0], env)
        return None

    def call(self, node: Any, env: dict[str, Value], routers: dict[str, Router], scope: Scope) -> None:
        func = node.child_by_field_name("function")
        if func is not None and routers:
            self.handed(node, routers)
        if func is None or func.type != "selector_expression":
            return
        operand, field = _text(func.child_by_field_name("operand")), _text(func.child_by_field_name("field"))
        at = func.child_by_field_name("field")
        inner = func.child_by_field_name("operand")
        if inner is not None and inner.type == "call_expression":  # chi's r.With(mw).Get(...): r's route
            callee = inner.child_by_field_name("function")
            if (
                callee is not None
                and callee.type == "selector_expression"
                and _text(callee.child_by_field_name("field")) == "With"
            ):
                operand = _text(callee.child_by_field_name("operand"))
        if operand in routers or (operand == "http" and field in ("HandleFunc", "Handle")):
            router = routers.get(operand, ("", ""))
            if field in _VERBS or field == "Method":
                self.route(node, at, router, field)
            elif field == "Mount":
                self.mount(node, router, routers)
            return
        if operand == "http" and field in _CLIENT:
            self.request(node, at, _CLIENT[field], _args(node)[:1], env, scope)
        elif operand == "http" and field in ("NewRequest", "NewRequestWithContext"):
            args = _args(node)[1 if field.endswith("Context") else 0 :]
            method = self.method(args[0]) if args else None
            if method is not None:
                self.request(node, at, method, args[1:2], env, scope)
        elif operand in self.clients and field in _CLIENT:
            self.request(node, at, _CLIENT[field], _args(node)[:1], env, scope)

    def handed(self, node: Any, routers: dict[str, Router]) -> None:
        """``register(r)``, ``users.Register(v1.Group("/users"))``: the function registers its routes on that
        router (under the group's prefix): a mount of the router it builds (``_router_params``)."""
        for arg in _args(node):
            router: Router | None = None
            if arg.type == "identifier":
                router = routers.get(_text(arg))
            elif arg.type == "call_expression":
                inner = arg.child_by_field_name("function")
                if (
                    inner is not None
                    and inner.type == "selector_expression"
                    and _text(inner.child_by_field_name("field")) == "Group"
                ):
                    base = routers.get(_text(inner.child_by_field_name("operand")))
                    prefix = _string(_args(arg)[0]) if _args(arg) else None
                    if base is not None and prefix is not None:
                        router = (base[0], join_paths(base[1], prefix))
            if router is None:
                continue
            child = self.builder(node)
            if child is not None:
                self.http.mounts.append(
                    MountDecl(prefix=router[1], router=router[0], child=child, line=node.start_point[0] + 1)
                )
            return

    def method(self, node: Any) -> str | None:
        text = _string(node)
        if text is not None:
            return text.upper() if text.upper() in METHODS else None
        return _METHOD_CONSTS.get(_text(node))

    def route(self, node: Any, at: Any, router: Router, field: str) -> None:
        args = _args(node)
        if field == "Method":
            method = self.method(args[0]) if args else None
            args = args[1:]
        else:
            method = _VERBS[field]
        pattern = _string(args[0]) if args else None
        if method is None or pattern is None:
            return
        methods = [method]
        if field in ("HandleFunc", "Handle"):  # Go 1.22: "GET /items/{id}", "example.com/", "/items/"
            verb, _, rest = pattern.partition(" ")
            if rest and verb in METHODS:
                methods, pattern = [verb], rest.strip()
            if not pattern.startswith("/"):
                return  # a host pattern: served for that host only
            methods = self.gorilla_methods(node) or methods
        handler = args[-1] if len(args) > 1 else None
        if (
            handler is not None
            and handler.type in ("call_expression", "type_conversion_expression")
            and _text(handler.child_by_field_name("function") or handler.child_by_field_name("type"))
            == "http.HandlerFunc"
        ):
            inner = _args(handler) if handler.type == "call_expression" else handler.named_children[1:]
            handler = inner[0] if inner else None
        elif field == "Handle" and pattern.endswith("/") and pattern != "/":
            self.strip_mount(node, router, pattern, handler)
            return  # a subtree handed to another handler: its routes are the mounted router's
        scope, ref = self.enclosing(node), None
        if handler is not None and handler.type == "identifier":
            name = _text(handler)
            scope, ref = (
                (self.functions[name], None)
                if name in self.functions
                else (scope, f"func:{self.package}#{name}")
            )
        elif handler is not None and handler.type == "selector_expression":
            operand = _text(handler.child_by_field_name("operand"))
            field_name = _text(handler.child_by_field_name("field"))
            scope, ref = (
                None,
                (
                    f"func:{self.imports[operand]}#{field_name}"
                    if operand in self.imports
                    else f"method:{self.package}#{field_name}"
                ),
            )
        line, column = self.columns.at(at)
        for each in methods:
            self.http.routes.append(
                RouteDecl(
                    method=each,
                    path=join_paths(router[1], pattern),
                    router=router[0],
                    scope=scope,
                    handler=ref,
                    line=line,
                    column=column,
                )
            )

    def gorilla_methods(self, node: Any) -> list[str]:
        """gorilla/mux's ``r.HandleFunc("/p", h).Methods("GET", http.MethodPost)``: those methods."""
        parent = node.parent
        if (
            parent is None
            or parent.type != "selector_expression"
            or _text(parent.child_by_field_name("field")) != "Methods"
        ):
            return []
        call = parent.parent
        found = (
            [self.method(a) for a in _args(call)]
            if call is not None and call.type == "call_expression"
            else []
        )
        return [m for m in found if m is not None] if all(found) else []

    def strip_mount(self, node: Any, router: Router, pattern: str, handler: Any) -> None:
        """``mux.Handle("/api/", http.StripPrefix("/api", api.Router()))``: the router ``api.Router`` builds,
        under ``/api``."""
        if (
            handler is None
            or handler.type != "call_expression"
            or _text(handler.child_by_field_name("function")) != "http.StripPrefix"
        ):
            return
        args = _args(handler)
        prefix = _string(args[0]) if args else None
        child = self.builder(args[1]) if len(args) > 1 else None
        if prefix is not None and child is not None and pattern.startswith(prefix):
            self.http.mounts.append(
                MountDecl(
                    prefix=join_paths(router[1], prefix),
                    router=router[0],
                    child=child,
                    line=node.start_point[0] + 1,
                )
            )

    def builder(self, node: Any) -> str | None:
        """``func:PKG#F`` of a call ``F()`` or ``pkg.F()`` (the router function F builds)."""
        if node.type != "call_expression":
            return None
        func = node.child_by_field_name("function")
        if func.type == "identifier":
            return f"func:{self.package}#{_text(func)}"
        if func.type == "selector_expression" and _text(func.child_by_field_name("operand")) in self.imports:
            package = self.imports[_text(func.child_by_field_name("operand"))]
            return f"func:{package}#{_text(func.child_by_field_name('field'))}"
        return None

    def mount(self, node: Any, router: Router, routers: dict[str, Router]) -> None:
        args = _args(node)
        prefix = _string(args[0]) if args else None
        if prefix is None or len(args) < 2:
            return
        sub = args[1]
        child = self.builder(sub)
        if sub.type == "identifier" and _text(sub) in routers:
            child = f"local:{routers[_text(sub)][0]}"
        if child is not None:
            self.http.mounts.append(
                MountDecl(
                    prefix=join_paths(router[1], prefix),
                    router=router[0],
                    child=child,
                    line=node.start_point[0] + 1,
                )
            )

    def request(
        self, node: Any, at: Any, method: str, args: list[Any], env: dict[str, Value], scope: Scope
    ) -> None:
        url = self.value(args[0], env) if args else None
        if url is None:
            return
        line, column = self.columns.at(at)
        self.http.requests.append(
            RequestDecl(
                method=method, url=clean_url(url[1]), base=url[0], scope=scope, line=line, column=column
            )
        )

    def enclosing(self, node: Any) -> Scope:
        while node is not None:
            if node.type in ("function_declaration", "method_declaration"):
                return _named(node)
            node = node.parent
        return None


def _named(node: Any) -> tuple[str, int, int]:
    return _text(node.child_by_field_name("name")), node.start_point[0] + 1, node.end_point[0] + 1


def _assign(
    http: _Http,
    left: list[Any],
    right: list[Any],
    env: dict[str, Value],
    routers: dict[str, Router],
    owner: str,
) -> None:
    """``x := chi.NewRouter()``, ``v1 := r.Group("/v1")``, ``base := "http://..."``, ``c :=
    &http.Client{}``."""
    for name_node, value in zip(left, right, strict=False):
        name = _text(name_node)
        if value.type == "call_expression":
            func = _text(value.child_by_field_name("function"))
            if func in _NEW:
                routers[name] = (f"{owner}()" if owner else name, "")
                http.http.routers[routers[name][0]] = ""
                continue
            operand, _, field = func.rpartition(".")
            if field == "Group" and operand in routers:
                args = _args(value)
                prefix = _string(args[0]) if args else None
                if prefix is not None:
                    routers[name] = (routers[operand][0], join_paths(routers[operand][1], prefix))
                continue
        if value.type in ("unary_expression", "composite_literal") and "http.Client" in _text(value)[:40]:
            http.clients.add(name)
            continue
        found = http.value(value, env)
        if found is not None and not (found[0] is not None and not found[1]):
            env[name] = found
        elif found is not None and value.type != "identifier":
            env[name] = found
        else:
            env.pop(name, None)


_ROUTER_TYPES = frozenset(
    {
        "*gin.RouterGroup",
        "*gin.Engine",
        "gin.IRouter",
        "gin.IRoutes",
        "chi.Router",
        "*chi.Mux",
        "*http.ServeMux",
        "*mux.Router",
    }
)
"""Parameter types of a function that registers routes on the router it is given."""


def _router_params(http: _Http, fn: Any, name: str) -> dict[str, Router]:
    """``func UsersRegister(router *gin.RouterGroup)``: the router ``UsersRegister()``, served where a call
    hands it one (``users.UsersRegister(v1.Group("/users"))``: a mount)."""
    params = fn.child_by_field_name("parameters")
    found: dict[str, Router] = {}
    for p in params.named_children if params is not None and fn.type == "function_declaration" else ():
        if (
            p.type == "parameter_declaration"
            and _text(p.child_by_field_name("type")).replace(" ", "") in _ROUTER_TYPES
        ):
            for ident in p.named_children:
                if ident.type == "identifier":
                    found[_text(ident)] = (f"{name}()", "")
    if found:
        http.http.routers[f"{name}()"] = ""
        http.http.mounted_only.append(f"{name}()")
    return found


def _walk(
    http: _Http, node: Any, env: dict[str, Value], routers: dict[str, Router], scope: Scope, owner: str
) -> None:
    for child in node.named_children:
        kind = child.type
        if kind in ("function_declaration", "method_declaration"):
            if _BODY.search(child.text):
                named = _named(child)
                _walk(http, child, dict(env), _router_params(http, child, named[0]), named, named[0])
            continue
        if kind == "call_expression":
            http.call(child, env, routers, scope)
            if _nest(http, child, env, routers, scope, owner):
                continue
        _walk(http, child, env, routers, scope, owner)
        if kind in ("short_var_declaration", "assignment_statement"):
            left, right = child.child_by_field_name("left"), child.child_by_field_name("right")
            if left is not None and right is not None:
                _assign(http, left.named_children, right.named_children, env, routers, owner)
        elif kind in ("const_spec", "var_spec"):
            names = [c for c in child.named_children if c.type == "identifier"]
            value = child.child_by_field_name("value")
            if value is not None:
                _assign(http, names, value.named_children, env, routers, owner)


def _nest(
    http: _Http, call: Any, env: dict[str, Value], routers: dict[str, Router], scope: Scope, owner: str
) -> bool:
    """chi's ``r.Route("/p", func(r chi.Router) {...})`` and ``r.Group(func(r chi.Router) {...})``: the
    function's router is the receiver's under the prefix."""
    func = call.child_by_field_name("function")
    if func is None or func.type != "selector_expression":
        return False
    operand, field = _text(func.child_by_field_name("operand")), _text(func.child_by_field_name("field"))
    args = _args(call)
    if (
        operand not in routers
        or field not in ("Route", "Group")
        or not args
        or args[-1].type != "func_literal"
    ):
        return False
    prefix = _string(args[0]) if field == "Route" else ""
    params = args[-1].child_by_field_name("parameters")
    names = (
        [_text(p.child_by_field_name("name")) for p in params.named_children] if params is not None else []
    )
    if prefix is None or not names:
        return False
    inner = dict(routers)
    inner[names[0]] = (routers[operand][0], join_paths(routers[operand][1], prefix))
    _walk(http, args[-1], dict(env), inner, scope, owner)
    return True


def http_facts(root: Any, facts: FileFacts, columns: Columns) -> HttpFacts | None:
    """The routes, routers, mounts, requests and URL constants of the file whose tree is ``root``."""
    http = _Http(facts, columns)
    for node in root.named_children:
        if node.type == "function_declaration":
            named = _named(node)
            http.functions[named[0]] = named
    env: dict[str, Value] = {}
    _walk(http, root, env, {}, None, "")
    for name, (base, text) in env.items():
        kept = constant(base, text)
        if kept is not None:
            http.http.constants[name] = kept
    return http.http or None
