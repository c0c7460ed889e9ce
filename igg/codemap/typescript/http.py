"""TypeScript/JavaScript HTTP routes and requests (``igg.codemap.routes``), from the tree the analyzer parsed.

Servers: Express (``app.get('/p', handler)``, ``router.route('/p').get(h)``, ``Router()`` mounted with
``app.use('/prefix', router)``, the router imported from another file of the tree). Clients: ``fetch(url,
{method})``, axios (``axios.get``, ``axios({method, url})``, clients of ``axios.create({baseURL})``, in this
file or imported). A URL is what the code decides: literals, template literals and ``+`` over constants of the
file, of the enclosing function, or imported from another file of the tree (the join looks those up).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Any

from igg.codemap.columns import Columns
from igg.codemap.facts import FileFacts, HttpFacts, MountDecl, RequestDecl, RouteDecl
from igg.codemap.routes import METHODS, Value, clean_url, concat, constant, normalize
from igg.codemap.typescript.syntax import text_of

HINTS = ("express", "fetch", "axios", "http://", "https://", "Router", "baseURL", "BASE", "base_url", "Base")
"""A file without any of these has no route nor request (its tree is not read again)."""


def hinted(text: str) -> bool:
    """Whether ``text`` has one of ``HINTS`` (substring tests: a regex costs more than the rest on most
    files)."""
    return any(h in text for h in HINTS)


_VERBS = {**{m.lower(): m for m in METHODS}, "all": "*"}
_RELEVANT = {*_VERBS, "use"}
_FUNCTIONS = (
    "function_declaration",
    "generator_function_declaration",
    "method_definition",
    "arrow_function",
    "function_expression",
    "function",
)
"""(the imported constant a URL starts with, or None; the rest, ``{}`` for what is computed)."""
Scope = tuple[str, int, int] | None


def _args(call: Any) -> list[Any]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _prop(obj: Any, key: str) -> Any:
    """The value of property ``key`` of an object literal (None when absent)."""
    if obj is None or obj.type != "object":
        return None
    for pair in obj.named_children:
        if pair.type == "pair" and text_of(pair.child_by_field_name("key")).strip("'\"") == key:
            return pair.child_by_field_name("value")
        if pair.type == "shorthand_property_identifier" and text_of(pair) == key:
            return pair
    return None


class _Http:
    def __init__(self, facts: FileFacts, columns: Columns) -> None:
        self.facts = facts
        self.columns = columns
        self.http = HttpFacts()
        self.imported: dict[str, str] = {}
        folder = posixpath.dirname(facts.path)
        self.namespaces: dict[str, str] = {}
        """``import * as users from './users'``: local name -> the file's path without its suffix."""
        for i in facts.imports:
            if i.source is None or not i.source.startswith(".") or i.member is None:
                continue
            local = i.alias if i.alias and not i.alias.startswith("export:") else i.member
            where = posixpath.normpath(posixpath.join(folder, i.source))
            where = where.rsplit(".", 1)[0] if re.search(r"\.[cm]?[jt]sx?$", where) else where
            if i.member == "*":
                if local and local != "*" and not local.startswith("export:"):
                    self.namespaces[str(local)] = where
                continue
            self.imported[str(local)] = f"path:{where}#{i.member}"
        self.functions: dict[str, tuple[str, int, int]] = {}
        self.clients: dict[str, Value] = {}
        self.request_objects: dict[str, Any] = {}
        """Locals bound to ``new Request(url, init)``: what ``fetch(request)`` requests."""

    def value(self, node: Any, env: dict[str, Value]) -> Value | None:
        if node is None:
            return None
        kind = node.type
        if kind == "string":
            return None, text_of(node)[1:-1]
        if kind == "template_string":
            parts: list[Value | None] = []
            for child in node.named_children:
                if child.type == "template_substitution":
                    inner = child.named_children[0] if child.named_children else None
                    parts.append(self.value(inner, env))
                else:
                    parts.append((None, text_of(child)))
            text = text_of(node)
            if len(text) > 2 and not parts:
                return None, text[1:-1]
            return concat(parts) if not text.startswith("`${") or parts else None
        if kind == "binary_expression" and text_of(node.child_by_field_name("operator")) == "+":
            return concat(
                [
                    self.value(node.child_by_field_name("left"), env),
                    self.value(node.child_by_field_name("right"), env),
                ]
            )
        if kind == "identifier":
            name = text_of(node)
            if name in env:
                return env[name]
            ref = self.imported.get(name)
            return (ref, "") if ref is not None else None
        if kind == "member_expression":  # config.apiUrl, of an object literal of the file or imported
            obj, prop = node.child_by_field_name("object"), text_of(node.child_by_field_name("property"))
            if obj is not None and obj.type == "identifier":
                dotted = f"{text_of(obj)}.{prop}"
                if dotted in env:
                    return env[dotted]
                ref = self.imported.get(text_of(obj))
                return (f"{ref}.{prop}", "") if ref is not None else None
            return None
        if kind == "parenthesized_expression" and node.named_children:
            return self.value(node.named_children[0], env)
        return None

    def declare(self, node: Any, env: dict[str, Value], top: bool) -> None:
        """``const NAME = <string>`` and ``const api = axios.create({baseURL})`` / ``express()`` /
        ``Router()``."""
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is None or value is None or name.type != "identifier":
            return
        local = text_of(name)
        if value.type == "call_expression":
            callee = text_of(value.child_by_field_name("function"))
            if top and self.router_expression(value, local):
                return
            if callee == "axios.create":
                opts = _args(value)
                base = self.value(_prop(opts[0], "baseURL"), env) if opts else (None, "")
                if base is not None:
                    self.clients[local] = base
                    if top:
                        self.http.constants[local] = constant(base[0], base[1]) or "/"
                return
        if value.type == "new_expression" and text_of(value.child_by_field_name("constructor")) == "Request":
            self.request_objects[local] = value  # const request = new Request('/api/token', {method: 'POST'})
            return
        if value.type == "object":  # const config = { apiUrl: "http://..." }: config.apiUrl
            for pair in value.named_children:
                key = pair.child_by_field_name("key") if pair.type == "pair" else None
                found = self.value(pair.child_by_field_name("value"), env) if key is not None else None
                if found is not None:
                    env[f"{local}.{text_of(key).strip(chr(34) + chr(39))}"] = found
            return
        found = self.value(value, env)
        if found is not None:
            env[local] = found
        else:
            env.pop(local, None)

    def router_expression(self, value: Any, local: str) -> bool:
        """``express()``, ``Router()`` or ``Router().use(a).use('/p', b)`` bound to ``local`` (``default``:
        the module's default export): a router, with its mounts. A ``Router()`` serves nothing until
        mounted."""
        uses = []
        node = value
        while node is not None and node.type == "call_expression":
            func = node.child_by_field_name("function")
            if (
                func is not None
                and func.type == "member_expression"
                and text_of(func.child_by_field_name("property")) == "use"
            ):
                uses.append(node)
                node = func.child_by_field_name("object")
                continue
            callee = text_of(func)
            if callee not in ("express", "Router", "express.Router"):
                return False
            self.http.routers[local] = ""
            if callee != "express":
                self.http.mounted_only.append(local)
            for use in reversed(uses):
                self.mount(use, local)
            return True
        return False

    def relevant(self, node: Any) -> bool:
        """Whether a call the query found may be a route, a mount or a request (``fetch``, ``axios``, a method
        of a router, a client or an imported name, a ``route(...)`` chain)."""
        func = node.child_by_field_name("function")
        if func is None:
            return False
        if func.type == "identifier":
            return text_of(func) in ("fetch", "axios")
        if func.type != "member_expression" or text_of(func.child_by_field_name("property")) not in _RELEVANT:
            return False
        obj = func.child_by_field_name("object")
        if obj is None:
            return False
        if obj.type == "call_expression":
            return True
        name = text_of(obj)
        return (
            name == "axios"
            or name in self.http.routers
            or name in self.clients
            or name in self.imported
            or name in self.namespaces
        )

    def call(self, node: Any, env: dict[str, Value], scope: Scope) -> None:
        func = node.child_by_field_name("function")
        if func is None:
            return
        if func.type == "identifier":
            name = text_of(func)
            if name == "fetch":
                self.fetch(node, env, scope)
            elif name == "axios":
                self.axios_config(node, env, scope)
            return
        if func.type != "member_expression":
            return
        obj, prop = func.child_by_field_name("object"), text_of(func.child_by_field_name("property"))
        receiver = text_of(obj) if obj is not None and obj.type == "identifier" else None
        if receiver in self.http.routers:
            if prop in _VERBS:
                self.route(node, receiver, None, _VERBS[prop])
            elif prop == "use":
                self.mount(node, receiver)
        elif obj is not None and obj.type == "call_expression" and prop in _VERBS:
            self.chained(node, _VERBS[prop])
        elif prop in _VERBS and prop != "all" and receiver is not None:
            self.client(node, receiver, _VERBS[prop], env, scope)

    def route(self, node: Any, router: str, path: str | None, method: str) -> None:
        args = _args(node)
        if path is None:
            if len(args) < 2 or args[0].type != "string":
                return
            path, args = text_of(args[0])[1:-1], args[1:]
        handler = args[-1] if args else None
        scope, ref = self.enclosing(node), None
        if handler is not None and handler.type == "identifier":
            name = text_of(handler)
            if name in self.functions:
                scope = self.functions[name]
            elif name in self.imported:  # import { listUsers } from './handlers'
                ref = self.imported[name]
        elif handler is not None and handler.type == "member_expression":  # users.list, of an imported module
            obj, prop = (
                handler.child_by_field_name("object"),
                text_of(handler.child_by_field_name("property")),
            )
            name = text_of(obj) if obj is not None and obj.type == "identifier" else ""
            if name in self.namespaces:
                ref = f"path:{self.namespaces[name]}#{prop}"
            elif name in self.imported:  # a default-exported object or class of handlers
                ref = f"{self.imported[name].rpartition('#')[0]}#.{prop}"
        line, column = self.columns.at(node.child_by_field_name("function").child_by_field_name("property"))
        self.http.routes.append(
            RouteDecl(
                method=method,
                path=normalize(path),
                router=router,
                scope=scope,
                handler=ref,
                line=line,
                column=column,
            )
        )

    def chained(self, node: Any, method: str) -> None:
        """``router.route('/p').get(h).post(h2)``."""
        inner = node.child_by_field_name("function").child_by_field_name("object")
        while inner is not None and inner.type == "call_expression":
            func = inner.child_by_field_name("function")
            if func is None or func.type != "member_expression":
                return
            obj, prop = func.child_by_field_name("object"), text_of(func.child_by_field_name("property"))
            if prop == "route" and obj is not None and text_of(obj) in self.http.routers:
                args = _args(inner)
                if args and args[0].type == "string":
                    self.route(node, text_of(obj), text_of(args[0])[1:-1], method)
                return
            inner = obj

    def mount(self, node: Any, router: str) -> None:
        args = _args(node)
        if not args or args[-1].type != "identifier":
            return
        prefix = text_of(args[0])[1:-1] if len(args) > 1 and args[0].type == "string" else ""
        name = text_of(args[-1])
        child = (
            f"local:{name}"
            if name in self.http.routers
            else self.imported.get(name)
            or (f"path:{self.namespaces[name]}#=" if name in self.namespaces else None)
        )  # require(): module.exports
        if (
            child is not None
        ):  # app.use('/p', router), app.use(router); a middleware named alike is no router there
            self.http.mounts.append(
                MountDecl(prefix=normalize(prefix), router=router, child=child, line=node.start_point[0] + 1)
            )

    def fetch(self, node: Any, env: dict[str, Value], scope: Scope) -> None:
        args = _args(node)
        if len(args) == 1 and args[0].type == "identifier" and text_of(args[0]) in self.request_objects:
            args = _args(self.request_objects[text_of(args[0])])  # fetch(request) of a new Request(url, init)
        method = self.method(_prop(args[1], "method")) if len(args) > 1 else "GET"
        if args and method:
            self.request(node, node.child_by_field_name("function"), method, self.value(args[0], env), scope)

    def axios_config(self, node: Any, env: dict[str, Value], scope: Scope) -> None:
        args = _args(node)
        if args and args[0].type == "object":
            method = self.method(_prop(args[0], "method"))
            if method:
                self.request(
                    node,
                    node.child_by_field_name("function"),
                    method,
                    self.value(_prop(args[0], "url"), env),
                    scope,
                )

    def client(self, node: Any, receiver: str, method: str, env: dict[str, Value], scope: Scope) -> None:
        args = _args(node)
        base: Value | None
        if receiver == "axios":
            base = (None, "")
        elif receiver in self.clients:
            base = self.clients[receiver]
        elif receiver in self.imported:
            base = (self.imported[receiver], "")
        elif receiver in self.namespaces:  # const api = require("./api"): its module.exports
            base = (f"path:{self.namespaces[receiver]}#=", "")
        else:
            return
        url = self.value(args[0], env) if args else None
        if url is not None and url[0] is None and not re.match(r"https?://", url[1]):
            url = base[0], base[1].rstrip("/") + "/" + url[1].lstrip("/") if base[1] else url[1]
        self.request(
            node, node.child_by_field_name("function").child_by_field_name("property"), method, url, scope
        )

    def method(self, node: Any) -> str | None:
        if node is None:
            return "GET"
        text = text_of(node).strip("'\"`").upper()
        return text if node.type == "string" and text in METHODS else None

    def request(self, node: Any, at: Any, method: str, url: Value | None, scope: Scope) -> None:
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
            if node.type in _FUNCTIONS:
                named = _named(node)
                if named is not None:
                    return named
            node = node.parent
        return None


def _named(node: Any) -> tuple[str, int, int] | None:
    """(name, first line, last line) of a function the analyzer declares (a named function, a method, a
    function bound to a ``const``); None for an anonymous one (an inline callback belongs to its enclosing
    function)."""
    name = node.child_by_field_name("name")
    span = node
    if name is None and node.parent is not None and node.parent.type == "variable_declarator":
        name, span = node.parent.child_by_field_name("name"), node.parent.parent
    if name is None or name.type not in ("identifier", "property_identifier"):
        return None
    if span.parent is not None and span.parent.type == "export_statement":
        span = span.parent
    return text_of(name), span.start_point[0] + 1, span.end_point[0] + 1


_PAREN = re.compile(r"\s*\(")


def _calls(text: str, imported: Iterable[str]) -> bool:
    """Whether the file may register a route or make a request: it names ``axios``, ``express`` or
    ``Router(``, calls ``fetch(`` bare, or calls a verb on an imported name (else only its constants are read:
    no query runs). Substring tests first: a regex over the whole text costs more than the rest."""
    if "axios" in text or "express" in text or "Router(" in text:
        return True
    i = text.find("fetch")
    while i >= 0:
        if (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "._$")) and _PAREN.match(text, i + 5):
            return True
        i = text.find("fetch", i + 5)
    return any(f"{n}.{v}(" in text for n in imported for v in _VERBS)


def http_facts(
    root: Any, facts: FileFacts, columns: Columns, calls: list[Any], text: str
) -> HttpFacts | None:
    """The routes, routers, mounts, requests and URL constants of the file whose tree is ``root`` (``calls``:
    its calls, in document order, as the analyzer's query found them): the module's declarations first
    (routers, clients, constants, named functions), then each call a query finds that may be a route or a
    request, with the locals of the functions around it (declared before it)."""
    http = _Http(facts, columns)
    env: dict[str, Value] = {}
    for node in root.named_children:  # named functions first: a route may name one declared below it
        inner = node.named_children[0] if node.type == "export_statement" and node.named_children else node
        for each in [
            inner,
            *(
                d.child_by_field_name("value")
                for d in inner.named_children
                if d.type == "variable_declarator"
            ),
        ]:
            if each is not None and each.type in _FUNCTIONS:
                named = _named(each)
                if named is not None:
                    http.functions[named[0]] = named
        if (
            node.type == "export_statement" and inner.type == "call_expression"
        ):  # export default Router().use(...)
            http.router_expression(inner, "default")
        if inner.type in ("lexical_declaration", "variable_declaration"):
            for d in inner.named_children:
                if d.type == "variable_declarator":
                    http.declare(d, env, True)
    local: dict[
        int, list[Any]
    ] = {}  # function -> the declarators inside it (not in a nested function), when read
    for call in calls if _calls(text, [*http.imported, *http.namespaces]) else ():
        if http.relevant(
            call
        ):  # most calls, and most ``x.get(...)`` (maps, headers): their locals are not read
            http.call(call, _env(http, call, env, local), http.enclosing(call))
    for name, (base, text) in env.items():
        kept = constant(base, text)
        if kept is not None:
            http.http.constants[name] = kept
    return http.http or None


def _function(node: Any) -> Any:
    node = node.parent
    while node is not None and node.type not in _FUNCTIONS:
        node = node.parent
    return node


def _declarators(fn: Any) -> list[Any]:
    """The variable declarators of function ``fn``'s own body (nested functions left out), in source order."""
    out, stack = [], list(reversed(fn.named_children))
    while stack:
        node = stack.pop()
        if node.type == "variable_declarator":
            out.append(node)
        if node.type not in _FUNCTIONS:
            stack.extend(reversed(node.named_children))
    return out


def _env(http: _Http, call: Any, top: dict[str, Value], local: dict[int, list[Any]]) -> dict[str, Value]:
    """The names bound where ``call`` stands: the module's, then each enclosing function's declared before
    it."""
    chain = []
    node = _function(call)
    while node is not None:
        chain.append(node)
        node = _function(node)
    if not chain:
        return top
    env = dict(top)
    for fn in reversed(chain):
        if fn.id not in local:
            local[fn.id] = _declarators(fn)
        for d in local[fn.id]:
            if d.start_byte < call.start_byte:
                http.declare(d, env, False)
    return env
