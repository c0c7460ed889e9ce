"""``igg map-code --update`` on Go trees gives the graph a fresh map gives: after a changed ``go.mod`` (every
package renamed), and after a method added in another file than its type's (the type's computed IMPLEMENTS
changes in the type's file, which the update links again), and after an edit in a ``go.work`` workspace (each
package keeps its module's import path, not its folder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TREE = {
    "go.mod": "module example.com/shop\n\ngo 1.21\n",
    "cart/pricer.go": "package cart\n\ntype Pricer interface {\n\tPrice() int\n\tName() string\n}\n",
    "cart/cart.go": (
        "package cart\n\ntype Item struct{ cents int }\n\nfunc (i Item) Price() int { return i.cents }\n"
    ),
    "cart/names.go": 'package cart\n\nfunc label() string { return "item" }\n',
    "app/main.go": (
        'package main\n\nimport "example.com/shop/cart"\n\nfunc main() {\n\tvar p cart.Pricer = cart.Item{}\n'
        "\t_ = p.Price()\n}\n"
    ),
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _igg(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300
    )


def _graph(path: Path) -> tuple[set[str], set[tuple[str, str, str]]]:
    doc = json.loads(path.read_text())
    names = {
        n["id"]: (
            n["properties"].get("path")
            or n["properties"].get("qualified_name")
            or n["properties"].get("signature")
            or n["properties"]["name"]
        )
        for n in doc["nodes"]
    }
    return set(names.values()), {(names[e["from"]], e["type"], names[e["to"]]) for e in doc["edges"]}


def _updated_and_fresh(
    tmp_path: Path,
) -> tuple[dict[str, object], tuple[set[str], set[tuple[str, str, str]]]]:
    update = _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--update", "--json", cwd=tmp_path)
    assert update.returncode == 0, update.stderr
    now = _igg("export", "--store", "s.db", "m", "--format", "json", "--output", "now.json", cwd=tmp_path)
    fresh = _igg("map-code", "tree", "--no-store", "--quiet", "--export", "json:fresh.json", cwd=tmp_path)
    assert now.returncode == 0 and fresh.returncode == 0, now.stderr + fresh.stderr
    assert _graph(tmp_path / "now.json") == _graph(tmp_path / "fresh.json")
    return json.loads(update.stdout), _graph(tmp_path / "now.json")


def test_a_changed_go_mod_renames_the_packages_on_update(tmp_path: Path) -> None:
    tree = _write(tmp_path / "tree", TREE)
    assert (
        _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet", cwd=tmp_path).returncode == 0
    )
    (tree / "go.mod").write_text("module example.org/renamed\n\ngo 1.21\n")
    main = tree / "app" / "main.go"
    main.write_text(main.read_text().replace("example.com/shop", "example.org/renamed"))
    _, (nodes, edges) = _updated_and_fresh(tmp_path)
    assert "example.org/renamed/cart" in nodes and "example.com/shop/cart" not in nodes
    assert ("app/main.go", "IMPORTS", "example.org/renamed/cart") in edges


def test_a_method_added_beside_its_type_relinks_the_types_implements(tmp_path: Path) -> None:
    tree = _write(tmp_path / "tree", TREE)
    assert (
        _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet", cwd=tmp_path).returncode == 0
    )
    (tree / "cart" / "names.go").write_text(
        TREE["cart/names.go"] + "\nfunc (i Item) Name() string { return label() }\n"
    )
    result, (_, edges) = _updated_and_fresh(tmp_path)
    assert ("example.com/shop/cart.Item", "IMPLEMENTS", "example.com/shop/cart.Pricer") in edges
    assert result["files"]["relinked"] < 5  # linked locally: the changed file and the type's, not every file


WORKSPACE = {
    "go.work": "go 1.21\n\nuse (\n\t./go/api\n\t./go/web\n)\n",
    "go/api/go.mod": "module example.com/api\n\ngo 1.21\n",
    "go/api/server/server.go": "package server\n\nfunc Run() int { return 1 }\n",
    "go/web/go.mod": "module example.com/web\n\ngo 1.21\n\nrequire example.com/api v0.0.0\n",
    "go/web/main.go": 'package main\n\nimport "example.com/api/server"\n\nfunc main() { _ = server.Run() }\n',
}


def test_an_edit_in_a_go_work_workspace_keeps_the_module_import_paths(tmp_path: Path) -> None:
    tree = _write(tmp_path / "tree", WORKSPACE)
    assert (
        _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet", cwd=tmp_path).returncode == 0
    )
    (tree / "go/api/server/server.go").write_text(
        "package server\n\nfunc Run() int { return helper() }\n\nfunc helper() int { return 2 }\n"
    )
    result, (nodes, edges) = _updated_and_fresh(tmp_path)
    assert result["files"]["changed"] == ["go/api/server/server.go"]
    assert "example.com/api/server" in nodes and "go/api/server" not in nodes
    assert ("example.com/api/server", "CONTAINS", "go/api/server/server.go") in edges
    assert ("go/web/main.go", "IMPORTS", "example.com/api/server") in edges
