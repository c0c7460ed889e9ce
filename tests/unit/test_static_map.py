"""The static pass of a fresh ``igg map-code`` (``igg.mapping.static``: the graph planned as one difference
and applied as one step) is pinned to the path it replaced, the code agent driven through the loop turn by
turn: the same graph (element ids aside: the two number them in another order) and the same account of what
was left out, on every fixture tree (real projects' files among them: Go's chi and uuid), and under a copied
schema that refuses some of what a code map proposes, where both leave out the same elements and go on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from igg.agents.code.agent import CodeAgent
from igg.engine.loop import run
from igg.mapping.prepare import FILES_PER_TURN, code_agent, prepare
from igg.service import map_code
from igg.store import SessionStore

ROOT = Path(__file__).resolve().parents[2]
CODE = ROOT / "fixtures" / "code"
TREES = ["python", "java", "java_calls", "java_calls3", "typescript", "go", "polyglot", "http"]


def _graph(state: Any) -> tuple[Any, Any]:
    """Nodes as (type, properties) and edges as (type, source's, target's, properties), ids left out."""
    key = {
        nid: (data["type"], json.dumps(data["properties"], sort_keys=True))
        for nid, data in state.nodes.items()
    }
    edges = sorted(
        (d["type"], key[u], key[v], json.dumps(d["properties"], sort_keys=True))
        for _, (u, v, d) in state.edge_rows()
    )
    return sorted(key.values()), edges


def _by_loop(paths: list[Path], **options: Any) -> Any:
    """The map the code agent makes through the loop (what a fresh map was before the static pass)."""
    codemap = prepare(paths, jobs=1, **options)
    agent = code_agent("code", codemap)
    loop_agent = CodeAgent(model=codemap.model, fit=agent.fit, files_per_turn=FILES_PER_TURN)
    return run(codemap.request, loop_agent), loop_agent, codemap


@pytest.mark.parametrize("tree", TREES)
def test_the_static_pass_draws_the_graph_the_loop_draws(tree: str) -> None:
    paths = [CODE / tree]
    prepared: list[Any] = []
    result, summary = map_code(paths, jobs=1, on_prepared=prepared.append)
    looped, loop_agent, loop_map = _by_loop(paths)
    assert result.stop_reason == looped.stop_reason == "finished"
    assert result.state.node_count > 0 and result.state.edge_count > 0
    assert _graph(result.state) == _graph(looped.state)
    # one planned step, its changes counted as the actions accepted
    assert result.iterations == 1 and looped.iterations > 1
    actions = result.summary()["actions"]
    assert actions["accepted"] == actions["proposed"] == result.state.node_count + result.state.edge_count
    assert summary["static_analysis"] == loop_agent.summary()
    # the facts and the linked model were let go of once the graph was planned; the summary still counts them
    codemap = prepared[0]
    assert codemap.facts == [] and codemap.model.files == [] and codemap.model.symbols == {}
    assert codemap.plan is None  # the limit check's plan, applied as planned and let go of
    assert summary["files"]["lines"] == sum(f.lines for f in loop_map.facts) > 0
    assert summary["files"]["partial"] == loop_map.partial_files()


def test_a_schema_that_refuses_some_elements_leaves_them_out_as_the_loop_does(tmp_path: Path) -> None:
    """A copied schema that types a Function's signature as an integer: the act step refuses every Function,
    and the edges to or from one are left out; the rest of the map is applied, as the loop's code agent
    applied it."""
    schema = json.loads((ROOT / "schemas" / "code-graph.json").read_text())
    schema["property_types"] = {"Function": {"signature": "integer"}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    paths = [CODE / "python"]
    store = tmp_path / "s.sqlite"
    result, summary = map_code(paths, jobs=1, schema=tmp_path / "schema.json", store=store, session_id="m")
    looped, loop_agent, _ = _by_loop(paths, schema=tmp_path / "schema.json")
    assert result.stop_reason == "finished"
    assert _graph(result.state) == _graph(looped.state)
    assert "Function" not in {data["type"] for data in result.state.nodes.values()}
    assert result.state.node_count > 0 and result.state.edge_count > 0
    skipped = summary["static_analysis"]["skipped"]
    assert skipped == dict(loop_agent.skipped) and skipped["rejected WRONG_PROPERTY_TYPE"] > 0
    assert skipped["edge endpoint refused or over the limit"] > 0
    stored = SessionStore(store).session("m")
    assert (stored.status, stored.last_iteration) == ("finished", 1)
    # `igg show` counts the step's changes as its accepted actions, as the run's summary does
    steps = SessionStore(store).steps("m", with_records=False)
    accepted = result.summary()["actions"]["accepted"]
    assert [(s.kind, s.proposed, s.accepted) for s in steps] == [
        ("update", accepted, accepted),
        ("finalize", 0, 0),
    ]


def test_the_run_phase_counts_placing_the_model_and_planning_its_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The summary's ``seconds.run`` covers the static pass from the model placed in the schema and its graph
    planned (the limit check's plan) to the step kept: a map whose planning takes long says so in its phases,
    and its ``total`` is what the user waited for, not a part of it. The clock is IGG's own seam
    (``map_code(clock=...)``): planning advances it by 1,000 s, the rest by nothing."""
    import igg.mapping.prepare as prepared_module

    now = [0.0]
    plan = prepared_module.check_map_size

    def slow_plan(fit: Any, limits: Any) -> Any:
        now[0] += 1000.0
        return plan(fit, limits)

    monkeypatch.setattr(prepared_module, "check_map_size", slow_plan)
    result, summary = map_code([CODE / "python"], jobs=1, clock=lambda: now[0])
    assert result.stop_reason == "finished"
    assert summary["seconds"]["run"] == 1000.0
    assert summary["seconds"]["total"] == 1000.0
