"""Property test: random sequences of valid and invalid actions never break DESIGN.md's invariants."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.graph.invariants import invariant_violations
from tests.conftest import Workspace

NAMES = st.sampled_from(["A", "B", "C", "D", "E", "x | y", "é\n#"])
NODE_TYPES = st.sampled_from(["Class", "Interface", "Method", "DatabaseTable", "Bogus"])
EDGE_TYPES = st.sampled_from(["CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO", "NOPE"])
VALUES = st.one_of(
    st.text(max_size=5),
    st.integers(),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.just("k"), st.integers(), max_size=1),
)
PROPS = st.fixed_dictionaries(
    {"name": NAMES},
    optional={
        "package": st.sampled_from(["p", "q", ""]),
        "signature": st.sampled_from(["()", "(x)"]),
        "extra": VALUES,
        "bad key": VALUES,
    },
)
REF = st.one_of(
    st.fixed_dictionaries({"name": NAMES}),
    st.fixed_dictionaries({"name": NAMES, "label": NODE_TYPES}),
    st.fixed_dictionaries({"package": st.sampled_from(["p", "q"])}),
)

ACTIONS = st.one_of(
    st.builds(lambda t, p: {"type": "ADD_NODE", "label": t, "properties": p}, NODE_TYPES, PROPS),
    st.builds(lambda t, a, b: {"type": "ADD_EDGE", "label": t, "from": a, "to": b}, EDGE_TYPES, REF, REF),
    st.builds(
        lambda r, p, rm: {"type": "UPDATE_NODE", "node": r, "properties": p, "remove": rm},
        REF,
        st.dictionaries(st.sampled_from(["name", "package", "doc"]), VALUES, max_size=2),
        st.lists(st.sampled_from(["package", "doc", "name"]), max_size=1),
    ),
    st.builds(lambda r: {"type": "DELETE_NODE", "node": r}, REF),
    st.builds(lambda t, a, b: {"type": "DELETE_EDGE", "label": t, "from": a, "to": b}, EDGE_TYPES, REF, REF),
    st.builds(lambda x: x, st.sampled_from([{"type": "BOGUS"}, {"type": "ADD_NODE"}, "junk", 3, None])),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    responses=st.lists(st.lists(ACTIONS, max_size=8), min_size=1, max_size=6),
    self_loops=st.booleans(),
    atomic=st.booleans(),
)
def test_random_actions_never_break_invariants(responses, self_loops, atomic):
    ws = Workspace(
        constraints={
            "max_nodes": 5,
            "max_edges": 6,
            "allow_self_loops": self_loops,
            "max_actions_per_response": 6,
            "max_deletions_per_iteration": 2,
        },
        schema={
            "identity_keys": {"Method": ["name", "signature"]},
            "edge_patterns": [{"from": "Class", "type": "IMPLEMENTS", "to": "Interface"}],
        },
        apply_mode="atomic" if atomic else "per_action",
    )
    limits = ws.request.config.constraints
    for actions in responses:
        before = ws.state.to_document()
        verdicts = ws.apply(*actions)
        assert len(verdicts) == len(actions)
        assert all(v.accepted or (v.code and v.message) for v in verdicts)
        assert invariant_violations(ws.state, limits) == []
        if atomic and not all(v.accepted for v in verdicts):
            assert ws.state.to_document() == before
        if not any(v.accepted for v in verdicts):
            assert ws.state.to_document() == before
