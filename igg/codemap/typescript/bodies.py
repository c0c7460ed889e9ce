"""The bodies of TypeScript/JavaScript callables: calls with what the source says of their receiver, ``new``,
``import()``/``require()`` with a literal (a ``require`` bound to a name is an import binding), and SQL in
string and template literals. ``analyze._Analyzer`` extends ``Bodies`` with the declarations."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from igg.codemap.facts import CallableDecl, CallRef, FileFacts, TypeDecl
from igg.codemap.sql import tables_at
from igg.codemap.typescript.syntax import dotted, literal, text_of, type_name

Span = tuple[int, int, CallableDecl, TypeDecl | None, dict[str, str]]
"""(start byte, end byte, callable, its type, its parameters: name -> declared type, '' where none)."""


class Bodies:
    """What the bodies of one file's callables say (``spans``: the callables, filled by the declarations)."""

    facts: FileFacts
    spans: list[Span]
    at: Callable[[Any], tuple[int, int]]
    """(line, column) where a node starts (``igg.codemap.columns.Columns.at``)."""
    call_nodes: list[Any]
    parents: list[int]
    """Each span's enclosing span (index into ``spans``; -1: none)."""
    qualified: dict[int, str]
    """Each callable (by id) as nested names are qualified: ``f``, ``Class.method``."""
    functions: set[str]
    type_names: set[str]
    """The names of the file's types (local ones ``outer.Local``)."""
    """The names of the file's functions (nested ones ``outer.inner``)."""
    """Every call of the file, in document order (``bodies`` finds them; the HTTP reading reuses them)."""

    def add_import(
        self,
        source: str,
        *,
        member: str | None = None,
        alias: str | None = None,
        wildcard: bool = False,
        line: int = 0,
        column: int = 0,
    ) -> None:
        raise NotImplementedError

    def bodies(self, captures: dict[str, list[Any]]) -> None:
        self.spans.sort(key=lambda s: (s[0], -s[1]))
        starts = [s[0] for s in self.spans]
        self.parents = _parents(self.spans)
        self.qualified = {
            id(s[2]): f"{s[3].name}.{s[2].name}" if s[3] is not None else s[2].name for s in self.spans
        }
        self.functions = {c.name for c in self.facts.callables if c.owner is None}
        self.type_names = {t.name for t in self.facts.types}
        # in document order: the cursor's order is not stable from one process to the next
        scopes: dict[int, dict[str, str]] = {id(s[2]): dict(s[4]) for s in self.spans}
        for decl in captures.get(
            "decl", ()
        ):  # locals, of declared or constructed type where known, per callable
            at = self._innermost(starts, decl.start_byte)
            span = self.spans[at] if at >= 0 else None
            name, value = decl.child_by_field_name("name"), decl.child_by_field_name("value")
            typed = type_name(decl.child_by_field_name("type"))
            if typed is None and value is not None and value.type == "new_expression":
                made = value.child_by_field_name("constructor")
                typed = dotted(made) if made is not None else None
            if span is not None and name is not None:
                typed = self._qualify(at, typed) if typed else typed
                scopes[id(span[2])][text_of(name)] = typed or scopes[id(span[2])].get(text_of(name)) or ""
        for i, parent in enumerate(self.parents):  # a nested callable sees its enclosing ones' names
            if parent >= 0:
                own = scopes[id(self.spans[i][2])]
                scopes[id(self.spans[i][2])] = {**scopes[id(self.spans[parent][2])], **own}
        for node in captures.get("require_source", ()):
            self._dynamic(node)
        self.call_nodes = captures.get("call", [])
        for call in self.call_nodes:
            self._call(call, starts, scopes)
        for made in captures.get("new", ()):
            at = self._innermost(starts, made.start_byte)
            constructor = made.child_by_field_name("constructor")
            written = dotted(constructor) if constructor is not None else None
            if at >= 0 and written and written.partition(".")[0] not in scopes[id(self.spans[at][2])]:
                self.spans[at][2].instantiates.append((self._qualify(at, written), *self.at(made)))
        for string in captures.get("string", ()):
            self._sql(string, starts)

    def _span(self, starts: list[int], at: int) -> Any:
        """The innermost callable whose span holds byte ``at`` (None: module-level code)."""
        i = self._innermost(starts, at)
        return self.spans[i] if i >= 0 else None

    def _innermost(self, starts: list[int], at: int) -> int:
        i = bisect.bisect_right(starts, at) - 1
        while i >= 0 and not self.spans[i][0] <= at < self.spans[i][1]:
            i = self.parents[i]
        return i

    def _qualify(self, i: int, written: str) -> str:
        """A type ``written`` in span ``i``: ``outer.Local...`` when a type of its first name is declared in
        the span's callable or an enclosing one (innermost first), else as written."""
        head = written.partition(".")[0]
        while i >= 0:
            found = f"{self.qualified[id(self.spans[i][2])]}.{head}"
            if found in self.type_names:
                return found + written[len(head) :]
            i = self.parents[i]
        return written

    def _nested(self, i: int, name: str) -> str | None:
        """The function nested in span ``i``'s callable or an enclosing one that a bare ``name`` calls
        (``outer.name``), innermost first; None when none is declared."""
        while i >= 0:
            found = f"{self.qualified[id(self.spans[i][2])]}.{name}"
            if found in self.functions:
                return found
            i = self.parents[i]
        return None

    def _dynamic(self, string: Any) -> None:
        source = literal(string)
        if source is not None:
            line, column = self.at(string)
            self.add_import(source, line=line, column=column)

    def _call(self, call: Any, starts: list[int], scopes: dict[int, dict[str, str]]) -> None:
        function = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        if function is None:
            return
        if function.type == "import" or function.type == "identifier" and text_of(function) == "require":
            first = args.named_children[0] if args is not None and args.named_children else None
            if first is not None and first.type == "string":
                if function.type == "import" or not self._required(call, first):
                    self._dynamic(first)
            return
        at = self._innermost(starts, call.start_byte)
        if at < 0:
            return
        span = self.spans[at]
        decl, owner = span[2], span[3]
        # the called name (``f`` of ``a.b.f()``): each call of a chain spread over lines keeps its own line
        called = function.child_by_field_name("property") if function.type == "member_expression" else None
        line, column = self.at(called if called is not None else function)
        n = len(args.named_children) if args is not None else 0
        arg_types: tuple[str | None, ...] = (None,) * n
        if function.type == "super":
            decl.calls.append(
                CallRef(name="<init>", receiver="super", arg_types=arg_types, line=line, column=column)
            )
            return
        scope = scopes.get(id(decl), {})
        if function.type == "identifier":
            nested = self._nested(at, text_of(function)) if self.functions else None
            if nested is not None:
                decl.calls.append(CallRef(name=nested, arg_types=arg_types, line=line, column=column))
            elif text_of(function) not in scope:  # a local or parameter holding a function: not knowable
                decl.calls.append(
                    CallRef(name=text_of(function), arg_types=arg_types, line=line, column=column)
                )
            return
        if function.type == "member_expression":
            ref = _member_call(function, owner, scope, line, column, arg_types)
            if ref is not None:
                decl.calls.append(ref)

    def _required(self, call: Any, string: Any) -> bool:
        """``const x = require('./m')`` binds ``x`` to the module, ``const {a, b: c} = require('./m')`` binds
        ``a`` and ``c`` to its exports (as imports do); False when the call binds nothing."""
        source, parent = literal(string), call.parent
        if source is None or parent is None or parent.type != "variable_declarator":
            return False
        name = parent.child_by_field_name("name")
        line, column = self.at(string)
        if name is None:
            return False
        if name.type == "identifier":
            self.add_import(source, member="*", alias=text_of(name), line=line, column=column)
            return True
        if name.type != "object_pattern":
            return False
        bound = False
        for part in name.named_children:
            if part.type == "shorthand_property_identifier_pattern":
                self.add_import(source, member=text_of(part), alias=text_of(part), line=line, column=column)
                bound = True
            elif part.type == "pair_pattern":
                key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
                if key is not None and value is not None and value.type == "identifier":
                    self.add_import(
                        source, member=text_of(key), alias=text_of(value), line=line, column=column
                    )
                    bound = True
        return bound

    def _sql(self, string: Any, starts: list[int]) -> None:
        span = self._span(starts, string.start_byte)
        if span is None:
            return
        raw = text_of(string)
        if len(raw) < 8:
            return
        body = _HOLE.sub("{hole}", raw[1:-1]) if string.type == "template_string" else raw[1:-1]
        span[2].sql.extend(tables_at(body, partial(self.at, string)))


def captured(root: Any, query: Any) -> dict[str, list[Any]]:
    """The query's captures by name, each in document order (the cursor's order is not stable from one process
    to the next)."""
    import tree_sitter

    return {
        name: sorted(nodes, key=lambda n: (n.start_byte, n.end_byte))
        for name, nodes in tree_sitter.QueryCursor(query).captures(root).items()
    }


def _parents(spans: list[Span]) -> list[int]:
    """Each span's nearest enclosing span (its index; -1: none), ``spans`` sorted by start, outer first."""
    parents: list[int] = []
    stack: list[int] = []
    for i, span in enumerate(spans):
        start = span[0]
        while stack and spans[stack[-1]][1] <= start:
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)
    return parents


_HOLE = re.compile(r"\$\{[^{}]*\}")
"""A template literal's substitution, read as a template hole by the SQL detection."""


def _member_call(
    function: Any,
    owner: TypeDecl | None,
    scope: dict[str, str],
    line: int,
    column: int,
    arg_types: tuple[str | None, ...],
) -> CallRef | None:
    """The call of a method ``function`` (``a.b.f``) names, by what the source says of its receiver:
    ``this``/``super``, a field of the callable's type (``this.repo``), a local or parameter of declared type,
    or a dotted name no local shadows (a namespace import, a class); None when it says nothing."""
    obj, prop = function.child_by_field_name("object"), function.child_by_field_name("property")
    if obj is None or prop is None:
        return None
    name = text_of(prop)
    if obj.type in ("this", "super"):
        return CallRef(name=name, receiver=obj.type, arg_types=arg_types, line=line, column=column)
    written = dotted(obj)
    if written is None:
        return None
    head, _, rest = written.partition(".")
    if head == "this" and owner is not None and rest and "." not in rest and rest in owner.fields:
        return CallRef(
            name=name,
            receiver="var",
            receiver_type=owner.fields[rest],
            line=line,
            column=column,
            arg_types=arg_types,
        )
    if not rest and scope.get(head):
        return CallRef(
            name=name,
            receiver="var",
            receiver_type=scope[head],
            line=line,
            column=column,
            arg_types=arg_types,
        )
    if head != "this" and head not in scope:
        return CallRef(
            name=name, receiver="type", receiver_type=written, line=line, column=column, arg_types=arg_types
        )
    return None
