"""Export specs, perform_exports, the Cypher script's literals, Mermaid, and `igg export` for files."""

from __future__ import annotations

import json
import subprocess
import sys

import networkx as nx
import pytest

from igg.errors import ExportError, IGGError
from igg.export import ExportSpec, parse_export_spec, perform_exports, write_json
from igg.export.cypher_script import literal, string_literal
from igg.export.mermaid import label, mermaid_text
from tests.conftest import ROOT, Workspace, edge, node


def small() -> Workspace:
    w = Workspace()
    w.apply(
        node("Class", name='A "x" | <b> #1 `t` [y]\nnext', package="p"),
        node("Class", name="B", package="q"),
        edge("CALLS", {"name": "B"}, {"name": 'A "x" | <b> #1 `t` [y]\nnext'}),
    )
    return w


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("graphml", ExportSpec("graphml")),
        ("GraphML:out/g.graphml", ExportSpec("graphml", "out/g.graphml")),
        ("json:C:/tmp/x.json", ExportSpec("json", "C:/tmp/x.json")),
        ("neo4j", ExportSpec("neo4j")),
        ("neo4j:bolt://localhost:7687", ExportSpec("neo4j", "bolt://localhost:7687")),
        ("nodelink", ExportSpec("nodelink")),
        ("cypher:x.cypher", ExportSpec("cypher", "x.cypher")),
        ("mermaid", ExportSpec("mermaid")),
    ],
)
def test_export_specs_parse(text, spec):
    assert parse_export_spec(text) == spec
    assert str(spec) in (text, text.lower())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pdf:x", "unknown export format 'pdf'"),
        ("", "empty export spec"),
        ("json:", "empty target"),
        ("neo4j:http://x", "unknown scheme 'http'"),
    ],
)
def test_bad_export_specs_name_the_accepted_formats(text, message):
    with pytest.raises(IGGError, match=message) as info:
        parse_export_spec(text)
    if "format" in message or "empty export" in message:
        assert "graphml, json, nodelink, neo4j, cypher, mermaid" in str(info.value)


def test_perform_exports_writes_default_targets_and_summarizes(tmp_path):
    w = small()
    specs = [
        parse_export_spec(s)
        for s in (
            "graphml",
            "json",
            "nodelink",
            "cypher",
            "mermaid",
            f"json:{tmp_path / 'sub' / 'named.json'}",
        )
    ]
    out = perform_exports(
        w.state, specs, schema=w.request.config.schema_, metadata={"session_id": "s9"}, out_dir=tmp_path
    )
    assert [s["format"] for s in out] == ["graphml", "json", "nodelink", "cypher", "mermaid", "json"]
    names = [s["target"] for s in out]
    assert names[:5] == [
        str(tmp_path / n)
        for n in ("graph.graphml", "graph.json", "graph.nodelink.json", "graph.cypher", "graph.mmd")
    ]
    for s in out:
        assert s["ok"] and s["nodes"] == 2 and s["edges"] == 1 and s["bytes"] > 0 and s["seconds"] >= 0
    assert "scope 's9'" in (tmp_path / "graph.cypher").read_text()
    assert nx.read_graphml(tmp_path / "graph.graphml").number_of_nodes() == 2


def test_a_failed_export_does_not_stop_the_others_and_is_raised(tmp_path):
    w = small()
    blocker = tmp_path / "file"
    blocker.write_text("")
    specs = [ExportSpec("json", str(blocker / "x.json")), ExportSpec("mermaid", str(tmp_path / "m.mmd"))]
    with pytest.raises(ExportError, match="cannot write json to") as info:
        perform_exports(w.state, specs)
    summaries = info.value.summaries
    assert [s["ok"] for s in summaries] == [False, True] and (tmp_path / "m.mmd").exists()


def test_cypher_literals_escape_everything_that_could_end_a_string():
    assert string_literal('it\'s \\ "q" \n\t\r') == "'it\\'s \\\\ \\\"q\\\" \\n\\t\\r'"
    assert string_literal("\x00\x01\x1f\x7f\ud800😀") == "'\\u0000\\u0001\\u001f\\u007f\\ud800😀'"
    assert literal([1, 2.5, True, "x"]) == "[1, 2.5, true, 'x']"
    assert literal({"k": ["a"]}) == "{`k`: ['a']}"
    with pytest.raises(ExportError):
        literal({"bad key": 1})


def test_mermaid_shows_small_graphs_in_full_with_escaped_labels():
    text = mermaid_text(small().state)
    assert text.startswith("flowchart LR\n")
    assert '    n0["Class: A #quot;x#quot; #124; #lt;b#gt; #35;1 #96;t#96; #91;y#93; next"]' in text
    assert '    n1 -->|"CALLS"| n0' in text
    assert label("a\x00b" + "x" * 100, limit=10) == "a\ufffdbxxxxxx…"


def igg(*args: str, cwd=ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_cli_exports_every_file_format_from_a_saved_document(tmp_path):
    w = small()
    doc = tmp_path / "run.json"
    write_json(w.state, doc, schema=w.request.config.schema_, metadata={"session_id": "s1"})
    for fmt, name in (
        ("graphml", "run.graphml"),
        ("json", "run.export.json"),
        ("nodelink", "run.nodelink.json"),
        ("cypher", "run.cypher"),
        ("mermaid", "run.mmd"),
    ):
        result = igg("export", str(doc), "--format", fmt)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"{fmt}: {tmp_path / name} (2 nodes, 1 edges, ")
    assert json.loads((tmp_path / "run.export.json").read_text()) == json.loads(doc.read_text())
    result = igg(
        "export",
        str(tmp_path / "run.nodelink.json"),
        "-f",
        "json",
        "-o",
        str(tmp_path / "back.json"),
        "--json",
    )
    assert json.loads(result.stdout)["exports"][0]["nodes"] == 2
    assert json.loads((tmp_path / "back.json").read_text()) == json.loads(doc.read_text())
    result = igg("export", str(doc), "-f", "mermaid", "-o", "-")
    assert result.stdout.startswith("flowchart LR") and result.stderr == ""


def test_cli_rejects_bad_input_without_a_traceback(tmp_path):
    doc = tmp_path / "bad.json"
    doc.write_text('{"nodes": [{"id": "a", "type": "X", "properties": {}}]}')
    result = igg("export", str(doc), "-f", "graphml")
    assert (
        result.returncode == 2 and "Traceback" not in result.stderr and "bad.json is invalid" in result.stderr
    )
    result = igg("export", str(tmp_path / "missing.json"), "-f", "graphml")
    assert result.returncode == 2 and "cannot read" in result.stderr
    result = igg("export", str(doc), "-f", "pdf")
    assert result.returncode == 2 and "invalid choice: 'pdf'" in result.stderr
    good = tmp_path / "g.json"
    write_json(small().state, good)
    result = igg("export", str(good), "-f", "json", "-o", str(good))
    assert result.returncode == 2 and "refusing to overwrite the input" in result.stderr
