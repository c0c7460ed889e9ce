"""A graph built from nothing in one step has its mutations read from the graph (``igg.graph.built``), not
kept in its journal: they must be the journal they stand for, object for object, in its order; the store must
keep them as it kept the journal (a replay from the mutations alone rebuilds the graph); and anything else
than additions must not pass for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from igg.act.apply import Actor
from igg.graph.built import Unkept, built
from igg.graph.state import GraphState
from igg.mapping.difference import plan_difference
from igg.mapping.prepare import code_agent, prepare
from igg.service import map_code
from igg.store import SessionStore

CODE = Path(__file__).resolve().parents[2] / "fixtures" / "code"


def _applied(tree: str, journal: bool) -> tuple[GraphState, list[object]]:
    """A fresh map of ``tree`` applied to an empty graph in one pass; its mutations as the journal kept them,
    or as ``built`` reads them from the graph."""
    codemap = prepare([CODE / tree], jobs=1)
    fit = code_agent("code", codemap).fit
    config = codemap.request.config
    state = GraphState(fit.schema)
    actor = Actor(fit.schema, config.constraints, "atomic")
    diff = plan_difference(state, fit)
    unkept = Unkept()
    if not journal:
        state.journal = unkept
    applied = actor.apply_passing(state, diff)
    assert applied.counts["nodes_added"] > 0 and applied.counts["edges_added"] > 0
    mutations = list(state.take_journal()) if journal else list(built(state, unkept))
    return state, mutations


@pytest.mark.parametrize("tree", ["python", "polyglot", "http"])
def test_the_mutations_read_from_the_graph_are_the_journal(tree: str) -> None:
    kept_state, kept = _applied(tree, journal=True)
    read_state, read = _applied(tree, journal=False)
    assert read == kept  # dataclass equality: op, id, type, ends, properties and provenance, in order
    assert [m.to_dict() for m in read] == [m.to_dict() for m in kept]  # type: ignore[attr-defined]
    assert len(read) == kept_state.node_count + kept_state.edge_count


def test_the_read_mutations_index_slice_and_revert_as_a_list() -> None:
    codemap = prepare([CODE / "python"], jobs=1)
    fit = code_agent("code", codemap).fit
    state = GraphState(fit.schema)
    state.journal = unkept = Unkept()
    Actor(fit.schema, codemap.request.config.constraints, "atomic").apply_passing(
        state, plan_difference(state, fit)
    )
    state.journal = []
    made = built(state, unkept)
    whole = list(made)
    assert made[-1] == whole[-1] and made[0] == whole[0] and made[3:9] == whole[3:9]
    assert list(reversed(made)) == whole[::-1]
    for mutation in reversed(made):  # what a failed commit does: each read before it is reverted
        state.revert_mutation(mutation)
    assert state.node_count == state.edge_count == 0


def test_a_change_other_than_an_addition_does_not_pass_for_one() -> None:
    codemap = prepare([CODE / "python"], jobs=1)
    fit = code_agent("code", codemap).fit
    state = GraphState(fit.schema)
    state.journal = unkept = Unkept()
    node = state.add_node("Module", {"name": "m", "path": "m.py", "language": "python"})
    state.update_node(node, {"name": "m2"}, [])
    with pytest.raises(RuntimeError, match="otherwise than by additions"):
        built(state, unkept)
    short = Unkept()  # an addition it did not see: not every element was added under it
    with pytest.raises(RuntimeError, match="1 elements"):
        built(state, short)


def test_a_stored_static_map_replays_from_its_mutations_alone(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    result, _ = map_code([CODE / "polyglot"], jobs=1, store=store, session_id="m")
    _, replayed, _ = SessionStore(store).load_state("m", use_snapshot=False)

    def graph(state: GraphState) -> tuple[object, object]:
        return dict(state.nodes), {e: (u, v, d) for e, (u, v, d) in state.edge_rows()}

    assert graph(replayed) == graph(result.state)
    assert replayed.id_counters == result.state.id_counters
