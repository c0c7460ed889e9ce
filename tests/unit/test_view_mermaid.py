"""Mermaid charts that stay readable: a summary by type plus the most connected nodes, and chosen types."""

from __future__ import annotations

import json

import pytest

from igg.errors import ExportError
from igg.export import write_json
from igg.export.mermaid import mermaid_text, write_mermaid
from tests.conftest import Workspace, edge, node
from tests.support.cli import igg


def big() -> Workspace:
    """85 nodes: 80 classes each calling one of 5 methods (the methods are the hubs), plus 2 interfaces."""
    w = Workspace(constraints={"max_actions_per_response": 500, "max_nodes": 500, "max_edges": 500})
    w.apply(
        *[node("Class", name=f"c{i}", package="p") for i in range(80)],
        *[node("Method", name=f"m{i}", signature="()") for i in range(5)],
        *[edge("CALLS", {"name": f"c{i}"}, {"name": f"m{i % 5}"}) for i in range(80)],
        node("Interface", name="I1"),
        node("Interface", name="I2"),
        edge("IMPLEMENTS", {"name": "c0"}, {"name": "I1"}),
        edge("IMPLEMENTS", {"name": "c1"}, {"name": "I1"}),
    )
    return w


def test_a_large_graph_is_summarized_by_type_with_its_most_connected_nodes_and_says_what_is_left_out():
    text = mermaid_text(big().state, top=3)
    assert "%% summary: 87 nodes, 82 edges" in text
    assert (
        '        t0["Class ×80"]' in text and '        t1["Method ×5"]' in text and '["Interface ×2"]' in text
    )
    assert '        t0 -->|"CALLS ×80"| t1' in text and '        t0 -->|"IMPLEMENTS ×2"| t2' in text
    assert 'subgraph hubs["Most connected: 3 of 87 nodes"]' in text
    assert '        h0["Method: m0 (16 edges)"]' in text
    assert "c17" not in text  # a node with one edge is only counted
    assert "Not drawn one by one: 84 nodes and 82 edges" in text
    assert "igg export --types" in text


def test_choosing_node_types_draws_only_them_and_the_edges_between_them():
    w = big()
    text = mermaid_text(w.state, node_types=["Method", "Interface"])
    assert "%% only node types Method, Interface: 7 of 87 nodes, 0 of 82 edges" in text
    assert text.count('["Method: m') == 5 and '["Interface: I1"]' in text and "Class" not in text
    classes = mermaid_text(w.state, node_types=["Class"])
    assert "summary: 80 nodes, 0 edges" in classes and "Most connected" not in classes  # nothing has 2+ edges
    with pytest.raises(ExportError, match="unknown node type.*'Modul'.*node types are: Class, DatabaseTable"):
        mermaid_text(w.state, node_types=["Modul"])


def test_write_mermaid_reports_what_it_drew(tmp_path):
    summary = write_mermaid(big().state, tmp_path / "g.mmd", top=5)
    assert summary["summarized"] and summary["drawn_nodes"] == 5 and summary["omitted_nodes"] == 82
    assert (tmp_path / "g.mmd").read_text().startswith("flowchart LR\n")


def test_igg_export_takes_the_node_types_and_the_number_of_hubs(tmp_path):
    w = big()
    doc = tmp_path / "g.json"
    write_json(w.state, doc, schema=w.request.config.schema_, metadata={"session_id": "s1"})
    result = igg("export", str(doc), "-f", "mermaid", "--types", "Method,Interface", "-o", "-")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("flowchart LR\n    %% only node types Method, Interface")
    result = igg("export", str(doc), "-f", "mermaid", "--top", "2", "--json")
    out = json.loads(result.stdout)["exports"][0]
    assert out["target"] == str(tmp_path / "g.mmd") and out["drawn_nodes"] == 2
    bad = igg("export", str(doc), "-f", "mermaid", "--types", "Nope")
    assert (
        bad.returncode == 2 and "unknown node type(s) 'Nope'" in bad.stderr and "Traceback" not in bad.stderr
    )
    wrong = igg("export", str(doc), "-f", "graphml", "--types", "Class")
    assert wrong.returncode == 2 and "apply to --format mermaid only" in wrong.stderr
