"""What a Go function's parameter and result lists say: the parameters as written, their types, the names
they bind, and the signature a callable node shows (``Get(id int) (string, error)``)."""

from __future__ import annotations

from typing import Any

from igg.codemap.go.scope import node_text


def parameters(node: Any) -> tuple[list[str], list[str], dict[str, str]]:
    """(parameters as written, their types one per parameter, name -> type)."""
    written: list[str] = []
    types: list[str] = []
    named: dict[str, str] = {}
    for p in node.named_children if node is not None else ():
        if p.type not in ("parameter_declaration", "variadic_parameter_declaration"):
            continue
        typed = p.child_by_field_name("type")
        kind = node_text(typed) if typed is not None else ""
        if p.type == "variadic_parameter_declaration":
            kind = "..." + kind
        names = p.children_by_field_name("name")
        if not names:
            written.append(kind)
            types.append(kind)
        for n in names:
            written.append(f"{node_text(n)} {kind}")
            types.append(kind)
            if not kind.startswith("..."):
                named[node_text(n)] = kind
    return written, types, named


def results(node: Any) -> list[str]:
    """The result types, one per result (a single unnamed result: its type)."""
    if node is None:
        return []
    if node.type != "parameter_list":
        return [node_text(node)]
    _, types, _ = parameters(node)
    return types


def named_results(node: Any) -> dict[str, str]:
    """Named results -> their types (locals of the whole function)."""
    return parameters(node)[2] if node is not None and node.type == "parameter_list" else {}


def signature(name: str, params: list[str], returns: list[str]) -> str:
    """``name(params) result`` / ``name(params) (results)`` as a callable node shows it."""
    out = f"{name}({', '.join(params)})"
    if len(returns) == 1:
        return f"{out} {returns[0]}"
    return f"{out} ({', '.join(returns)})" if returns else out


__all__ = ["named_results", "parameters", "results", "signature"]
