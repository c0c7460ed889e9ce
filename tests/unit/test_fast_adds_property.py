"""The ADD_NODE / ADD_EDGE fast path (``igg.act.fastadds``) is pinned to the general path it shortcuts: random
responses, valid and not, give equal verdicts, graphs (ids, properties, provenance) and journals through an
actor that takes the fast path and through one forced down the rule chain, under every near-duplicate policy
and both apply modes."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.act import Actor
from igg.act.context import CheckContext
from igg.act.evidence import Grounder
from igg.graph.state import GraphState
from igg.models.actions import AddNode, read_response
from igg.models.verdicts import Verdict
from igg.request.load import build_state, load_request

SCHEMA = {
    "node_types": ["Class", "Interface", "Method", "Typed"],
    "edge_types": ["CALLS", "IMPLEMENTS", "WEIGHED"],
    "required_attributes": {"Class": ["name", "package"], "WEIGHED": ["weight"]},
    "identity_keys": {"Method": ["name", "signature"]},
    "edge_patterns": [{"from": "Class", "type": "IMPLEMENTS", "to": "Interface"}],
    "property_types": {"Typed": {"size": "integer"}},
    "valid_time": {"CALLS": {"one_at_a_time": True}, "Class": {"properties": ["doc"]}, "Interface": {}},
}
"""Types the fast path handles (Class, Interface, Method, CALLS, IMPLEMENTS with a pattern) and types it
always hands to the rule chain (Typed: declared property types; WEIGHED: a required edge attribute; CALLS and
Class: valid time with supersession and a property history)."""
TIMES = ["2020", "2021-05", "2019-12-31T23:00:00-02:00", "2018", "in 2020", "2020-13"]


def _with_time(draw: st.DrawFn, action: dict[str, Any]) -> dict[str, Any]:
    """Valid time one action in three: a start, an end, or both (some unreadable, some on types without
    time)."""
    if _one_in(draw, 3):
        for field in draw(st.sampled_from([("valid_from",), ("valid_to",), ("valid_from", "valid_to")])):
            action[field] = draw(_often(TIMES[:4], TIMES[4:]))
    return action


# near-duplicates, names to normalise, an alias pair, non-strings and empty values among the identities
NAMES = [
    "AuthService",
    "auth_service",
    "AuthServce",
    "AuthenticationService",
    " AuthService",
    "UserRepo",
    "UserRepository",
    "Billing",
    "billing",
    "Handler1",
    "Handler2",
    "A",
    "B",
    "Ünïcode",
    "",
    7,
    True,
]
PLAIN_NAMES = ["AuthService", "AuthServices", "UserRepo", "UserRepository", "Billing", "Handler1", "A", "B"]
"""Names most actions use, so that references find the nodes added before them (and near-duplicates meet)."""
LABELS = ["Class", "Interface", "Method", "Typed", "Klass"]
EDGE_LABELS = ["CALLS", "IMPLEMENTS", "WEIGHED", "CALLZ"]
VALUES = st.one_of(
    st.sampled_from(["p", "q", "", " padded ", "x" * 40]),
    st.integers(-3, 3),
    st.booleans(),
    st.just(1.5),
    st.just(["a", "b"]),
    st.just(["a", "x" * 40]),
    st.just(["a", 1]),
    st.just([]),
)
EXTRA_KEYS = st.sampled_from(["doc", "lines", "size", "bad key!", "weight", "package"])


def _often(common: list[Any], rare: list[Any]) -> st.SearchStrategy[Any]:
    """Each of ``common`` seven times as likely as each of ``rare`` (hypothesis shrinks towards
    ``common[0]``)."""
    return st.sampled_from(common * 7 + rare)


def _one_in(draw: st.DrawFn, k: int) -> bool:
    """True one time in ``k`` (False is what hypothesis shrinks towards)."""
    return bool(draw(st.sampled_from([False] * (k - 1) + [True])))


def _extras(draw: st.DrawFn) -> dict[str, Any]:
    """No extra properties two times in three, else up to two of any key and kind of value."""
    return draw(st.dictionaries(EXTRA_KEYS, VALUES, max_size=2)) if _one_in(draw, 3) else {}


@st.composite
def node_actions(draw: st.DrawFn) -> dict[str, Any]:
    """An ADD_NODE: any label, identity present or not, extra properties of every kind, maybe ``distinct``."""
    label = draw(_often(["Class", "Interface", "Method"], ["Typed", "Klass"]))
    props: dict[str, Any] = {}
    if not _one_in(draw, 20):
        props["name"] = draw(_often(PLAIN_NAMES, NAMES))
    if label in ("Class", "Klass") and not _one_in(draw, 10):
        props["package"] = draw(_often(["p"], ["q", ""]))
    if label == "Method" and not _one_in(draw, 10):
        props["signature"] = draw(_often(["()"], ["(int)", " () "]))
    props.update(_extras(draw))
    action: dict[str, Any] = {"type": "ADD_NODE", "label": label, "properties": props}
    if _one_in(draw, 5):
        action["distinct"] = True
    return _with_evidence(draw, _with_time(draw, action))


QUOTES = [
    "AuthService calls the TokenStore",
    "the   TokenStore\nkeeps tokens",
    "words the context never says",
    "AuthService calls the TokenStor",
]
CONTEXT = "// File: a.py\nAuthService calls the TokenStore; the TokenStore keeps tokens.\n"
"""What the grounder of both paths reads: quotes found exactly, normalized, approximately, or not at all."""


def _with_evidence(draw: st.DrawFn, action: dict[str, Any]) -> dict[str, Any]:
    if _one_in(draw, 3):
        action["evidence"] = draw(st.lists(st.sampled_from(QUOTES), min_size=1, max_size=2))
    return action


@st.composite
def references(draw: st.DrawFn) -> dict[str, Any]:
    """A node reference: by name alone, by type and identity, with a signature, an unknown type, or extra
    keys."""
    name = draw(_often(PLAIN_NAMES, NAMES))
    shape = draw(_often([0, 1, 2], [3, 4, 5]))
    if shape == 0:
        return {"name": name}
    if shape == 1:
        return {"label": draw(_often(["Class", "Interface"], ["Method", "Typed"])), "name": name}
    if shape == 2:
        return {"label": "Method", "name": name, "signature": draw(_often(["()"], ["(int)", " () "]))}
    if shape == 3:
        return {"label": "Sprocket", "name": name}
    if shape == 4:
        return {"name": name, "package": draw(st.sampled_from(["p", "q"]))}
    return {"label": "Class", "name": name, "package": "p"}


@st.composite
def edge_actions(draw: st.DrawFn) -> dict[str, Any]:
    """An ADD_EDGE between any references (self loops, unknown or just-added nodes), properties or not."""
    source = draw(references())
    target = source if _one_in(draw, 7) else draw(references())
    return _with_evidence(
        draw,
        _with_time(
            draw,
            {
                "type": "ADD_EDGE",
                "label": draw(_often(["CALLS", "IMPLEMENTS"], ["WEIGHED", "CALLZ"])),
                "from": source,
                "to": target,
                "properties": _extras(draw),
            },
        ),
    )


RESPONSES = st.lists(
    st.lists(st.one_of(node_actions(), node_actions(), edge_actions()), min_size=2, max_size=16),
    min_size=1,
    max_size=3,
)
"""One to three responses in a row (a later one refers to nodes an earlier one added)."""

CONSTRAINTS = st.fixed_dictionaries(
    {
        "max_nodes": st.integers(2, 20),
        "max_edges": st.integers(1, 12),
        "allow_self_loops": st.one_of(st.booleans(), st.sampled_from([["CALLS"], ["CALLS", "WEIGHED"], []])),
        "max_property_length": st.sampled_from([30, 1000]),
        "max_properties": st.sampled_from([3, 64]),
        "duplicates": st.fixed_dictionaries(
            {
                "policy": st.sampled_from(["reject", "warn", "off"]),
                "threshold": st.sampled_from([0.8, 0.9]),
                "aliases": st.sampled_from([[], [["AuthService", "AuthenticationService"]]]),
            }
        ),
    }
)

_REQUESTS: dict[str, Any] = {}


def _request(constraints: dict[str, Any], mode: str) -> Any:
    key = repr((sorted(constraints.items()), mode))
    if key not in _REQUESTS:
        _REQUESTS[key] = load_request(
            {
                "goal_prompt": "property",
                "config": {"schema": SCHEMA, "apply_mode": mode, "constraints": constraints},
            }
        )
    return _REQUESTS[key]


def _pass(ctx: CheckContext, action: AddNode, resolved: Any) -> None:
    """An extra rule that never rejects: an actor with it takes the general path for every action."""
    return None


def _snapshot(state: GraphState) -> tuple[Any, ...]:
    """Everything a path leaves behind: nodes and edges in order with their data, the id counters, the
    journal."""
    nodes = [(nid, copy.deepcopy(data)) for nid, data in state.nodes.items()]
    edges = [(eid, u, v, copy.deepcopy(d)) for eid, (u, v, d) in state.edge_rows()]
    journal = state.take_journal()
    return nodes, edges, state.id_counters, journal, [m.to_dict() for m in journal]


def _run(actor: Actor, request: Any, responses: Sequence[list[dict[str, Any]]]) -> list[Any]:
    state, problems = build_state(request)
    assert not problems
    out: list[Any] = []
    for actions in responses:
        items = read_response({"reasoning": "", "actions": copy.deepcopy(actions)}).items
        state.iteration += 1
        verdicts = actor.apply(state, items)
        out.append(([v.to_dict() for v in verdicts], verdicts, _snapshot(state)))
    return out


def test_fast_adds_give_the_rule_chains_verdicts_graph_and_journal() -> None:
    tally = {
        "fast": 0,
        "handed_on": 0,
        "accepted": 0,
        "rejected": 0,
        "near_duplicate": 0,
        "rolled_back": 0,
        "evidence": 0,
    }

    # derandomized: the same 200 examples every run, so the tally below (every kind of outcome reached) is a
    # property of the test, not of a seed (a random run once drew no near-duplicate in 200 examples)
    @settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(
        responses=RESPONSES,
        constraints=CONSTRAINTS,
        mode=st.sampled_from(["per_action", "atomic"]),
        grounding=st.sampled_from(["off", "warn", "required_edges", "required"]),
    )
    def same(
        responses: list[list[dict[str, Any]]], constraints: dict[str, Any], mode: str, grounding: str
    ) -> None:
        request = _request(constraints, mode)
        limits, schema = request.config.constraints, build_state(request)[0].schema
        fast = Actor(schema, limits, mode, grounder=Grounder(CONTEXT, 3000, grounding))  # type: ignore[arg-type]
        general = Actor(
            schema, limits, mode, extra_rules={AddNode: [_pass]}, grounder=Grounder(CONTEXT, 3000, grounding)
        )  # type: ignore[arg-type]
        handed_on = 0
        chain = fast._apply

        def counted(state: GraphState, items: Sequence[Any], cursor: int | None = None) -> list[Verdict]:
            nonlocal handed_on
            handed_on += len(items)
            return chain(state, items, cursor)

        fast._apply = counted  # type: ignore[method-assign]
        for actions in responses:
            items = read_response({"reasoning": "", "actions": actions}).items
            assert fast.fast(items) and not general.fast(items)
        got, want = _run(fast, request, responses), _run(general, request, responses)
        assert got == want
        tally["fast"] += sum(len(a) for a in responses) - handed_on
        tally["handed_on"] += handed_on
        for dicts, _, _ in got:
            for v in dicts:
                tally["accepted" if v["accepted"] else "rejected"] += 1
                tally["near_duplicate"] += "POSSIBLE_DUPLICATE" in (v.get("code"), v.get("warning"))
                tally["rolled_back"] += v.get("code") == "ROLLED_BACK"
                tally["evidence"] += "EVIDENCE" in str(v.get("code")) + str(v.get("warning"))

    same()
    # the examples reached both sides of the fast path and every kind of outcome
    assert all(tally.values()), tally
