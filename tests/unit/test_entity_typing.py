"""Entity typing in the act step (``config.entity_typing: "schema"``, ``igg.act.entities``): an ADD_EDGE end
given without a type is typed by the edge type's patterns and added when missing, with every ADD_NODE rule;
an entity the schema would type two incompatible ways is refused, never silently retyped."""

from __future__ import annotations

from typing import Any

import pytest

from igg.act.apply import Actor
from igg.act.evidence import Grounder
from igg.agents.scripted import ScriptedAgent
from igg.engine.loop import run
from igg.graph.state import GraphState
from igg.models.actions import read_action
from igg.models.request import Constraints, Request
from igg.models.schema import Schema

SCHEMA: dict[str, Any] = {
    "node_types": ["Person", "Scientist", "City", "Film"],
    "edge_types": ["birth_place", "doctoral_advisor", "mayor", "director", "related", "free"],
    "edge_patterns": [
        {"from": "Person", "type": "birth_place", "to": "City"},
        {"from": "Scientist", "type": "doctoral_advisor", "to": "Scientist"},
        {"from": "City", "type": "mayor", "to": "Person"},
        {"from": "Film", "type": "director", "to": "Person"},
        {"from": "Film", "type": "related", "to": "Film"},
        {"from": "Person", "type": "related", "to": "Person"},
    ],
    "subclass_of": {"Scientist": ["Person"]},
    "disjoint_with": {"Person": ["City"]},
}


def add_edge(label: str, source: dict[str, Any], target: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "ADD_EDGE", "label": label, "from": source, "to": target, **more}


def apply(actions: list[dict[str, Any]], *, typing: bool = True, grounder: Grounder | None = None):
    schema = Schema.model_validate(SCHEMA).compile()
    state = GraphState(schema)
    actor = Actor(schema, Constraints(), entity_typing=typing, grounder=grounder)
    verdicts = actor.apply(state, [read_action(a) for a in actions])
    return state, verdicts


def nodes(state: GraphState) -> list[tuple[str, str, str]]:
    return sorted((n, d["type"], d["properties"]["name"]) for n, d in state.nodes.items())


def test_missing_ends_are_added_typed_by_the_edge_types_patterns():
    state, verdicts = apply(
        [
            add_edge("doctoral_advisor", {"name": "Marie Curie"}, {"name": "Gabriel Lippmann"}),
            add_edge("birth_place", {"name": "Marie Curie"}, {"name": "Warsaw"}),
        ]
    )
    assert [v.accepted for v in verdicts] == [True, True]
    assert nodes(state) == [
        ("n1", "Scientist", "Marie Curie"),
        ("n2", "Scientist", "Gabriel Lippmann"),
        ("n3", "City", "Warsaw"),  # the Scientist is reused where a Person is wanted
    ]
    assert state.edge_count == 2
    added = 'from: added Scientist "Marie Curie" as n1, typed by doctoral_advisor\'s patterns'
    assert added in verdicts[0].message


def test_an_entity_typed_two_disjoint_ways_is_refused_and_nothing_is_left_behind():
    state, verdicts = apply(
        [
            add_edge("birth_place", {"name": "Marie Curie"}, {"name": "Warsaw"}),
            add_edge("birth_place", {"name": "Pierre Curie"}, {"name": "Marie Curie"}),
            add_edge("birth_place", {"name": "Pierre Curie"}, {"name": "Warsaw"}),
        ]
    )
    assert verdicts[1].code == "TYPE_CONFLICT"
    assert "Person and City disjoint" in verdicts[1].message
    # the refused edge's new end (Pierre Curie, n3) was taken back, its id too: the next edge adds it again
    assert verdicts[2].accepted and verdicts[2].element == "e2"
    assert nodes(state) == [
        ("n1", "Person", "Marie Curie"),
        ("n2", "City", "Warsaw"),
        ("n3", "Person", "Pierre Curie"),
    ]


def test_several_allowed_types_ask_for_a_label_and_a_label_is_used():
    state, verdicts = apply(
        [
            add_edge("related", {"name": "Heat"}, {"name": "Ronin"}),
            add_edge("related", {"name": "Heat", "label": "Film"}, {"name": "Ronin", "label": "Film"}),
            add_edge("related", {"name": "Heat"}, {"name": "Collateral"}),  # Heat is a Film now
        ]
    )
    assert verdicts[0].code == "AMBIGUOUS_REFERENCE"
    assert "several do (Film, Person)" in verdicts[0].message
    assert [v.accepted for v in verdicts[1:]] == [True, True]
    assert 'from: added Film "Heat" as n1, typed by its reference\'s label' in verdicts[1].message
    assert {t for _, t, _ in nodes(state)} == {"Film"}


def test_a_refused_end_takes_back_the_other_and_a_free_edge_type_still_needs_its_nodes():
    state, verdicts = apply(
        [
            add_edge("director", {"name": "Heat"}, {"name": "Michael Mann", "label": "City"}),
            add_edge("free", {"name": "Heat"}, {"name": "Ronin"}),
        ]
    )
    assert verdicts[0].code == "EDGE_PATTERN_FORBIDDEN"  # City is no Person: Heat and Michael Mann go too
    assert verdicts[1].code == "NODE_NOT_FOUND"  # no pattern types a free edge type's ends
    assert state.node_count == 0 and state.journal == []


def test_off_by_default_a_missing_end_is_not_found():
    action = add_edge("birth_place", {"name": "Marie Curie"}, {"name": "Warsaw"})
    state, verdicts = apply([action], typing=False)
    assert verdicts[0].code == "NODE_NOT_FOUND"
    assert state.node_count == 0


def test_an_added_end_is_grounded_like_any_new_node():
    grounder = Grounder("Marie Curie was born in Warsaw.", 100_000, "values")
    state, verdicts = apply(
        [
            add_edge("birth_place", {"name": "Marie Curie"}, {"name": "Paris"}),
            add_edge("birth_place", {"name": "Marie Curie"}, {"name": "Warsaw"}),
        ],
        grounder=grounder,
    )
    assert verdicts[0].code == "UNGROUNDED_VALUE"
    assert verdicts[0].message.startswith("to: the node to add: name 'Paris' is not stated")
    assert verdicts[1].accepted
    assert nodes(state) == [("n1", "Person", "Marie Curie"), ("n2", "City", "Warsaw")]


def test_a_run_types_the_agents_edges_and_its_record_keeps_the_nodes_it_added():
    request = Request.model_validate(
        {
            "goal_prompt": "people",
            "config": {"schema": SCHEMA, "entity_typing": "schema", "max_iterations": 2},
        }
    )
    turns = [
        {
            "actions": [
                add_edge("birth_place", {"name": "Marie Curie"}, {"name": "Warsaw"}),
                add_edge("mayor", {"name": "Warsaw"}, {"name": "Marie Curie"}),
            ],
            "finished": True,
        }
    ]
    result = run(request, ScriptedAgent(turns))
    assert result.stop_reason == "finished"
    assert (result.state.node_count, result.state.edge_count) == (2, 2)
    record = result.records[-1]
    assert [v.accepted for v in record.verdicts] == [True, True]


def test_a_document_build_refuses_entity_typing_it_would_not_apply(tmp_path):
    from igg.documents.build import build_documents
    from igg.errors import RequestInvalid

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Marie Curie was born in Warsaw.")
    request = Request.model_validate(
        {"goal_prompt": "people", "config": {"schema": SCHEMA, "entity_typing": "schema"}}
    )
    with pytest.raises(RequestInvalid, match="config.entity_typing"):
        build_documents(request, ScriptedAgent([]), [docs], tmp_path / "s.sqlite", agent_name="script")
    assert not (tmp_path / "s.sqlite").exists()  # refused before any session is stored


def test_the_observation_tells_the_agent_it_may_skip_add_node():
    from igg.graph.state import GraphState as State
    from igg.observe.render import render_observation

    on = Request.model_validate(
        {"goal_prompt": "people", "config": {"schema": SCHEMA, "entity_typing": "schema"}}
    )
    off = Request.model_validate({"goal_prompt": "people", "config": {"schema": SCHEMA}})
    shown = [
        render_observation(
            request=r,
            state=State(r.config.schema_.compile()),
            iteration=1,
            last_verdicts=[],
            last_error=None,
            chunk=None,
            todos=[],
        )[0]
        for r in (on, off)
    ]
    assert "Entity typing: an ADD_EDGE end that names no node yet is added" in shown[0]
    assert "Entity typing" not in shown[1]
