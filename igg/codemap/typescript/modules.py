"""The imports and exports of a TypeScript/JavaScript module: ES ``import`` and ``export`` statements
(re-exports as imports), ``import x = require()``, TypeScript's ``export =``, and CommonJS
``module.exports``/``exports.a``. ``analyze._Analyzer`` extends ``Modules`` with the declarations."""

from __future__ import annotations

from typing import Any

from igg.codemap.facts import ImportRef
from igg.codemap.typescript.bodies import Bodies
from igg.codemap.typescript.syntax import dotted, literal, text_of

FUNCTIONS = ("arrow_function", "function_expression", "function", "generator_function")
"""The node types of a function written as a value."""


class Modules(Bodies):
    """What one file imports and exports (``exports``: exported name -> its local binding)."""

    exports: dict[str, str]

    def statement(self, node: Any, prefix: str, exported: bool = False) -> None:
        raise NotImplementedError

    def function(
        self, node: Any, prefix: str, exported: bool, name: str | None = None, span: Any = None
    ) -> None:
        raise NotImplementedError

    def object_literal(self, node: Any, name: str) -> None:
        raise NotImplementedError

    def import_statement(self, node: Any) -> None:
        line, column = self.at(node)
        source = literal(node.child_by_field_name("source"))
        clause = next(
            (c for c in node.named_children if c.type in ("import_clause", "import_require_clause")), None
        )
        if clause is not None and clause.type == "import_require_clause":
            alias = clause.named_children[0] if clause.named_children else None
            source = literal(clause.child_by_field_name("source"))
            if source is not None:
                self.add_import(
                    source,
                    member="*",
                    alias=text_of(alias) if alias is not None else None,
                    line=line,
                    column=column,
                )
            return
        if source is None:
            return
        if clause is None:  # import './side-effect'
            self.add_import(source, line=line, column=column)
            return
        type_only = _type_only(node, clause.named_children)
        bound = False
        for part in clause.named_children:
            if part.type == "identifier":
                self.add_import(
                    source,
                    member="default",
                    alias=text_of(part),
                    line=line,
                    column=column,
                    type_only=type_only,
                )
                bound = True
            elif part.type == "namespace_import":
                ids = [c for c in part.named_children if c.type == "identifier"]
                self.add_import(
                    source,
                    member="*",
                    alias=text_of(ids[0]) if ids else None,
                    line=line,
                    column=column,
                    type_only=type_only,
                )
                bound = True
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    name = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias") or name
                    self.add_import(
                        source,
                        member=text_of(name),
                        alias=text_of(alias),
                        line=line,
                        column=column,
                        type_only=type_only,
                    )
                    bound = True
        if not bound:
            self.add_import(source, line=line, column=column, type_only=type_only)

    def add_import(
        self,
        source: str,
        *,
        member: str | None = None,
        alias: str | None = None,
        wildcard: bool = False,
        line: int = 0,
        column: int = 0,
        type_only: bool = False,
    ) -> None:
        self.facts.imports.append(
            ImportRef(
                target=source,
                source=source,
                member=member,
                alias=alias,
                wildcard=wildcard,
                line=line,
                column=column,
                type_only=type_only,
            )
        )

    def export_statement(self, node: Any, prefix: str) -> None:
        line, column = self.at(node)
        source = literal(node.child_by_field_name("source"))
        default = any(c.type == "default" for c in node.children)
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            names = self.declared_names(declaration, prefix)
            self.statement(declaration, prefix, exported=True)
            for name in names:
                self.exports["default" if default else name] = name
            return
        if any(c.type == "=" for c in node.children):  # TypeScript's export = X: the module is X
            named = [c for c in node.named_children if dotted(c)]
            if named:
                self.exports["="] = dotted(named[0]) or ""
            return
        value = node.child_by_field_name("value")
        if value is not None:
            self._export_default(value, default, prefix)
            return
        type_only = _type_only(node, node.named_children)
        for part in node.named_children:
            if part.type == "export_clause":
                self._export_clause(part, source, line, column, type_only)
            elif part.type == "namespace_export" and source is not None:
                ids = [c for c in part.named_children if c.type in ("identifier", "string")]
                alias = text_of(ids[0]) if ids else "*"
                self.add_import(
                    source, member="*", alias=f"export:{alias}", line=line, column=column, type_only=type_only
                )
                self.exports[alias] = f"export:{alias}"
        if source is not None and not any(
            p.type in ("export_clause", "namespace_export") for p in node.named_children
        ):
            self.add_import(
                source,
                member="*",
                wildcard=True,
                line=line,
                column=column,  # export * from './x'
                type_only=type_only,
            )

    def _export_default(self, value: Any, default: bool, prefix: str) -> None:
        """``export default`` of a value (``export default class {...}``, ``export default a.b``)."""
        if (
            value.type in ("class", "function_expression", "arrow_function")
            or default
            and value.type in ("class_declaration", "function_declaration")
        ):
            self.statement(value, prefix, exported=True)
        elif value.type == "object" and default and not prefix:
            self.object_literal(value, "default")
        written = dotted(value)
        if written:
            self.exports["default"] = written

    def _export_clause(
        self, clause: Any, source: str | None, line: int, column: int, type_only: bool
    ) -> None:
        """``export { a, b as c }``, re-exported from ``source`` when there is one
        (``export { a } from './x'``)."""
        for spec in clause.named_children:
            if spec.type != "export_specifier":
                continue
            name = spec.child_by_field_name("name")
            alias = spec.child_by_field_name("alias") or name
            if source is not None:
                self.add_import(
                    source,
                    member=text_of(name),
                    alias=f"export:{text_of(alias)}",
                    line=line,
                    column=column,
                    type_only=type_only,
                )
                self.exports[text_of(alias)] = f"export:{text_of(alias)}"
            else:
                self.exports[text_of(alias)] = text_of(name)

    def commonjs_export(self, node: Any) -> None:
        """``module.exports = {a, b: c}``, ``module.exports = X`` (the module itself is ``X``: export ``=``),
        ``exports.a = X`` and ``module.exports.a = X``, ``X`` a name of the module; a function written in
        place (``exports.a = function () {...}``) is the function ``a``."""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        target = dotted(left) if left is not None else None
        local = dotted(right) if right is not None else None
        if target is None or right is None:
            return
        if target == "module.exports" and right.type == "object":
            for part in right.named_children:
                if part.type == "shorthand_property_identifier":
                    self.exports[text_of(part)] = text_of(part)
                elif part.type == "pair":
                    key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
                    named = dotted(value) if value is not None else None
                    if key is not None and named:
                        self.exports[text_of(key)] = named
        elif target == "module.exports" and local:
            self.exports["="] = local
        elif target.rpartition(".")[0] in ("exports", "module.exports") and local:
            self.exports[target.rpartition(".")[2]] = local
        elif target.rpartition(".")[0] in ("exports", "module.exports") and right.type in FUNCTIONS:
            name = target.rpartition(".")[2]  # exports.a = function () {...}: the function a
            self.function(right, "", True, name=name, span=node)
            self.exports[name] = name

    def declared_names(self, node: Any, prefix: str) -> list[str]:
        if node.type in ("lexical_declaration", "variable_declaration"):
            return [
                text_of(d.child_by_field_name("name"))
                for d in node.named_children
                if d.type == "variable_declarator" and d.child_by_field_name("name") is not None
            ]
        name = node.child_by_field_name("name")
        return [f"{prefix}{text_of(name)}"] if name is not None else []


def _type_only(statement: Any, parts: list[Any]) -> bool:
    """Whether an import or re-export statement is for type checkers only: ``import type``/``export type``
    (the statement's own ``type`` keyword), or every name it lists marked ``type`` (``import { type A, type B
    }``), which the compiler elides as it elides ``import type``."""
    if any(c.type == "type" for c in statement.children):
        return True
    specs = [
        spec
        for part in parts
        if part.type in ("named_imports", "export_clause")
        for spec in part.named_children
        if spec.type in ("import_specifier", "export_specifier")
    ]
    others = [part for part in parts if part.type in ("identifier", "namespace_import", "namespace_export")]
    return bool(specs) and not others and all(any(c.type == "type" for c in spec.children) for spec in specs)
