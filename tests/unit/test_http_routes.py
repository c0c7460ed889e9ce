"""HTTP routes across four services in four languages (``fixtures/code/http``): every Route, HANDLES and
REQUESTS edge against the hand-written truth (``truth.txt``), lines exact; client calls to another host or to
a path decided at run time draw nothing; ``--update`` after an edit to a route, a prefix or a client call
equals a fresh map; ``igg check`` lists unused and unknown routes and forbids requests across services."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.codemap.link import CodeModel, link
from igg.codemap.routes import external_host, normalize
from igg.codemap.walk import walk
from igg.mapping.prepare import parse_all
from igg.mapping.update import update_map
from igg.service import map_code
from tests.codegraph import map_into_store
from tests.conftest import FIXTURES
from tests.unit.test_code_update import graph_of

TREE = FIXTURES / "code" / "http"
Edge = tuple[str, str, str, str]
"""(label, source as ``file:name`` or the module's file, site ``file:line``, target ``service METHOD
path``)."""


def _truth() -> tuple[set[Edge], set[str]]:
    edges: set[Edge] = set()
    none: set[str] = set()
    for line in (TREE / "truth.txt").read_text().splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if parts[0] == "NONE":
            none.add(parts[1])
        else:
            label, source, site, service, method, path = parts
            edges.add((label, source, site, f"{'(none)' if service == '-' else service} {method} {path}"))
    return edges, none


def _found(model: CodeModel) -> set[Edge]:
    out: set[Edge] = set()
    for plan in model.files:
        for r in plan.relations:
            if r.label not in ("HANDLES", "REQUESTS"):
                continue
            source = model.symbols[r.source].properties
            name = source["path"] if r.source.startswith("module:") else f"{source['file']}:{source['name']}"
            route = model.symbols[r.target].properties
            for line, _ in plan.sites[r]:
                out.add(
                    (
                        r.label,
                        name,
                        f"{plan.path}:{line}",
                        f"{route['service']} {route['method']} {route['path']}",
                    )
                )
    return out


@pytest.fixture(scope="module")
def model() -> CodeModel:
    return link(parse_all(walk([TREE]).files, jobs=1)[0])


def test_routes_and_requests_of_four_languages_are_the_truth_lines_exact(model: CodeModel) -> None:
    truth, none = _truth()
    found = _found(model)
    assert (
        len({e for e in truth if e[0] == "HANDLES"}) >= 40
        and len(truth - {e for e in truth if e[0] == "HANDLES"}) >= 40
    )
    assert found - truth == set()  # precision 1.0
    assert truth - found == set()  # recall 1.0
    assert not {e[2] for e in found} & none  # another host, a run-time path, two services alike: nothing
    routes = {k: s.properties for k, s in model.symbols.items() if s.label == "Route"}
    assert {p["service"] for p in routes.values()} == {"users", "web", "orders", "billing", "(none)"}
    assert sorted(p["name"] for p in routes.values() if p.get("handled") is False) == [
        "GET /api/nowhere",
        "PUT /api/orders/{}/status",
    ]


def test_paths_normalize_every_parameter_idiom_and_other_hosts_are_external() -> None:
    assert {
        normalize(p)
        for p in (
            "/users/{id}/orders/",
            "users/:id/orders",
            "/users/<int:id>/orders",
            "/users/%d/orders?x=1",
            "/users/${id}/orders",
            r"^users/(?P<pk>\d+)/orders/$",
        )
    } == {"/users/{}/orders"}
    assert normalize("") == "/" and normalize("/files/{path...}") == "/files/{}"
    assert external_host("api.stripe.com") and external_host("10.0.0.1")
    assert (
        not external_host("orders")
        and not external_host("localhost")
        and not external_host("db.svc.cluster.local")
    )


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


EDITS: list[tuple[str, Callable[[Path], None]]] = [
    (
        "a route's path",
        lambda t: _replace(t / "orders/api/routes.go", 'r.Get("/stats", stats)', 'r.Get("/metrics", stats)'),
    ),
    (
        "a router's prefix",
        lambda t: _replace(t / "users/app/main.py", 'prefix="/api/accounts"', 'prefix="/api/v2/accounts"'),
    ),
    ("a mount's prefix", lambda t: _replace(t / "web/server/index.ts", '"/bff/cart"', '"/shop/cart"')),
    (
        "a client call",
        lambda t: _replace(t / "web/src/api.ts", 'api.get("/users")', 'api.get("/users/me/orders")'),
    ),
    (
        "a base constant",
        lambda t: _replace(
            t / "users/app/config.py", '"http://billing:8080/billing"', '"http://billing:8080/billing/v2"'
        ),
    ),
    (
        "a Django view's body (its route is registered in urls.py)",
        lambda t: _replace(
            t / "users/legacy/shop/views.py",
            "def product_list(request):\n    return None",
            "def product_list(request):\n    product_detail(request, 1)\n    return None",
        ),
    ),
    (
        "a handler renamed in a file with no HTTP of its own",
        lambda t: _replace(
            t / "web/server/handlers/users.ts", "export function show(", "export function display("
        ),
    ),
    (
        "a body with no HTTP",
        lambda t: _replace(
            t / "orders/api/handlers.go",
            "func stats(w http.ResponseWriter, r *http.Request)       {}",
            "func stats(w http.ResponseWriter, r *http.Request) {\n\treindex(w, r)\n}",
        ),
    ),
]


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("http")
    shutil.copytree(TREE, base / "tree")
    map_into_store(base / "tree", base / "s.db")
    return base


@pytest.mark.parametrize(("name", "edit"), EDITS, ids=[e[0] for e in EDITS])
def test_an_update_after_an_http_edit_equals_a_fresh_map(
    mapped: Path, tmp_path: Path, name: str, edit: Callable[[Path], None]
) -> None:
    shutil.copytree(mapped, tmp_path / "m")
    tree, store = tmp_path / "m" / "tree", tmp_path / "m" / "s.db"
    before: Any = graph_of(store, "m")
    edit(tree)
    update_map([tree], store, session_id="m", jobs=1)
    fresh = tmp_path / "fresh.db"
    map_code([tree], agent="code", jobs=1, store=fresh, session_id="f")
    after = graph_of(store, "m")
    assert after == graph_of(fresh, "f")
    assert after != before


RULES = """
[[rules]]
name = "unused"
kind = "unused_route"
select = { type = "Route", path = "/api/*" }

[[rules]]
name = "unknown"
kind = "unknown_route"

[[rules]]
name = "web-not-admin"
kind = "forbidden"
edges = ["REQUESTS"]
from = { path = "web/*" }
to = { type = "Route", path = "/admin/*" }
"""


def test_check_lists_unused_and_unknown_routes_forbids_requests_across_services_and_finds_service_cycles(
    tmp_path: Path,
) -> None:
    from igg.mapping.checking import run_check
    from igg.service import cycles

    (tmp_path / "igg.toml").write_text(RULES)
    report = run_check(tmp_path / "igg.toml", paths=[TREE])
    found = {
        (v.rule, v.path[0].source, v.path[0].target, f"{v.path[0].file}:{v.path[0].line}")
        for v in report.violations
    }
    assert found == {
        (
            "unused",
            "example.com/orders/api.setStatus",
            "PATCH /api/orders/{}/status",
            "orders/api/routes.go:16",
        ),
        (
            "unused",
            "example.com/orders/api.handlers.replaceItems",
            "PUT /api/orders/{}/items",
            "orders/api/routes.go:19",
        ),
        (
            "unused",
            "app.routers.reports.get_report",
            "GET /api/v2/reports/{}",
            "users/app/routers/reports.py:6",
        ),
        ("unused", "example.com/orders/api.audit", "GET /api/audit/{}", "orders/api/routes.go:22"),
        ("unknown", "web/src/pages/orders.notFound", "GET /api/nowhere", "web/src/pages/orders.ts:37"),
        (
            "unknown",
            "com.acme.billing.OrdersClient.refund",
            "PUT /api/orders/{}/status",
            "billing/src/main/java/com/acme/billing/OrdersClient.java:28",
        ),
        (
            "web-not-admin",
            "web/src/pages/admin.reindexAll",
            "POST /admin/reindex",
            "web/src/pages/admin.ts:14",
        ),
        (
            "web-not-admin",
            "web/src/pages/admin.AdminPanel.remove",
            "DELETE /admin/users/{}",
            "web/src/pages/admin.ts:27",
        ),
    }
    [cycle] = cycles([TREE], level="service")
    assert cycle.message.startswith("3 services depend on each other in a cycle (billing, orders, users)")


def test_the_web_view_groups_routes_by_the_service_that_handles_them(mapped: Path) -> None:
    from igg.store import SessionStore
    from igg.view.aggregate import grouping

    _, state, _ = SessionStore(mapped / "s.db").load_state("m")
    found = grouping(state, {}, {})
    services = {g["id"]: g["size"] for g in found.groups if g["kind"] == "service"}
    assert services == {
        "service:users": 24,
        "service:web": 13,
        "service:orders": 19,
        "service:billing": 8,
        "service:(none)": 2,
    }
    routes = [n for n in state.graph.nodes if state.node_type(n) == "Route"]
    assert all(found.parents[n] == f"service:{state.node_properties(n)['service']}" for n in routes)


def _python_http(text: str, with_text: bool) -> Any:
    """The HTTP facts of one Python source, read with or without the text (the text lets the reader skip
    listing the calls of a file where none can be a mount or a request)."""
    import ast

    from igg.codemap.columns import Columns
    from igg.codemap.python.analyze import _Analyzer
    from igg.codemap.python.http import http_facts

    tree = ast.parse(text)
    columns = Columns(text)
    facts = _Analyzer("app/client.py", tree, columns, "app.client").run()
    return http_facts(tree, facts, columns, text if with_text else None)


def _python_sources() -> list[Path]:
    import httpx
    import openai
    import requests

    roots = [FIXTURES / "code", *(Path(m.__file__).parent for m in (httpx, openai, requests))]
    return [p for root in roots for p in sorted(root.rglob("*.py"))]


def test_python_files_without_a_possible_request_skip_their_calls_and_read_the_same() -> None:
    """The skip is pinned to the full walk: on every Python file of ``fixtures/code`` and of the installed
    httpx, openai and requests, the facts are the same with the text as without it, and most files of openai
    (which imports httpx everywhere, and calls it through its own client) are skipped."""
    import ast

    from igg.codemap.columns import Columns
    from igg.codemap.python.analyze import _Analyzer
    from igg.codemap.python.http import _Http, hinted

    read, skipped = 0, 0
    for path in _python_sources():
        text = path.read_text(encoding="utf-8", errors="replace")
        if not hinted(text):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        read += 1
        facts = _Analyzer(str(path), tree, Columns(text), "m").run()
        skipped += not _Http(facts, Columns(text)).calls_matter(text)
        assert _python_http(text, True) == _python_http(text, False), path
    assert read > 500 and skipped > read // 2


_ALIASES = st.sampled_from(["httpx", "requests", "rq", "h2"])
_BETWEEN = st.sampled_from(["", " ", " \\\n ", "  # note\n ", "\n"])


@settings(max_examples=150, deadline=None)
@given(
    alias=_ALIASES,
    wrapped=st.booleans(),
    between=_BETWEEN,
    after=_BETWEEN,
    verb=st.sampled_from(["get", "post", "request"]),
)
def test_a_request_written_any_valid_way_is_read_with_the_text(
    alias: str, wrapped: bool, between: str, after: str, verb: str
) -> None:
    """A request however it is spaced, continued, commented or parenthesized between the client's name and
    its method is read with the text as without it."""
    module = "requests" if alias in ("requests", "rq") else "httpx"
    imported = f"import {module}" if alias == module else f"import {module} as {alias}"
    args = '"GET", "/items"' if verb == "request" else '"/items"'
    receiver = f"({alias})" if wrapped else alias
    text = f"{imported}\n\n\ndef fetch():\n    return ({receiver}{between}.{after}{verb}({args}))\n"
    found = _python_http(text, True)
    assert found == _python_http(text, False)
    assert found is not None and [r.url for r in found.requests] == ["/items"]


def test_a_file_of_comment_marks_after_a_client_name_is_read_at_once() -> None:
    """The request test's pattern reads each character between a client's name and its method one way: a
    name followed by a long run of ``#`` (no newline, no method) is refused at once, not in time that
    doubles with every mark (run in a process of its own, with a deadline: a regression fails, not hangs)."""
    import subprocess
    import sys

    code = (
        "import ast\n"
        "from igg.codemap.columns import Columns\n"
        "from igg.codemap.python.analyze import _Analyzer\n"
        "from igg.codemap.python.http import _Http\n"
        "text = 'import httpx\\nhttpx' + '#' * 5000\n"
        "facts = _Analyzer('m.py', ast.parse(text), Columns(text), 'm').run()\n"
        "print(_Http(facts, Columns(text)).calls_matter(text))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=FIXTURES.parent,
        check=True,
    )
    assert done.stdout.strip() == "False"
