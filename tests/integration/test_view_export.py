"""The self-contained HTML export, opened from a file:// URL in a real headless Chromium with no network."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from typing import Any

import pytest

from igg.export.html import write_html
from igg.view.columns import rows
from igg.view.page import STATIC_FILES, asset
from tests.conftest import FIXTURES, Workspace, edge, node
from tests.support.cli import igg

pytest_plugins = ["tests.support.browser"]

AUTH = FIXTURES / "auth"


@pytest.fixture(scope="module")
def auth_export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The bundled auth example run once, exported as HTML (and its graph document, for the expected
    names)."""
    out = tmp_path_factory.mktemp("auth")
    page = out / "auth.html"
    result = igg(
        "run",
        str(AUTH / "request.json"),
        "--agent",
        f"script:{AUTH / 'transcript.jsonl'}",
        "--out",
        str(out / "run"),
        "--export",
        f"html:{page}",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads((out / "run" / "graph.json").read_text())
    return {"html": page, "doc": doc}


def offline(page: Any) -> list[str]:
    """Abort every request that is not for a file: (or data:/blob:) URL; returns the list of those aborted."""
    blocked: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.context.route("**/*", route)
    page.context.set_offline(True)
    return blocked


def embedded(html_text: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="igg-graph">(.*?)</script>', html_text, re.S)
    assert match
    return rows(json.loads(match.group(1)))


def test_the_export_opens_offline_from_a_file_url_and_lists_every_node(page, auth_export):
    blocked = offline(page)
    page.page.goto(auth_export["html"].as_uri())
    page.wait_ready()
    names = page.node_names()
    expected = sorted((n["properties"]["name"] for n in auth_export["doc"]["nodes"]), key=str.lower)
    assert len(names) == len(expected) == 27
    assert "AuthServiceImpl" in names and "login_attempts" in names
    assert page.page.locator("#node-count").inner_text() == "27 nodes"
    assert page.page.locator("#canvas canvas").count() >= 2  # sigma's WebGL layers are there
    assert page.page.title() == "Session uuid-1234 · IGG"
    page.page.wait_for_timeout(1500)  # let the force layout settle a little for the picture
    page.shot("export-auth-offline")
    assert blocked == [] and all(u.startswith("file:") for u in page.requests), page.requests
    assert page.errors == []


def test_search_and_type_filters_narrow_the_list_and_details_show_provenance(page, auth_export):
    offline(page)
    page.page.goto(auth_export["html"].as_uri())
    page.wait_ready()
    p = page.page
    p.fill("#search", "session")
    p.wait_for_function("() => document.querySelector('#node-count').textContent.includes('of 27')")
    names = page.node_names()
    assert names and all("session" in n.lower() for n in names)
    assert "SessionRepository" in names and "AuthServiceImpl" not in names
    page.shot("export-search-session")

    p.fill("#search", "")
    p.uncheck("#node-types input[data-type=Method]")
    p.wait_for_function("() => document.querySelector('#node-count').textContent === '11 of 27 nodes shown'")
    types = p.locator("#node-list button .type").all_inner_texts()
    assert "Method" not in types and {"Class", "Interface", "DatabaseTable"} == set(types)
    p.uncheck("#edge-types input[data-type=CALLS]")
    page.shot("export-filter-no-methods-no-calls")

    p.check("#node-types input[data-type=Method]")
    p.click("#node-list button[title='AuthServiceImpl']")
    details = p.locator("#details")
    assert details.locator("h2").inner_text() == "AuthServiceImpl"
    text = details.inner_text()
    assert "com.app.auth" in text  # a property
    assert re.search(r"created in\s+iteration \d+", text) and "from chunk" in text
    page.shot("export-details-authserviceimpl")
    assert page.errors == []


def test_names_that_look_like_markup_stay_text(page, tmp_path):
    hostile = '</script><img src=x onerror="window.pwned=1">'
    w = Workspace()
    w.apply(
        node("Class", name=hostile, package="p"),
        node("Class", name="B & <b>bold</b>", package="q"),
        edge("CALLS", {"name": "B & <b>bold</b>"}, {"name": hostile}),
    )
    target = tmp_path / "hostile.html"
    write_html(w.state, target, metadata={"session_id": "<i>s</i>"})
    text = target.read_text()
    assert hostile not in text and "<b>bold</b>" not in text  # only escaped inside the JSON block
    offline(page)
    page.page.goto(target.as_uri())
    page.wait_ready()
    assert sorted(page.node_names()) == sorted(["B & <b>bold</b>", hostile])
    assert (
        page.page.evaluate("window.pwned === undefined") and page.page.locator("#node-list img").count() == 0
    )
    assert page.page.locator("#title").inner_text() == "Session <i>s</i>"
    assert page.errors == []


def test_the_export_embeds_the_graph_with_provenance_and_loads_nothing(auth_export):
    text = auth_export["html"].read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=(?!\"data:)", text)  # nothing fetched
    payload = embedded(text)
    assert payload["meta"]["session_id"] == "uuid-1234"
    assert (payload["meta"]["nodes"], payload["meta"]["edges"]) == (27, 29)
    assert payload["node_types"] == ["Class", "Interface", "Method", "DatabaseTable"]
    impl = next(n for n in payload["nodes"] if n["label"] == "AuthServiceImpl")
    assert impl["provenance"]["created"] >= 1 and impl["provenance"]["chunk"]
    # igg run --export html carries the run's iterations, as igg view --export does
    assert [it["iteration"] for it in payload["iterations"]] == list(range(1, 13))
    codes = {r["code"] for it in payload["iterations"] for r in it["rejections"]}
    assert {"UNKNOWN_NODE_TYPE", "PROTECTED_NODE"} <= codes


def test_igg_view_exports_a_stored_session_with_its_iterations(tmp_path):
    store = tmp_path / "s.sqlite"
    assert (
        igg(
            "run",
            str(AUTH / "request.json"),
            "--agent",
            f"script:{AUTH / 'transcript.jsonl'}",
            "--store",
            str(store),
            "--json",
        ).returncode
        == 0
    )
    result = igg("view", "uuid-1234", "--store", str(store), "--export", f"html:{tmp_path / 'v.html'}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"html: {tmp_path / 'v.html'} (27 nodes, 29 edges, ")
    payload = embedded((tmp_path / "v.html").read_text())
    assert [i["iteration"] for i in payload["iterations"]] == list(range(1, 13))
    codes = {r["code"] for i in payload["iterations"] for r in i["rejections"]}
    assert {"UNKNOWN_NODE_TYPE", "MISSING_REQUIRED_ATTRIBUTE", "PROTECTED_NODE"} <= codes
    early = igg(
        "view",
        "uuid-1234",
        "--store",
        str(store),
        "--iteration",
        "3",
        "--export",
        f"html:{tmp_path / 'e.html'}",
    )
    assert early.returncode == 0 and embedded((tmp_path / "e.html").read_text())["meta"]["nodes"] < 27
    # igg export of a stored session draws the same page, iterations panel included
    same = igg(
        "export",
        "uuid-1234",
        "--store",
        str(store),
        "--iteration",
        "3",
        "--format",
        "html",
        "-o",
        str(tmp_path / "x3.html"),
    )
    assert same.returncode == 0, same.stderr
    exported = embedded((tmp_path / "x3.html").read_text())
    assert [i["iteration"] for i in exported["iterations"]] == [1, 2, 3]
    assert exported["iterations"] == embedded((tmp_path / "e.html").read_text())["iterations"]

    bad = igg("view", "nope", "--store", str(store), "--export", f"html:{tmp_path / 'x.html'}")
    assert bad.returncode == 2 and "no session 'nope'" in bad.stderr and "uuid-1234" in bad.stderr
    assert "Traceback" not in bad.stderr
    wrong = igg("view", "uuid-1234", "--store", str(store), "--export", "svg:x.svg")
    assert wrong.returncode == 2 and "--export takes html:PATH" in wrong.stderr


def test_igg_export_writes_html_beside_the_document(tmp_path):
    w = Workspace()
    w.apply(
        node("Class", name="A", package="p"),
        node("Class", name="B", package="q"),
        edge("CALLS", {"name": "A"}, {"name": "B"}),
    )
    from igg.export import write_json

    doc = tmp_path / "run.json"
    write_json(w.state, doc, schema=w.request.config.schema_, metadata={"session_id": "s1"}, provenance=True)
    result = igg("export", str(doc), "--format", "html")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"html: {tmp_path / 'run.html'} (2 nodes, 1 edges, ")
    payload = embedded((tmp_path / "run.html").read_text())
    assert sorted(n["label"] for n in payload["nodes"]) == ["A", "B"]
    assert payload["edges"][0]["type"] == "CALLS"


def test_vendored_libraries_are_the_recorded_npm_releases_with_their_licences():
    table = asset("vendor/VENDOR.md")
    rows = re.findall(r"^\| (\S+\.js) \| (\S+) \| (\S+) \| MIT \((\S+)\) \| ([0-9a-f]{64}) \|$", table, re.M)
    assert {r[0] for r in rows} == {"graphology.umd.min.js", "graphology-library.min.js", "sigma.min.js"}
    for name, _package, _version, licence, digest in rows:
        data = resources.files("igg.view").joinpath("static", "vendor", name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, name
        assert (
            f"vendor/{licence}" in STATIC_FILES
            and "Permission is hereby granted, free of charge" in asset(f"vendor/{licence}")
        )


def test_the_workspace_exports_the_same_page_with_its_iterations():
    """export_graph (HTTP/MCP) offers html: the self-contained page igg view --export writes, iterations
    included."""
    from igg.workspace import Workspace
    from igg.workspace.ops import ApplyInput, ExportInput
    from tests.unit.test_workspace import request_dict

    ws = Workspace()
    sid = ws.start(request_dict(session_id="page"))["session_id"]
    ws.apply(
        ApplyInput(
            session_id=sid,
            reasoning="two",
            actions=[
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Gate", "package": "p"}},
                {"type": "ADD_NODE", "label": "Nope", "properties": {"name": "x"}},
            ],
        )
    )
    page = ws.export(ExportInput(session_id=sid, format="html"))["content"]
    assert page.startswith("<!doctype html>") and "<script src=" not in page  # one file, nothing loaded
    payload = embedded(page)
    assert [n["properties"]["name"] for n in payload["nodes"]] == ["Gate"]
    assert [(i["iteration"], [r["code"] for r in i["rejections"]]) for i in payload["iterations"]] == [
        (1, ["UNKNOWN_NODE_TYPE"])
    ]


def test_the_page_shows_an_elements_evidence_highlighted_in_its_chunk(page, tmp_path):
    """Evidence (issue 30): `igg view --export` of a stored session; the node's details quote the context
    around its evidence with the quote itself marked, and say where it was found."""
    from tests.unit.test_evidence import CONTEXT, calls, cls

    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload.update(session_id="ev", context_data=CONTEXT)
    payload["config"]["grounding"] = "warn"
    request = tmp_path / "request.json"
    request.write_text(json.dumps(payload))
    transcript = tmp_path / "t.jsonl"
    turn = {
        "reasoning": "r",
        "actions": [
            cls("AuthService", "class AuthService:"),
            cls("TokenIssuer", "no such text"),
            calls("AuthService", "TokenIssuer", "TokenIssuer.issue(user)"),
        ],
        "finished": True,
    }
    transcript.write_text(json.dumps(turn) + "\n")
    store = tmp_path / "s.sqlite"
    assert (
        igg(
            "run", str(request), "--agent", f"script:{transcript}", "--store", str(store), "--json"
        ).returncode
        == 0
    )
    html = tmp_path / "ev.html"
    assert igg("view", "ev", "--store", str(store), "--export", f"html:{html}").returncode == 0
    offline(page)
    page.page.goto(html.as_uri())
    page.wait_ready()
    p = page.page
    p.click("#node-list button[title='AuthService']")
    details = p.locator("#details")
    assert details.locator("h3", has_text="Evidence (1)").count() == 1
    assert details.locator("blockquote.evidence mark").inner_text() == "class AuthService:"
    assert "Checks passwords" in details.locator("blockquote.evidence").inner_text()  # the passage after it
    assert "chunk 1 · src/auth.py:1:1 · exact" in details.inner_text()
    p.click("#node-list button[title='TokenIssuer']")
    assert details.locator("blockquote.evidence.missing").inner_text() == "no such text"
    assert "not found in the context" in details.inner_text()
    page.shot("export-evidence")
    assert page.errors == []


def test_the_page_reads_the_embedded_columns_back_into_the_payload_python_gives(page, tmp_path):
    """iggModel.fromColumns (the page) and igg.view.columns.rows (Python) give the same payload back: odd
    property names and values, shared and evidence provenances, parents that are nodes or synthetic groups,
    an edge to a node the payload does not hold."""
    from igg.view.columns import columns
    from igg.view.page import render_page

    def item(i: int, **more: Any) -> dict[str, Any]:
        props = [
            {},
            {"name": f"x{i}"},
            {"name": f"x{i}", "__proto__": [1, None]},
            {"toString": True, "n": 2.5},
        ]
        prov = [{"created": 0}, {"created": 1, "evidence": [{"quote": "q </script>", "chunk": 1}]}]
        return {"properties": props[i % 4], "provenance": prov[i % 2], **more}

    # labels that are their name (left out of the columns, joined again) and labels that are not
    nodes = [item(i, id=f"n{i}", type="AB"[i % 2], label=f"x{i}" if i % 4 else f"node {i}") for i in range(7)]
    nodes[1]["parent"], nodes[2]["parent"], nodes[3]["parent"] = "n0", "group:x", "n0"
    ends = [("n0", "n1"), ("n2", "ghost"), ("n3", "n3"), ("n4", "n0")]
    edges = [item(k, id=f"e{k}", type="RS"[k % 2], source=s, target=t) for k, (s, t) in enumerate(ends)]
    payload = {
        "version": 2,
        "meta": {"nodes": 7, "edges": 4},
        "node_types": ["A", "B"],
        "edge_types": ["R", "S"],
        "identity_keys": {"A": ["name"], "B": ["name"]},
        "nodes": nodes,
        "edges": edges,
        "grouping": {
            "kind": "contains",
            "aggregate": False,
            "groups": [{"id": "group:x", "label": "x", "kind": "contains", "size": 1}],
        },
        "iterations": [],
    }
    cols = columns(payload)["columns"]
    assert cols["nodes"]["label"][:4] == ["node 0", None, None, "x3"]  # n3: toString, no name
    path = tmp_path / "columns.html"
    path.write_text(render_page("static", payload=payload), encoding="utf-8")
    offline(page)
    page.page.goto(path.as_uri() + "#nolayout")
    page.wait_ready()
    text = page.page.evaluate(
        "() => JSON.stringify(window.iggModel.fromColumns("
        "JSON.parse(document.getElementById('igg-graph').textContent)))"
    )
    assert json.loads(text) == payload == embedded(path.read_text())
    assert page.page.evaluate("() => window.iggView.graph.hasNode('n5')") is True
    assert page.errors == []
