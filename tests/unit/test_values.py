"""config.grounding "values": every node identity and property value an action writes must be stated in its
context, read the way knowledge graphs write names (igg.act.values); else UNGROUNDED_VALUE with the closest
passage."""

from __future__ import annotations

import pytest

from igg.act.apply import Actor
from igg.act.evidence import Grounder
from igg.act.values import ValueFinder, fold
from igg.graph.state import GraphState
from igg.models.actions import read_action
from igg.request.load import build_state, load_request

TEXT = (
    "Super Capers is a 98 minute film with a $2000000.0 budget, released on 12 June 1989 in the U.S. It stars"
    " Alan B. Shepard, Tom Sizemore and The Velvet Underground; it cost 1,200 dollars, grossed 875.4 million"
    " and the comic character Arion, Baymax's friend, is a hero of the White South Africans. It's Great to Be"
    " Young was out on 9/27/2003. Luke Paul Hoare Shaw plays for Manchester United, Abraham Ribicoff for"
    " none."
)


@pytest.mark.parametrize(
    "value,how",
    [
        ("Tom Sizemore", "exact"),
        ("Super_Capers", "normalized"),  # underscores as spaces
        ("super capers", "normalized"),  # case
        ("98.0", "normalized"),
        (98, "exact"),  # a zero fraction, a number
        ("1200", "normalized"),
        ("875400000", "normalized"),  # thousands separators, "million"
        ("1989-06-12", "normalized"),
        ("2003-09-27", "normalized"),  # dates in another form
        ("Arion (comicsCharacter)", "name"),  # a disambiguator the text states, dropped
        ("Tom Sizemore (Person)", "name"),  # ... or one that is the ontology's own class
        ("Velvet Underground", "exact"),
        ("United States", "abbreviation"),
        ("Alan Shepard", "name"),  # an initial the value leaves out
        ("Abraham A. Ribicoff", "fuzzy"),  # an initial the text leaves out
        ("South Africa", "fuzzy"),  # a short ending: South Africans
        ("Luke Shaw", "name"),  # a short name of the full name the text gives
        ("Person", "term"),  # the ontology's own class
    ],
)
def test_values_stated_as_knowledge_graphs_write_them_are_found(value, how):
    assert ValueFinder(TEXT, ["Film", "Person"]).find(value) == how


@pytest.mark.parametrize(
    "value",
    [
        "Tom Rooker",  # words of the text, not this name
        "Its Great to Be Young",  # an apostrophe is a word: "It's" is not "Its"
        "[Tom Sizemore]",  # list brackets are not a name
        "Gary Cohn (comic book writer",  # a parenthesis left open
        "1989-06-13",
        "98.5",
        "1201",  # numbers and dates are exact or nothing
        "Super Capers, Texas",  # a comma qualifier the text does not state
        "Super Capers (film series)",  # a disambiguator the text does not state: "series" is a claim too
        "Tom Sizemre",  # a misspelling is not the text's
        "Person Sizemore",  # a class word does not make a name
        "Luke United",  # first and last words of a name, but not of one name
    ],
)
def test_values_the_text_does_not_state_are_not_found(value):
    assert ValueFinder(TEXT, ["Film", "Person"]).find(value) is None


def test_fold_reads_dates_numbers_units_and_initials_one_way():
    assert fold("12th of June 1989") == fold("1989-06-12") == fold("June 12, 1989") == " 1989 06 12 "
    assert fold("Washington, D.C.") == fold("Washington DC") == " washington dc "
    assert fold("98 minutes") == fold("98.0 min") == " 98 min "
    assert fold("Élodie's 5 kilometres") == " elodie ' s 5 km "


def request(**config):
    return load_request(
        {
            "goal_prompt": "films",
            "context_data": TEXT,
            "config": {
                "grounding": "values",
                "schema": {
                    "node_types": ["Film", "Person"],
                    "edge_types": ["starring"],
                    "property_types": {"Film": {"runtime": "float"}},
                },
                **config,
            },
        }
    )


def apply(req, *actions):
    state, _ = build_state(req)
    actor = Actor(state.schema, req.config.constraints, grounder=Grounder.for_request(req))
    return actor.apply(state, [read_action(a) for a in actions]), state


def test_an_ungrounded_identity_or_value_is_refused_naming_it_and_the_closest_passage():
    verdicts, state = apply(
        request(),
        {"type": "ADD_NODE", "label": "Film", "properties": {"name": "Super_Capers", "runtime": 98.0}},
        {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Tom Rooker"}},
        {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Tom Sizemore (Person)"}},
        {"type": "UPDATE_NODE", "node": {"name": "Super_Capers"}, "properties": {"runtime": 120.0}},
        {
            "type": "ADD_EDGE",
            "label": "starring",
            "from": {"name": "Super_Capers"},
            "to": {"name": "Tom Sizemore (Person)"},
            "evidence": ["Super Capers", "Tom Sizemore (Person)"],
        },
    )
    assert [v.accepted for v in verdicts] == [True, False, True, False, True]
    assert verdicts[1].code == "UNGROUNDED_VALUE"
    assert verdicts[1].message.startswith("name 'Tom Rooker' is not stated in the context")
    assert "the closest passage is 'Tom Sizemore'" in verdicts[1].message
    assert verdicts[3].code == "UNGROUNDED_VALUE" and "runtime 120.0" in verdicts[3].message
    # the edge's evidence is located by the same rule (a disambiguated name counts as stated)
    edge = next(iter(state.edges()))[3]
    assert [e["match"] for e in edge["provenance"]["evidence"]] == ["exact", "name"]


def test_the_values_policy_needs_a_context_and_leaves_other_policies_alone():
    with pytest.raises(Exception, match="needs context_data"):
        load_request(
            {"goal_prompt": "x", "config": {"grounding": "values", "schema": {"node_types": ["Film"]}}}
        )
    verdicts, _ = apply(
        request(grounding="off"),
        {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Tom Rooker"}},
    )
    assert verdicts[0].accepted


def test_the_fast_path_and_the_general_path_ground_values_alike():
    req = request()
    adds = [
        {"type": "ADD_NODE", "label": "Person", "properties": {"name": n}}
        for n in ("Tom Sizemore", "Bob Nobody")
    ]
    fast, _ = apply(req, *adds)
    state = GraphState(build_state(req)[0].schema)
    actor = Actor(state.schema, req.config.constraints, grounder=Grounder.for_request(req))
    assert actor.fast([read_action(a) for a in adds])
    general = actor._apply(state, [read_action(a) for a in adds])
    assert (
        [(v.accepted, v.code) for v in fast]
        == [(v.accepted, v.code) for v in general]
        == [(True, None), (False, "UNGROUNDED_VALUE")]
    )


@pytest.mark.parametrize(
    "text,value,how",
    [
        ("American-born Aaron Deer of Indianapolis plays indie rock.", "United States", "demonym"),
        ("Alan Shepard is an American who was born in New Hampshire.", "United States", "demonym"),
        ("The German built A-Rosa Luna is powered by an MTU engine.", "Germany", "demonym"),
        ("He holds Dutch citizenship.", "Netherlands", "demonym"),
        ("Heurelho da Silva Gomes plays for Watford.", "Heurelho Gomes", "name"),  # a name particle between
        (
            "Pierre-Emerick Emiliano François Aubameyang plays for Arsenal.",
            "Pierre-Emerick Aubameyang",
            "name",
        ),
    ],
)
def test_a_country_by_its_demonym_and_a_full_name_with_particles_are_found(text, value, how):
    assert ValueFinder(text).find(value) == how


@pytest.mark.parametrize(
    "text,value",
    [
        ("He fought in the American Civil War.", "United States"),  # inside a longer proper name
        ("African Americans are an ethnic group there.", "United States"),
        ("It is published by the American Institute of Physics.", "United States"),
    ],
)
def test_a_demonym_inside_a_proper_name_does_not_state_the_country(text, value):
    assert ValueFinder(text).find(value) is None


def test_a_node_the_context_refers_to_only_by_its_type_word_is_its_referent_and_only_one_name_claims_it():
    text = "By Gary K. Wolf, the film stars Bob Hoskins and Joanna Cassidy."
    req = load_request(
        {
            "goal_prompt": "films",
            "context_data": text,
            "config": {
                "grounding": "values",
                "schema": {"node_types": ["Film", "Person"], "edge_types": ["starring"]},
            },
        }
    )
    verdicts, state = apply(
        req,
        {
            "type": "ADD_NODE",
            "label": "Person",
            "properties": {"name": "Who Framed Roger Rabbit"},
        },  # not a person
        {"type": "ADD_NODE", "label": "Film", "properties": {"name": "Who Framed Roger Rabbit"}},
        {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Bob Hoskins"}},
        {
            "type": "ADD_EDGE",
            "label": "starring",
            "from": {"name": "Who Framed Roger Rabbit"},
            "to": {"name": "Bob Hoskins"},
            "evidence": ["Who Framed Roger Rabbit", "Bob Hoskins"],
        },
        {
            "type": "ADD_NODE",
            "label": "Film",
            "properties": {"name": "Roger Rabbit Returns"},
        },  # a second name
        {"type": "ADD_NODE", "label": "Film", "properties": {"name": "Gary Hoskins Story"}},
    )  # words the text states
    assert [(v.accepted, v.code) for v in verdicts] == [
        (False, "UNGROUNDED_VALUE"),
        (True, None),
        (True, None),
        (True, None),
        (False, "UNGROUNDED_VALUE"),
        (False, "UNGROUNDED_VALUE"),
    ]


@pytest.mark.parametrize(
    "text,found",
    [
        ("The film stars Bob Hoskins.", True),
        ("Made in 1988, the movie stars Bob Hoskins.", True),  # a common noun for a film, opening a clause
        ("Bob Hoskins praised the film at length.", False),  # not what the sentence is about
        ("The film It's Great to Be Young stars Bob Hoskins.", False),  # the film is named
        ("The song stars Bob Hoskins.", False),  # not a film's noun
    ],
)
def test_a_referent_is_the_type_word_opening_a_clause(text, found):
    assert (ValueFinder(text).find("Who Framed Roger Rabbit", "film") is not None) is found


def test_a_name_ending_in_a_class_word_is_stated_with_the_class_whole_label():
    finder = ValueFinder("Chapleau River is in the James Bay drainage basin.", ["drainage basin", "river"])
    assert finder.find("James Bay Basin") == "classed"
    assert finder.find("Hudson Bay Basin") is None


def test_a_name_written_as_one_word_or_two_is_found_and_nothing_else_joins() -> None:
    finder = ValueFinder("Jared Tallent is an Australian race walker; the racewalker won gold in 2012.")
    assert finder.find("racewalker") == "exact" and finder.find("race walker") == "exact"
    assert ValueFinder("He is an Australian race walker.").find("racewalker") == "fuzzy"
    assert ValueFinder("She works as a racewalker.").find("race walker") == "fuzzy"
    assert ValueFinder("He is an Australian race walker.").find("racewalk") is None
    assert ValueFinder("He walks in a race.").find("racewalker") is None
