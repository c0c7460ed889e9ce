"""``igg map-code --update`` writes every output a fresh map writes: ``--export`` files, ``--out`` and
``--json``.

Before, ``--update --export json:g.json`` exited 0 and wrote no file. The files an update writes are compared
with the files a fresh map of the same tree writes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx

from tests.codegraph import CODE_FIXTURES


def _igg(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


def _graph(document: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """Nodes (type and properties) and edges (between those) of an IGG JSON document; element ids aside, as
    an update numbers the elements it adds after the existing ones."""
    key = {n["id"]: (n["type"], json.dumps(n["properties"], sort_keys=True)) for n in document["nodes"]}
    return sorted(key.values()), sorted(
        (key[e["from"]], e["type"], key[e["to"]], json.dumps(e.get("properties", {}), sort_keys=True))
        for e in document["edges"]
    )


def test_update_writes_the_exports_and_the_output_directory_a_fresh_map_writes(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", tree)
    assert (
        _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet", cwd=tmp_path).returncode == 0
    )
    service = tree / "shop" / "service.py"
    service.write_text(service.read_text() + "\n\ndef added_later() -> int:\n    return 1\n")

    update = _igg(
        "map-code",
        "tree",
        "--store",
        "s.db",
        "--update",
        "--json",
        "--out",
        "upd",
        "--export",
        "json:upd.json",
        "--export",
        "graphml:upd.graphml",
        cwd=tmp_path,
    )
    assert update.returncode == 0, update.stderr
    fresh = _igg(
        "map-code",
        "tree",
        "--no-store",
        "--quiet",
        "--out",
        "fresh",
        "--export",
        "json:fresh.json",
        "--export",
        "graphml:fresh.graphml",
        cwd=tmp_path,
    )
    assert fresh.returncode == 0, fresh.stderr

    summary = json.loads(update.stdout)
    assert [(e["format"], e["target"], e["ok"]) for e in summary["exports"]] == [
        ("json", "upd.json", True),
        ("graphml", "upd.graphml", True),
    ]
    assert summary["graph"]["nodes_added"] == 1
    assert _graph(json.loads((tmp_path / "upd.json").read_text())) == _graph(
        json.loads((tmp_path / "fresh.json").read_text())
    )
    assert _graph(json.loads((tmp_path / "upd" / "graph.json").read_text())) == _graph(
        json.loads((tmp_path / "fresh" / "graph.json").read_text())
    )
    assert json.loads((tmp_path / "upd" / "summary.json").read_text())["step"] == summary["step"]
    ours, theirs = nx.read_graphml(tmp_path / "upd.graphml"), nx.read_graphml(tmp_path / "fresh.graphml")
    assert sorted(json.dumps(d, sort_keys=True) for _, d in ours.nodes(data=True)) == sorted(
        json.dumps(d, sort_keys=True) for _, d in theirs.nodes(data=True)
    )
    assert ours.number_of_edges() == theirs.number_of_edges()


def test_update_refuses_an_export_target_before_any_work_and_reports_a_failed_export(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", tree)
    assert _igg("map-code", "tree", "--store", "s.db", "--quiet", cwd=tmp_path).returncode == 0
    refused = _igg("map-code", "tree", "--store", "s.db", "--update", "--export", "pdf:x.pdf", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    (tmp_path / "taken").mkdir()
    failed = _igg("map-code", "tree", "--store", "s.db", "--update", "--export", "json:taken", cwd=tmp_path)
    assert failed.returncode in (1, 2) and "Traceback" not in failed.stderr
    assert failed.stderr.strip()
