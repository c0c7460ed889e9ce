"""The act step's fast path for ADD_NODE / ADD_EDGE responses (``igg.act.fastadds``): a response of ADD_NODE /
ADD_EDGE actions gets exactly the verdicts, messages and graph the general rule chain gives, bad actions
included."""

from __future__ import annotations

from typing import Any

from conftest import Workspace, edge, node

from igg.act.fastadds import apply_adds
from igg.models.actions import read_response

PATTERNS = {
    "edge_patterns": [{"from": "Class", "type": "IMPLEMENTS", "to": "Interface"}],
    "identity_keys": {"Method": ["name", "signature"]},
}


def _both(actions: list[dict[str, Any]], **config: Any) -> tuple[Workspace, list[Any], Workspace, list[Any]]:
    """The same actions through the fast path and through the general path, each on a fresh workspace."""
    fast, slow = Workspace(**config), Workspace(**config)
    items = read_response({"reasoning": "", "actions": actions}).items
    assert fast.actor.fast(items)
    got = apply_adds(fast.state, items, fast.actor.schema, fast.actor.limits, fast.actor._apply)
    items = read_response({"reasoning": "", "actions": actions}).items
    want = slow.actor._apply(slow.state, items)
    return fast, got, slow, want


def _graph(ws: Workspace) -> tuple[list[Any], list[Any]]:
    s = ws.state
    nodes = sorted((n, s.node_type(n), sorted(s.node_properties(n).items())) for n in s.graph.nodes)
    edges = sorted((u, d["type"], v, k) for u, v, k, d in s.graph.edges(keys=True, data=True))
    return nodes, edges


AUTH = {"label": "Class", "name": "AuthService"}
IFACE = {"label": "Interface", "name": "Auth"}
LOGIN = {"label": "Method", "name": "login", "signature": "login(String)"}


def _mixed() -> list[dict[str, Any]]:
    return [
        node("Class", name="AuthService", package="com.app"),
        node("Interface", name="Auth"),
        node("Method", name="login", signature="login(String)"),
        node("Klass", name="Typo"),  # UNKNOWN_NODE_TYPE
        node("Class", name="NoPackage"),  # MISSING_REQUIRED_ATTRIBUTE
        node("Class", name="AuthService", package="com.app"),  # DUPLICATE_NODE
        node("Class", name=" Padded ", package="p"),  # normalised, then added as "Padded"
        node("Class", name="Padded", package="p"),  # DUPLICATE_NODE of the normalised one
        node("DatabaseTable", name=123),  # a non-string identity: the rule chain
        edge("IMPLEMENTS", AUTH, IFACE),
        edge("IMPLEMENTS", AUTH, IFACE),  # DUPLICATE_EDGE
        edge("IMPLEMENTS", IFACE, AUTH),  # EDGE_PATTERN_FORBIDDEN
        edge("CALLS", LOGIN, LOGIN),  # SELF_LOOP_FORBIDDEN
        edge("CALLS", AUTH, {"label": "Class", "name": "Missing"}),  # NODE_NOT_FOUND
        edge("CALLS", AUTH, {"name": "Auth"}),  # no label: resolved by the rule chain
        edge("CALLS", AUTH, {"label": "Class", "name": "Padded "}),  # a reference to normalise
        edge("CALLS", AUTH, {"label": "Sprocket", "name": "x"}),  # UNKNOWN_NODE_TYPE in a reference
        edge("CALLZ", AUTH, IFACE),  # UNKNOWN_EDGE_TYPE
        edge("CALLS", AUTH, LOGIN, weight="x" * 5000),  # INVALID_PROPERTY (too long)
        edge("READS_FROM", LOGIN, {"label": "DatabaseTable", "name": 123}),
    ]


def test_batch_verdicts_and_graph_equal_the_rule_chain() -> None:
    fast, got, slow, want = _both(_mixed(), schema=PATTERNS, constraints={"max_property_length": 1000})
    assert [v.to_dict() for v in got] == [v.to_dict() for v in want]
    assert _graph(fast) == _graph(slow)
    codes = [v.code for v in got]
    assert {
        "UNKNOWN_NODE_TYPE",
        "MISSING_REQUIRED_ATTRIBUTE",
        "DUPLICATE_NODE",
        "DUPLICATE_EDGE",
        "EDGE_PATTERN_FORBIDDEN",
        "SELF_LOOP_FORBIDDEN",
        "NODE_NOT_FOUND",
        "UNKNOWN_EDGE_TYPE",
        "INVALID_PROPERTY",
    } <= {str(c) for c in codes if c is not None}
    assert sum(v.accepted for v in got) == 9


def test_batch_limits_reject_like_the_rule_chain() -> None:
    actions = [node("Class", name=f"C{i}", package="p") for i in range(5)]
    actions += [
        edge("CALLS", {"label": "Class", "name": f"C{i}"}, {"label": "Class", "name": f"C{i + 1}"})
        for i in range(4)
    ]
    fast, got, slow, want = _both(actions, constraints={"max_nodes": 3, "max_edges": 1})
    assert [v.to_dict() for v in got] == [v.to_dict() for v in want]
    assert [str(v.code) for v in got if not v.accepted] == ["MAX_NODES_EXCEEDED"] * 2 + [
        "MAX_EDGES_EXCEEDED"
    ] + ["NODE_NOT_FOUND"] * 2
    assert _graph(fast) == _graph(slow)


def test_the_fast_path_stands_down_for_other_rules_and_actions() -> None:
    ws = Workspace()
    adds = read_response(
        {
            "reasoning": "",
            "actions": [node("Class", name="A", package="p"), node("Class", name="B", package="p")],
        }
    ).items
    assert ws.actor.fast(adds)
    mixed = read_response(
        {
            "reasoning": "",
            "actions": [node("Class", name="A", package="p"), {"type": "DELETE_NODE", "node": {"name": "A"}}],
        }
    ).items
    assert not ws.actor.fast(mixed)  # another action type: the general path
    broken = read_response(
        {"reasoning": "", "actions": [node("Class", name="A", package="p"), {"type": "ADD"}]}
    ).items
    assert not ws.actor.fast(broken)  # an action that was not read whole
    assert Workspace(apply_mode="atomic").actor.fast(adds)  # the actor rolls a rejected response back after
    from igg.act import Actor
    from igg.models.actions import AddNode

    extra = Actor(
        ws.state.schema, ws.request.config.constraints, extra_rules={AddNode: (lambda c, a, p: None,)}
    )
    assert not extra.fast(adds)  # an extra rule (e.g. grounding) is only in the general chain
    guarded = Workspace(constraints={"duplicates": {"policy": "reject"}})
    fast, got, slow, want = _both(
        [node("Class", name="AuthService", package="p"), node("Class", name="AuthServices", package="p")],
        constraints={"duplicates": {"policy": "reject"}},
    )
    assert guarded.actor.limits.duplicates.policy == "reject"
    assert [v.to_dict() for v in got] == [v.to_dict() for v in want]
    assert str(got[1].code) == "POSSIBLE_DUPLICATE"


def test_a_bad_action_from_the_static_agent_is_still_rejected_with_its_verdict(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """The static agent's turns take the fast path; an action it gets wrong is refused all the same."""
    import igg.act.apply as apply_module
    from igg.agents.code.agent import CodeAgent
    from igg.engine.loop import run
    from igg.mapping.prepare import prepare

    taken: list[int] = []
    monkeypatch.setattr(
        apply_module,
        "apply_adds",
        lambda state, items, *rest: taken.append(len(items)) or apply_adds(state, items, *rest),
    )
    (tmp_path / "app.py").write_text(
        "class A:\n    def f(self):\n        return B()\n\n\nclass B:\n    pass\n"
    )
    codemap = prepare([tmp_path])

    class Sloppy(CodeAgent):
        spoiled = False

        def __call__(self, obs: Any) -> dict[str, Any]:
            turn = super().__call__(obs)
            if turn["actions"] and not self.spoiled:
                self.spoiled = True
                turn["actions"][1] = {**turn["actions"][1], "label": "Klass"}
            return turn

    result = run(codemap.request, Sloppy(model=codemap.model, files_per_turn=100))
    first = result.records[0]
    assert taken and taken[0] == len(first.verdicts)
    bad = first.verdicts[1]
    assert (bad.accepted, str(bad.code)) == (False, "UNKNOWN_NODE_TYPE")
    assert bad.message.startswith(
        "node type 'Klass' is not in the schema; allowed node types: Package, Module"
    )
    # the rest stands: accepted, or (an edge to the refused node) NODE_NOT_FOUND
    assert {str(v.code) for i, v in enumerate(first.verdicts) if i != 1 and not v.accepted} <= {
        "NODE_NOT_FOUND"
    }
    assert sum(v.accepted for v in first.verdicts) >= len(first.verdicts) - 3
    assert result.stop_reason == "finished"


def test_with_the_near_duplicate_guard_on_verdicts_and_graph_equal_the_rule_chain() -> None:
    """Under every policy the fast path accepts only nodes without candidates; the rest (rejected, warned,
    "distinct") get the rule chain's verdicts, and the index sees every node either path added."""
    names = [
        "AuthService",
        "auth_service",
        "AuthServce",
        "AuthenticationService",
        "UserRepo",
        "UserRepository",
        "Handler1",
        "Handler2",
        "Billing",
    ]
    actions = [node("Class", name=n, package="p") for n in names]
    actions.append({**node("Class", name="AuthSvc", package="p"), "distinct": True})
    actions += [
        edge("CALLS", {"label": "Class", "name": names[i]}, {"label": "Class", "name": names[i + 1]})
        for i in range(len(names) - 1)
    ]
    for policy in ("reject", "warn"):
        fast, got, slow, want = _both(actions, constraints={"duplicates": {"policy": policy}})
        assert [v.to_dict() for v in got] == [v.to_dict() for v in want]
        assert _graph(fast) == _graph(slow)
        flagged = [v for v in got if "POSSIBLE_DUPLICATE" in (str(v.code), str(getattr(v, "warning", None)))]
        assert len(flagged) >= 3, policy
