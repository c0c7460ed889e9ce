"""The richer optional schema: type descriptions and property types, enforced, shown and in the LLM schema."""

from __future__ import annotations

import jsonschema
import pytest

from igg.agents.prompt import response_schema
from igg.errors import RequestInvalid
from igg.models.verdicts import ErrorCode as C
from igg.observe.render import render_observation
from tests.conftest import Workspace, make_request, node

SCHEMA = {
    "node_types": ["Class", "Interface", "Method", "DatabaseTable"],
    "edge_types": ["CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO"],
    "required_attributes": {"Class": ["name", "package"]},
    "descriptions": {"Class": "A Java class of the auth module", "CALLS": "a method or constructor call"},
    "property_types": {
        "Class": {
            "visibility": {"enum": ["public", "package", "private"]},
            "lines": "integer",
            "abstract": "boolean",
            "tags": "list",
            "score": "float",
            "package": "string",
        },
        "CALLS": {"count": "integer"},
    },
}


def cls(**props: object) -> dict:
    return node("Class", **{"name": "AuthService", "package": "p", **props})


def test_property_types_are_enforced_with_their_own_codes_and_messages():
    ws = Workspace(schema=SCHEMA)
    v = ws.one(cls(lines="12"))
    assert v.code == C.WRONG_PROPERTY_TYPE
    assert (
        v.message == "Class: property 'lines' must be an integer (schema property_types); got string \"12\"."
    )
    v = ws.one(cls(visibility="protected"))
    assert v.code == C.VALUE_NOT_IN_ENUM
    assert (
        v.message
        == 'Class: property \'visibility\' is "protected"; allowed values: "public", "package", "private".'
    )
    assert ws.one(cls(abstract=1)).code == C.WRONG_PROPERTY_TYPE  # 1 is not a boolean
    assert ws.one(cls(lines=True)).code == C.WRONG_PROPERTY_TYPE  # nor true an integer
    assert ws.one(cls(tags="a")).code == C.WRONG_PROPERTY_TYPE
    v = ws.one(cls(lines=12, score=3, abstract=False, tags=["x"], visibility="public", free="anything"))
    assert v.accepted  # an integer is a float too; undeclared properties stay free
    v = ws.one({"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"lines": 1.5}})
    assert v.code == C.WRONG_PROPERTY_TYPE
    ws.one(node("Class", name="Other", package="p"))
    v = ws.one(
        {
            "type": "ADD_EDGE",
            "label": "CALLS",
            "from": {"name": "AuthService"},
            "to": {"name": "Other"},
            "properties": {"count": "many"},
        }
    )
    assert v.code == C.WRONG_PROPERTY_TYPE and v.message.startswith("CALLS: property 'count'")


def test_schema_checks_name_unknown_types_and_bad_property_types():
    with pytest.raises(RequestInvalid) as exc:
        make_request(
            schema={**SCHEMA, "property_types": {"Klass": {"x": "integer"}}, "descriptions": {"Nope": "?"}}
        )
    text = str(exc.value)
    assert "config.schema.property_types.Klass: 'Klass' is not a node or edge type" in text
    assert "config.schema.descriptions.Nope: 'Nope' is not a node or edge type" in text
    with pytest.raises(RequestInvalid) as exc:
        make_request(schema={**SCHEMA, "property_types": {"Class": {"x": "number"}}})
    assert "config.schema.property_types.Class.x" in str(exc.value)


def test_descriptions_and_property_types_are_shown_in_the_observation():
    ws = Workspace(schema=SCHEMA)
    markdown, _ = render_observation(
        request=ws.request,
        state=ws.state,
        iteration=1,
        last_verdicts=[],
        last_error=None,
        chunk=None,
        todos=[],
    )
    assert (
        "- Class (name; package): A Java class of the auth module. Typed properties: visibility one of"
        ' "public"|"package"|"private", lines integer, abstract boolean, tags list, score float, package'
        " string" in markdown
    )
    assert "- CALLS: a method or constructor call. Typed properties: count integer" in markdown


def test_the_llm_response_schema_narrows_typed_properties_and_knows_distinct():
    schema = response_schema(make_request(schema=SCHEMA))
    good = {
        "reasoning": "",
        "finished": False,
        "actions": [
            {
                "type": "ADD_NODE",
                "label": "Class",
                "properties": {"name": "A", "lines": 3, "visibility": "public"},
                "distinct": True,
            },
            {"type": "ADD_NODE", "label": "Method", "properties": {"name": "m", "lines": "free here"}},
            {
                "type": "ADD_EDGE",
                "label": "CALLS",
                "from": {"name": "A"},
                "to": {"name": "B"},
                "properties": {"count": 2},
            },
            {"type": "ADD_EDGE", "label": "READS_FROM", "from": {"name": "A"}, "to": {"name": "t"}},
        ],
    }
    jsonschema.validate(good, schema)
    for bad in (
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "lines": "3"}},
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "visibility": "open"}},
        {
            "type": "ADD_EDGE",
            "label": "CALLS",
            "from": {"name": "A"},
            "to": {"name": "B"},
            "properties": {"count": "2"},
        },
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**good, "actions": [bad]}, schema)
