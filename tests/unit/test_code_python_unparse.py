"""A callable's parameters written by ``igg.codemap.python.unparse.parameters`` are ``ast.unparse``'s text,
on every ``def`` of installed packages and on generated parameter lists of every form (what the fast writer
does not know goes to ``ast.unparse``)."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from igg.codemap.python import unparse
from igg.codemap.python.unparse import parameters


def _defs(root: Path) -> list[ast.arguments]:
    out = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        out += [n.args for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return out


def test_every_def_of_installed_packages_is_written_as_ast_unparse_writes_it() -> None:
    import httpx
    import openai
    import pydantic

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    roots = [Path(m.__file__).parent for m in (openai, pydantic, httpx)] + [
        stdlib / "asyncio",
        stdlib / "email",
    ]
    defs = [a for root in roots for a in _defs(root)]
    fast = 0
    for args in defs:
        assert parameters(args) == ast.unparse(args), ast.unparse(args)
        try:
            unparse._arguments(args)
            fast += 1
        except unparse._Other:
            pass
    assert len(defs) > 8000
    assert fast > 0.9 * len(defs)  # the fast writer takes most: else it saves nothing


_names = st.sampled_from(["int", "str", "T", "typing", "Optional", "x_1"])


def _atoms(children: Any) -> Any:
    name = _names.map(lambda n: ast.Name(id=n))
    attribute = st.tuples(children, _names).map(lambda t: ast.Attribute(value=t[0], attr=t[1]))
    subscript = st.tuples(children, st.lists(children, max_size=3), st.booleans()).map(
        lambda t: ast.Subscript(value=t[0], slice=ast.Tuple(elts=t[1]) if t[2] or not t[1] else t[1][0])
    )
    return st.one_of(name, attribute, subscript)


_constants = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.binary(max_size=3),
    st.just(...),
).map(
    lambda v: (
        ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-v))
        if isinstance(v, int) and v < 0 and not isinstance(v, bool)
        else ast.Constant(v)
    )
)

_known = st.recursive(  # the forms the fast writer knows, floats aside (it leaves those to ast.unparse)
    st.one_of(_names.map(lambda n: ast.Name(id=n)), _constants),
    lambda children: st.one_of(
        _atoms(children),
        st.tuples(children, children).map(lambda t: ast.BinOp(left=t[0], op=ast.BitOr(), right=t[1])),
        st.lists(children, max_size=3).map(lambda xs: ast.List(elts=xs)),
    ),
    max_leaves=6,
)
_others = st.recursive(
    _known,
    lambda children: st.one_of(
        st.tuples(children, children).map(lambda t: ast.BinOp(left=t[0], op=ast.Add(), right=t[1])),
        st.lists(children, max_size=2).map(lambda xs: ast.Tuple(elts=xs)),
        children.map(lambda c: ast.Starred(value=c)),
        children.map(lambda c: ast.Call(func=c, args=[], keywords=[])),
    ),
    max_leaves=4,
)
_expressions = st.one_of(_known, _known, _known, _others)
_maybe = st.one_of(st.none(), _expressions)


def _arg(name: str, annotation: ast.expr | None) -> ast.arg:
    return ast.arg(arg=name, annotation=annotation)


@settings(max_examples=400, deadline=None)
@given(
    positional=st.lists(_maybe, max_size=4),
    posonly=st.integers(0, 4),
    defaults=st.lists(_expressions, max_size=4),
    vararg=st.one_of(st.none(), st.tuples(_maybe)),
    kwonly=st.lists(st.tuples(_maybe, _maybe), max_size=3),
    kwarg=st.one_of(st.none(), st.tuples(_maybe)),
)
def test_generated_parameter_lists_are_written_as_ast_unparse_writes_them(
    positional: list[Any], posonly: int, defaults: list[Any], vararg: Any, kwonly: list[Any], kwarg: Any
) -> None:
    args = [_arg(f"p{i}", a) for i, a in enumerate(positional)]
    split = min(posonly, len(args))
    node = ast.arguments(
        posonlyargs=args[:split],
        args=args[split:],
        vararg=None if vararg is None else _arg("rest", vararg[0]),
        kwonlyargs=[_arg(f"k{i}", a) for i, (a, _) in enumerate(kwonly)],
        kw_defaults=[d for _, d in kwonly],
        kwarg=None if kwarg is None else _arg("more", kwarg[0]),
        defaults=defaults[: len(args)],
    )
    assert parameters(node) == ast.unparse(node)


@settings(max_examples=600, deadline=None)
@given(annotation=_known, default=_known)
def test_one_generated_annotation_and_default_are_written_as_ast_unparse_writes_them(
    annotation: ast.expr, default: ast.expr
) -> None:
    node = ast.arguments(
        posonlyargs=[], args=[_arg("x", annotation)], kwonlyargs=[], kw_defaults=[], defaults=[default]
    )
    assert parameters(node) == ast.unparse(node)
