"""GraphState's observation indexes: recently touched nodes and hubs stay right under any mutation
sequence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from igg.graph.state import HUB_DEGREE
from igg.request.load import build_state
from tests.conftest import make_request

_OPS = st.lists(
    st.tuples(
        st.sampled_from(["node", "edge", "edge", "edge", "loop", "del_edge", "del_node", "update", "undo"]),
        st.integers(0, 30),
        st.integers(0, 30),
    ),
    max_size=250,
)


def _state():
    request = make_request(constraints={"max_nodes": 1000, "max_edges": 5000, "allow_self_loops": True})
    state, _ = build_state(request)
    return state


@settings(max_examples=150, deadline=None)
@given(_OPS)
def test_hub_buckets_match_a_full_recount_after_any_mutations(ops):
    state = _state()
    ids: list[str] = []
    history: list[list] = []
    for op, a, b in ops:
        state.take_journal()
        if op == "node":
            ids.append(state.add_node("Class", {"name": f"C{len(ids)}", "package": "p"}))
        elif not ids:
            continue
        elif op in ("edge", "loop"):
            src = ids[a % len(ids)]
            dst = src if op == "loop" else ids[b % len(ids)]
            for t in ("CALLS", "READS_FROM"):
                if src in state.graph and dst in state.graph and state.edge_between(src, t, dst) is None:
                    state.add_edge(src, t, dst, {})
                    break
        elif op == "del_edge":
            edges = list(state._edge_ends)
            if edges:
                state.delete_edge(edges[a % len(edges)])
        elif op == "del_node":
            alive = [n for n in ids if n in state.graph]
            if alive:
                state.delete_node(alive[a % len(alive)])
        elif op == "update":
            alive = [n for n in ids if n in state.graph]
            if alive:
                state.update_node(alive[a % len(alive)], {"doc": str(b)})
        elif op == "undo" and history:
            for m in reversed(history.pop()):
                state.revert_mutation(m)
            state.take_journal()
            continue
        history.append(state.take_journal())
    expected = {n: state.degree(n) for n in state.graph if state.degree(n) >= HUB_DEGREE}
    bucketed = {n: b for b, bucket in state._hubs.items() for n in bucket}
    assert set(bucketed) == set(expected)
    assert all(b == expected[n].bit_length() for n, b in bucketed.items())
    assert all(bucket for bucket in state._hubs.values())
    top = state.most_connected(5)
    assert [state.degree(n) for n in top] == sorted((d for d in expected.values()), reverse=True)[: len(top)]
    assert len(top) == min(5, len(expected))


def test_most_connected_finds_the_hubs_first():
    state = _state()
    ids = [state.add_node("Class", {"name": f"C{i}", "package": "p"}) for i in range(200)]
    for i, n in enumerate(ids):
        state.add_edge(n, "CALLS", ids[(i + 1) % 200], {})
    for k, hub in enumerate((ids[10], ids[20], ids[30])):
        for target in ids[40 : 40 + 10 * (k + 1)]:
            state.add_edge(hub, "READS_FROM", target, {})
    assert state.most_connected(3) == [ids[30], ids[20], ids[10]]
    assert state.degree(ids[30]) == 32
    state.delete_node(ids[30])
    assert state.most_connected(2) == [ids[20], ids[10]]


def test_recently_touched_is_newest_first_without_duplicates_or_deleted_nodes():
    state = _state()
    a, b, c = (state.add_node("Class", {"name": n, "package": "p"}) for n in "ABC")
    state.update_node(a, {"doc": "x"})
    state.add_edge(b, "CALLS", c, {})
    assert state.recently_touched(10) == [c, b, a]
    state.delete_node(b)
    assert state.recently_touched(10) == [c, a]
    assert state.recently_touched(1) == [c]


def _internals(state) -> dict:
    """Every index a loaded state must rebuild, with the orders the observation reads."""
    return {
        "nodes": list(state.nodes.items()),
        "succ": state.succ,
        "pred": state.pred,
        "identity": state._by_identity,
        "by_prop": {k: list(v) for k, v in state._by_prop.items()},
        "by_type": {k: list(v) for k, v in state._by_type.items()},
        "edge_rows": list(state.edge_rows()),
        "counts": state.counts_by_type(),
        "hubs": {b: list(v) for b, v in state._hubs.items()},
        "recent": list(state._recent),
        "most_connected": state.most_connected(10),
        "recently_touched": state.recently_touched(10),
        "journal": state.journal,
    }


@settings(max_examples=100, deadline=None)
@given(_OPS)
def test_a_snapshot_loads_in_one_pass_into_the_state_added_element_by_element(ops):
    from igg.store.codec import snapshot_of, state_from_snapshot

    state = _state()
    ids: list[str] = []
    for op, a, b in ops:
        if op == "node":
            ids.append(state.add_node("Class", {"name": f"C{len(ids)}", "package": "p"}))
        elif ids and op in ("edge", "loop"):
            src = ids[a % len(ids)]
            dst = src if op == "loop" else ids[b % len(ids)]
            for t in ("CALLS", "READS_FROM"):
                if state.edge_between(src, t, dst) is None:
                    state.add_edge(src, t, dst, {"weight": b})
                    break
    snapshot = snapshot_of(state)
    expected = _state()
    for n in snapshot["document"]["nodes"]:  # what loading did before: one add_node / add_edge at a time
        expected.add_node(n["type"], n["properties"], n["id"], n["provenance"])
    for e in snapshot["document"]["edges"]:
        expected.add_edge(e["from"], e["type"], e["to"], e["properties"], e["id"], e["provenance"])
    expected.take_journal()
    loaded = state_from_snapshot(_state(), snapshot)  # GraphState.load: takes the snapshot's dicts over
    assert _internals(loaded) == _internals(expected)
    assert loaded.id_counters == state.id_counters
