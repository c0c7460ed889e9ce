"""One limit rule for a code map and its updates (``igg.mapping.limits``).

Before, a fresh map past ``--max-nodes`` stopped adding nodes and still said ``finished``, and every
``--update`` of it (even one where no file changed) was refused; a map is now refused whole when its graph
would exceed the limits, and an update is judged by the limits its session was mapped with.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from igg.store import SessionStore
from tests.codegraph import CODE_FIXTURES
from tests.unit.test_code_update import cli, graph_of


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", root)
    return root


def _needed(capsys: pytest.CaptureFixture[str], tree: Path, store: Path) -> int:
    """The nodes the tree's map holds, as the refusal of a map with too small a limit says."""
    code, out, err = cli(capsys, "map-code", str(tree), "--store", str(store), "--max-nodes", "5", "--quiet")
    assert code == 2 and out == "", err
    found = re.search(
        r"--max-nodes: the map of these files holds (\d+) nodes, more than max_nodes=5: give "
        r"--max-nodes (\d+) or more",
        err,
    )
    assert found is not None, err
    assert found.group(1) == found.group(2)
    return int(found.group(1))


def test_a_map_past_max_nodes_is_refused_not_cut_short(
    tmp_path: Path, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.db"
    needed = _needed(capsys, tree, store)
    assert needed > 5
    assert not store.exists() or not SessionStore(store).sessions()  # nothing was mapped
    code, out, err = cli(capsys, "map-code", str(tree), "--store", str(store), "--max-edges", "3", "--quiet")
    assert code == 2 and "--max-edges: the map of these files holds" in err and "more than max_edges=3" in err


def test_a_map_at_its_limit_is_updated_by_the_same_limit(
    tmp_path: Path, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.db"
    needed = _needed(capsys, tree, store)
    code, out, err = cli(
        capsys,
        "map-code",
        str(tree),
        "--store",
        str(store),
        "--session",
        "m",
        "--max-nodes",
        str(needed),
        "--quiet",
    )
    assert code == 0, err
    info = SessionStore(store).session("m")
    assert info.stop_reason == "finished" and info.nodes == needed
    update = ["map-code", str(tree), "--store", str(store), "--update", "--quiet"]
    code, out, err = cli(capsys, *update)  # no file changed
    assert code == 0, err
    models = tree / "shop" / "models.py"
    models.write_text(models.read_text().replace("return", "return  ", 1))  # one file, same symbols
    code, out, err = cli(capsys, *update)
    assert code == 0, err
    code, out, err = cli(
        capsys, "map-code", str(tree), "--store", str(tmp_path / "fresh.db"), "--session", "f", "--quiet"
    )
    assert code == 0, err
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")

    # a change that needs one node more than the session's limit: refused whole, nothing changed
    last = SessionStore(store).session("m").last_step
    models.write_text(models.read_text() + "\n\ndef audit(order):\n    return order\n")
    code, out, err = cli(capsys, *update)
    assert code == 2
    assert (
        f"the graph would hold {needed + 1} nodes, more than the session's max_nodes={needed} (the limits it "
        f"was mapped with); map the tree again into a new session with --max-nodes {needed + 1} or more"
    ) in err
    assert SessionStore(store).session("m").last_step == last


def test_update_refuses_other_limits(tmp_path: Path, tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.db"
    assert cli(capsys, "map-code", str(tree), "--store", str(store), "--quiet")[0] == 0
    code, out, err = cli(capsys, "map-code", str(tree), "--store", str(store), "--update", "--max-nodes", "9")
    assert code == 2
    assert "--max-nodes: --update keeps the limits the session was mapped with" in err
