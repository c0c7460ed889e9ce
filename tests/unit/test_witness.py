"""Ctrl-C after a fresh static map kept its one step (``igg.interfaces.cli.keep.Witness``): what the run
writes is the map's graph as the step left it, not the bare seed (a static map has no iteration records to
rebuild it from), and the line says after which step it stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from igg.interfaces.cli.keep import Witness
from igg.service import map_code

CODE = Path(__file__).resolve().parents[2] / "fixtures" / "code"


class _Interrupt:
    """A recorder after the witness: Ctrl-C as the run finishes."""

    def begin(self, *args: Any) -> None: ...
    def record(self, record: Any) -> None: ...
    def keep(self, *args: Any, **kwargs: Any) -> None: ...

    def finish(self, result: Any) -> None:
        raise KeyboardInterrupt


def _graph(state: Any) -> tuple[Any, Any]:
    return dict(state.nodes), {e: (u, v, d) for e, (u, v, d) in state.edge_rows()}


def test_ctrl_c_after_a_static_maps_step_keeps_the_maps_graph() -> None:
    finished, _ = map_code([CODE / "python"], jobs=1)
    witness = Witness()
    with pytest.raises(KeyboardInterrupt):
        map_code([CODE / "python"], jobs=1, recorders=[witness, _Interrupt()])
    result = witness.result("m")
    assert result is not None and result.stop_reason == "interrupted"
    assert result.iterations == 1 and [s.kind for s in result.steps] == ["update"]
    assert result.state.node_count == finished.state.node_count > 0
    assert _graph(result.state) == _graph(finished.state)


def test_what_changed_after_the_kept_step_is_reverted() -> None:
    witness = Witness()
    with pytest.raises(KeyboardInterrupt):
        map_code([CODE / "python"], jobs=1, recorders=[witness, _Interrupt()])
    assert witness.state is not None
    kept = _graph(witness.state)
    witness.state.add_node("Module", {"name": "late", "path": "late.py", "language": "python"})
    first = next(iter(witness.state.nodes))
    for edge in [e for e, (u, v, _) in witness.state.edge_rows() if first in (u, v)]:
        witness.state.delete_edge(edge)
    witness.state.delete_node(first)
    result = witness.result("m")
    assert result is not None and _graph(result.state) == kept
