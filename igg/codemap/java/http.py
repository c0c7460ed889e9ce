"""Java's HTTP routes and requests (``igg.codemap.routes``), from the tree the analyzer parsed.

Servers: Spring (``@RequestMapping`` on a ``@RestController``/``@Controller`` class for the prefix,
``@GetMapping``, ``@PostMapping``, ... and ``@RequestMapping(method = ...)`` on its methods). Clients:
``RestTemplate`` (``getForObject``, ``postForEntity``, ``put``, ``delete``, ``exchange(url, HttpMethod.X,
...)``) and ``WebClient`` (``client.get().uri("/p/{id}", id)``, ``method(HttpMethod.X)``; its base from
``WebClient.create(url)`` or ``WebClient.builder().baseUrl(url)``). A URL is what the code decides: literals,
``+`` and ``String.format`` over constants of the class or locals of the method; a client whose base the code
does not decide draws nothing.
"""

from __future__ import annotations

import re
from typing import Any

from igg.codemap.columns import Columns
from igg.codemap.facts import FileFacts, HttpFacts, RequestDecl, RouteDecl
from igg.codemap.routes import METHODS, join_paths, normalize

HINTS = ("springframework", "RestTemplate", "WebClient")
"""A file without any of these has no route nor request (its tree is not walked again)."""


def hinted(text: str) -> bool:
    """Whether ``text`` has one of ``HINTS`` (substring tests: a regex costs more than the rest on most
    files)."""
    return any(h in text for h in HINTS)


_MAPPINGS = {
    "GetMapping": "GET",
    "PostMapping": "POST",
    "PutMapping": "PUT",
    "DeleteMapping": "DELETE",
    "PatchMapping": "PATCH",
    "RequestMapping": "*",
}
_REST = {
    "getForObject": "GET",
    "getForEntity": "GET",
    "postForObject": "POST",
    "postForEntity": "POST",
    "postForLocation": "POST",
    "put": "PUT",
    "delete": "DELETE",
    "patchForObject": "PATCH",
    "headForHeaders": "HEAD",
    "optionsForAllow": "OPTIONS",
}
_WEB = {m.lower(): m for m in METHODS}
Value = tuple[str | None, str]
Scope = tuple[str, int, int] | None


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _args(node: Any) -> list[Any]:
    args = node.child_by_field_name("arguments")
    return (
        [a for a in args.named_children if a.type not in ("comment", "line_comment", "block_comment")]
        if args
        else []
    )


def _annotations(node: Any) -> list[Any]:
    mods = next((c for c in node.children if c.type == "modifiers"), None)
    return (
        [a for a in mods.named_children if a.type in ("annotation", "marker_annotation")]
        if mods is not None
        else []
    )


def _strings(node: Any) -> list[str] | None:
    """The string(s) of an annotation value: ``"/a"`` or ``{"/a", "/b"}`` (None when not literal)."""
    if node is None:
        return None
    if node.type == "string_literal":
        return [_text(node)[1:-1]]
    if node.type == "element_value_array_initializer":
        found = [_text(c)[1:-1] for c in node.named_children if c.type == "string_literal"]
        return found if len(found) == len(node.named_children) else None
    return None


def _element(annotation: Any, *keys: str) -> Any:
    """The value of the first of ``keys`` given to ``annotation`` (``value`` also when given alone)."""
    args = annotation.child_by_field_name("arguments")
    if args is None:
        return None
    for child in args.named_children:
        if child.type == "element_value_pair":
            if _text(child.child_by_field_name("key")) in keys:
                return child.child_by_field_name("value")
        elif "value" in keys:
            return child
    return None


def _paths(annotation: Any) -> list[str] | None:
    if annotation.type == "marker_annotation" or annotation.child_by_field_name("arguments") is None:
        return [""]
    value = _element(annotation, "value", "path")
    return [""] if value is None else _strings(value)


def _methods(annotation: Any, default: str) -> list[str]:
    value = _element(annotation, "method") if annotation.type == "annotation" else None
    if value is None:
        return [default]
    found = re.findall(r"RequestMethod\.(\w+)", _text(value)) or re.findall(r"\b([A-Z]+)\b", _text(value))
    return [m for m in found if m in METHODS] or [default]


class _Http:
    def __init__(self, facts: FileFacts, columns: Columns) -> None:
        self.facts = facts
        self.columns = columns
        self.http = HttpFacts()
        self.rest: set[str] = set()
        """Names of ``RestTemplate`` fields and locals."""
        self.web: dict[str, Value | None] = {}
        """Names of ``WebClient`` fields and locals -> their base (None: not decided by the code)."""

    def value(self, node: Any, env: dict[str, Value]) -> Value | None:
        if node is None:
            return None
        kind = node.type
        if kind == "string_literal":
            return None, _text(node)[1:-1]
        if kind == "binary_expression" and _text(node.child_by_field_name("operator")) == "+":
            return _concat(
                [
                    self.value(node.child_by_field_name("left"), env),
                    self.value(node.child_by_field_name("right"), env),
                ]
            )
        if kind == "identifier":
            return env.get(_text(node))
        if kind == "field_access" and _text(node.child_by_field_name("object")) == "this":
            return env.get(_text(node.child_by_field_name("field")))
        if (
            kind == "method_invocation"
            and _text(node.child_by_field_name("object")) == "String"
            and _text(node.child_by_field_name("name")) == "format"
        ):
            args = _args(node)
            fmt = self.value(args[0], env) if args else None
            if fmt is None:
                return None
            texts = re.split(r"%[-+ #0-9.]*[sdfx]", fmt[1])
            parts: list[Value | None] = [(None, texts[0])] if texts[0] else []
            for i, rest in enumerate(texts[1:]):
                parts.append(self.value(args[i + 1], env) if i + 1 < len(args) else None)
                parts.append((None, rest))
            return _concat(parts)
        if kind == "parenthesized_expression" and node.named_children:
            return self.value(node.named_children[0], env)
        return None

    def declare(self, type_node: Any, declarator: Any, env: dict[str, Value]) -> None:
        """A field or local: a ``RestTemplate``, a ``WebClient`` (its base), a ``String`` constant."""
        name = _text(declarator.child_by_field_name("name"))
        value = declarator.child_by_field_name("value")
        written = _text(type_node)
        if written == "RestTemplate":
            self.rest.add(name)
        elif written in ("WebClient", "WebClient.Builder"):
            self.web[name] = self.web_base(value, env) if value is not None else None
        elif value is not None:
            found = self.value(value, env)
            if found is not None:
                env[name] = found

    def web_base(self, node: Any, env: dict[str, Value]) -> Value | None:
        """The base of ``WebClient.create(url)`` / ``WebClient.builder().baseUrl(url).build()``."""
        while node is not None and node.type == "method_invocation":
            name = _text(node.child_by_field_name("name"))
            args = _args(node)
            if name == "baseUrl" or (
                name == "create" and _text(node.child_by_field_name("object")) == "WebClient"
            ):
                return self.value(args[0], env) if args else (None, "")
            node = node.child_by_field_name("object")
        return None

    def mapping(self, method: Any, prefixes: list[str]) -> None:
        for a in _annotations(method):
            name = _text(a.child_by_field_name("name")).rpartition(".")[2]
            if name not in _MAPPINGS:
                continue
            paths = _paths(a)
            if paths is None:
                continue
            line, column = self.columns.at(a)
            scope = (
                _text(method.child_by_field_name("name")),
                method.start_point[0] + 1,
                method.end_point[0] + 1,
            )
            for verb in _methods(a, _MAPPINGS[name]):
                for prefix in prefixes:
                    for path in paths:
                        self.http.routes.append(
                            RouteDecl(
                                method=verb,
                                path=join_paths(prefix, path),
                                scope=scope,
                                line=line,
                                column=column,
                            )
                        )

    def call(self, node: Any, env: dict[str, Value], scope: Scope) -> None:
        name = _text(node.child_by_field_name("name"))
        obj = node.child_by_field_name("object")
        receiver = _text(obj).removeprefix("this.") if obj is not None else ""
        args = _args(node)
        if receiver in self.rest and (name in _REST or name == "exchange"):
            method = _REST.get(name) or (self.http_method(args[1]) if len(args) > 1 else None)
            if method is not None and args:
                self.request(node, method, (None, ""), self.value(args[0], env), scope)
        elif name == "uri" and obj is not None and obj.type == "method_invocation" and args:
            verb = _text(obj.child_by_field_name("name"))
            inner = obj.child_by_field_name("object")
            client = _text(inner).removeprefix("this.") if inner is not None else ""
            method = _WEB.get(verb) or (
                self.http_method(_args(obj)[0]) if verb == "method" and _args(obj) else None
            )
            if method is not None and client in self.web:
                base = self.web[client]
                if base is not None:
                    self.request(node, method, base, self.value(args[0], env), scope)

    @staticmethod
    def http_method(node: Any) -> str | None:
        m = re.fullmatch(r"(?:[\w.]+\.)?HttpMethod\.(\w+)", _text(node))
        return m.group(1) if m and m.group(1) in METHODS else None

    def request(self, node: Any, method: str, base: Value, url: Value | None, scope: Scope) -> None:
        if url is None or url[0] is not None:
            return
        text = url[1]
        if base[1] and not re.match(r"https?://", text):
            text = base[1].rstrip("/") + "/" + text.lstrip("/")
        elif not re.match(r"https?://", text):
            return  # a relative URL on a client whose base the code does not decide
        line, column = self.columns.at(node.child_by_field_name("name"))
        self.http.requests.append(
            RequestDecl(method=method, url=_clean(text), scope=scope, line=line, column=column)
        )


def _concat(parts: list[Value | None]) -> Value | None:
    if not parts or parts[0] is None:
        return None
    base, text = parts[0]
    for part in parts[1:]:
        text += "{}" if part is None or part[0] is not None else part[1]
    return None if text.startswith("{}") else (base, text)


def _clean(url: str) -> str:
    m = re.match(r"^(https?://[^/?#]*)(.*)$", url)
    return m.group(1) + normalize(m.group(2)) if m else normalize(url)


def _class(http: _Http, node: Any, env: dict[str, Value]) -> None:
    body = node.child_by_field_name("body")
    if body is None:
        return
    annotations = {_text(a.child_by_field_name("name")).rpartition(".")[2]: a for a in _annotations(node)}
    controller = bool({"RestController", "Controller"} & annotations.keys())
    prefixes = _paths(annotations["RequestMapping"]) if "RequestMapping" in annotations else [""]
    env = dict(env)
    for member in body.named_children:  # fields first: a method may use one declared below it
        if member.type in ("field_declaration", "constant_declaration"):
            for d in member.named_children:
                if d.type == "variable_declarator":
                    http.declare(member.child_by_field_name("type"), d, env)
    for member in body.named_children:
        if member.type in ("method_declaration", "constructor_declaration"):
            if controller and prefixes is not None and member.type == "method_declaration":
                http.mapping(member, prefixes)
            scope = (
                _text(member.child_by_field_name("name")),
                member.start_point[0] + 1,
                member.end_point[0] + 1,
            )
            _body(http, member, dict(env), scope)
        elif member.type in (
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
        ):
            _class(http, member, env)


def _body(http: _Http, node: Any, env: dict[str, Value], scope: Scope) -> None:
    for child in node.named_children:
        if child.type in ("class_declaration", "class_body"):
            continue
        _body(http, child, env, scope)
        if child.type == "local_variable_declaration":
            for d in child.named_children:
                if d.type == "variable_declarator":
                    http.declare(child.child_by_field_name("type"), d, env)
        elif child.type == "formal_parameter" and _text(child.child_by_field_name("type")) == "RestTemplate":
            http.rest.add(_text(child.child_by_field_name("name")))
        elif child.type == "assignment_expression":  # this.client = builder.baseUrl("http://orders").build();
            target = _text(child.child_by_field_name("left")).removeprefix("this.")
            if target in http.web and http.web[target] is None:
                http.web[target] = http.web_base(child.child_by_field_name("right"), env)
        elif child.type == "method_invocation":
            http.call(child, env, scope)


def http_facts(root: Any, facts: FileFacts, columns: Columns) -> HttpFacts | None:
    """The routes and requests of the Java file whose tree is ``root``."""
    http = _Http(facts, columns)
    for node in root.named_children:
        if node.type in (
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
        ):
            _class(http, node, {})
    return http.http or None
