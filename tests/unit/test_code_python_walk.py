"""The Python analyzer's one walk per function (``walk_nodes``) visits what ``ast.walk`` does, in its
order."""

from __future__ import annotations

import ast
from pathlib import Path

from igg.codemap.python.analyze import walk_nodes

SINGLETONS = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)

CORNERS = """
def f(a, *args, b=1, c, **kw):
    global G
    x = {**kw, "k": [i async for i in a] if a else {1, 2}}
    y = f"{a!r:>{b}}" + b"bytes" + ...
    match a:
        case {"k": 1, **rest}: pass
        case Point(x=0, y=[1, *others]) | None: pass
        case [1, 2, *_] if b > 1 and not c: pass
        case True: pass
    lambda q, /, r=2: (yield from q)
    del x[1:2:3], y
    try:
        pass
    except* ValueError as e:
        nonlocal_ = e
    with open(a) as h, open(b):
        assert h, "message"
    return -a ** 2 < b <= c is not None
"""


def _expected(root: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(root) if not isinstance(n, SINGLETONS)]


def test_walk_nodes_equals_ast_walk_without_the_singletons() -> None:
    sources = [
        CORNERS,
        *(p.read_text() for p in sorted(Path(ast.__file__).parent.glob("a*.py"))[:20]),
        *(p.read_text() for p in sorted((Path(__file__).parents[2] / "igg").rglob("*.py"))),
    ]
    functions = 0
    for text in sources:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
                assert walk_nodes(node) == _expected(node)
                functions += 1
    assert functions > 1000
