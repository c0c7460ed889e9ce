"""Schemas from ontologies: Text2KGBench JSON, OWL/RDFS (Turtle, RDF/XML, JSON-LD) and SHACL read into one IGG
schema; shapes written back import to the same schema; bad ontologies warn or are refused, never a
traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rdflib

from igg.act.apply import Actor
from igg.errors import RequestInvalid
from igg.graph.state import GraphState
from igg.interfaces.cli import main
from igg.models.actions import read_action
from igg.models.request import Constraints
from igg.ontology import OntologyError, load_ontology, safe_name
from igg.ontology.shapes import shapes_turtle
from igg.request.load import check_schema, load_request

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "text2kg"
FILM_JSON = FIXTURES / "19_film_ontology.json"
FILM_TTL = FIXTURES / "ont_19_film.ttl"
BENCH = "https://cenguix.github.io/Text2KGBench/ont_19_film/"

PEOPLE = """
@prefix ex: <http://example.org/people#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:Person a owl:Class ; rdfs:label "Person"@en, "Personne"@fr ; rdfs:comment "A human being." .
ex:Scientist a owl:Class ; rdfs:label "Scientist" ; rdfs:subClassOf ex:Person .
ex:Company a owl:Class ; rdfs:label "production company" ; owl:disjointWith ex:Person .
ex:City a owl:Class ; rdfs:label "City" .
ex:worksFor a owl:ObjectProperty ; rdfs:label "works for" ; rdfs:domain ex:Person ; rdfs:range ex:Company .
ex:birthDate a owl:DatatypeProperty ; rdfs:label "birth date" ; rdfs:domain ex:Person ; rdfs:range xsd:date .
ex:employees a owl:DatatypeProperty ; rdfs:domain ex:Company ; rdfs:range xsd:integer .
ex:location a owl:ObjectProperty ; rdfs:domain [ owl:unionOf ( ex:Company ex:Person ) ] ; rdfs:range ex:City .
"""


def key(schema):
    """What two imports of one ontology must agree on (lists compared as sets: RDF has no order)."""
    return {
        "nodes": sorted(schema.node_types),
        "edges": sorted(schema.edge_types),
        "patterns": sorted((p.from_, p.type, p.to) for p in schema.edge_patterns),
        "types": schema.property_types,
        "required": schema.required_attributes,
        "subclass_of": schema.subclass_of,
        "disjoint": schema.disjoint_with,
        "terms": {k: v.model_dump() for k, v in schema.terms.items()},
        "descriptions": schema.descriptions,
        "completeness": sorted(json.dumps(r.model_dump()) for r in schema.completeness),
    }


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_text2kgbench_json_ontology_becomes_a_schema_with_patterns_typed_properties_and_iris():
    onto = load_ontology(FILM_JSON)
    schema = onto.schema()
    assert not check_schema(schema, "schema")
    assert {"Film", "Person", "Country"} <= set(schema.node_types)
    assert ("Film", "director", "Person") in {(p.from_, p.type, p.to) for p in schema.edge_patterns}
    assert schema.property_types["Film"]["budget"] == "float"  # range "number"
    assert schema.property_types["Film"]["releaseDate"] == "string"  # range "Date": the datatype is kept
    assert schema.terms["releaseDate"].datatype == "http://www.w3.org/2001/XMLSchema#date"
    assert schema.terms["director"].iri == BENCH + "relations#director"
    assert schema.terms["Film"].iri == BENCH + "concepts#Film"
    # the JSON names a domain that is no concept: one warning naming the relation, its subject left open
    assert onto.warnings == [
        "relation 'writer': domain 'WrittenWork' is not a concept; its subject may be of any type"
    ]


def test_the_benchmarks_owl_file_gives_the_same_schema_as_its_json():
    from_json, from_owl = load_ontology(FILM_JSON).schema(), load_ontology(FILM_TTL).schema()
    a, b = key(from_json), key(from_owl)
    # the Turtle file declares the writer relation's domain, WrittenWork, which the JSON leaves out
    assert set(a["nodes"]) | {"WrittenWork"} == set(b["nodes"])
    assert a["types"] == b["types"] and a["terms"]["director"] == b["terms"]["director"]
    assert {p for p in a["patterns"] if p[1] != "writer"} == {p for p in b["patterns"] if p[1] != "writer"}


@pytest.mark.parametrize("fmt,suffix", [("xml", ".owl"), ("json-ld", ".jsonld"), ("turtle", ".ttl")])
def test_owl_in_turtle_rdf_xml_and_json_ld_reads_the_same(tmp_path, fmt, suffix):
    graph = rdflib.Graph().parse(data=PEOPLE, format="turtle")
    path = tmp_path / f"people{suffix}"
    graph.serialize(path, format=fmt)
    schema = load_ontology(path).schema()
    assert key(schema) == key(load_ontology(write(tmp_path, "ref.ttl", PEOPLE)).schema())
    assert schema.terms["production_company"].label == "production company"  # a safe name; the label kept
    assert schema.terms["works_for"].label == "works for"
    assert schema.terms["works_for"].iri == "http://example.org/people#worksFor"
    assert schema.descriptions["Person"] == "A human being."  # the English label, the comment
    assert schema.subclass_of == {"Scientist": ["Person"]}
    assert schema.disjoint_with == {"production_company": ["Person"]}
    assert schema.property_types["production_company"] == {"employees": "integer"}
    assert schema.property_types["Person"] == {"birth_date": "string"}
    assert sorted((p.from_, p.to) for p in schema.edge_patterns if p.type == "location") == [
        ("Person", "City"),
        ("production_company", "City"),
    ]  # owl:unionOf domain


def test_labels_with_spaces_map_to_safe_names_and_back():
    assert safe_name("production company") == "production_company"
    assert safe_name("1stRunwaySurfaceType") == "_1stRunwaySurfaceType"
    assert safe_name("Élodie's café") == "Elodie_s_cafe"


def test_shacl_shapes_written_from_a_schema_import_to_the_same_schema(tmp_path):
    for source in (FILM_JSON, write(tmp_path, "people.ttl", PEOPLE)):
        schema = load_ontology(source).schema()
        shapes = write(tmp_path, "shapes.ttl", shapes_turtle(schema))
        assert key(load_ontology(shapes).schema()) == key(schema)


def test_shacl_node_shapes_alone_make_a_schema(tmp_path):
    shapes = write(
        tmp_path,
        "shapes.ttl",
        """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix ex: <http://example.org/> .
ex:FilmShape a sh:NodeShape ; sh:targetClass ex:Film ;
  sh:property [ sh:path ex:director ; sh:class ex:Person ; sh:minCount 1 ] ;
  sh:property [ sh:path ex:budget ; sh:datatype xsd:decimal ; sh:minCount 1 ; sh:name "budget" ] .
ex:PersonShape a sh:NodeShape ; sh:targetClass ex:Person .
""",
    )
    onto = load_ontology(shapes)
    schema = onto.schema()
    assert sorted(schema.node_types) == ["Film", "Person"]
    assert [(p.from_, p.type, p.to) for p in schema.edge_patterns] == [("Film", "director", "Person")]
    assert schema.property_types == {"Film": {"budget": "float"}}
    assert schema.required_attributes == {"Film": ["budget"]}
    assert [(r.node_type, r.edge_type, r.min) for r in schema.completeness] == [("Film", "director", 1)]
    assert onto.warnings == []


def test_a_bad_ontology_warns_once_per_problem_naming_the_element(tmp_path):
    bad = write(
        tmp_path,
        "bad.json",
        json.dumps(
            {
                "id": "bad",
                "concepts": [{"qid": "A", "label": "Thing"}, {"qid": "B", "label": "Thing"}],
                "relations": [
                    {"pid": "r1", "label": "r1", "domain": "A", "range": "Nowhere"},
                    {"pid": "r2", "label": "r2", "domain": "", "range": "B"},
                ],
            }
        ),
    )
    onto = load_ontology(bad)
    assert onto.warnings == [
        "concept 'Thing': another term has this label or name (Thing); it is imported under a numbered name",
        "relation 'r1': range 'Nowhere' is neither a concept nor a datatype; its object may be of any type",
        "relation 'r2': no domain; its subject may be of any type",
    ]
    assert sorted(onto.schema().node_types) == ["Thing", "Thing_2"]
    cycle = write(
        tmp_path,
        "cycle.ttl",
        """
@prefix ex: <http://example.org/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:A a owl:Class ; rdfs:subClassOf ex:B . ex:B a owl:Class ; rdfs:subClassOf ex:A .""",
    )
    onto = load_ontology(cycle)
    assert onto.warnings == ["class 'A': subClassOf 'B' closes a cycle; that link is dropped"]
    assert onto.schema().subclass_of == {"B": ["A"]}


def test_an_unreadable_ontology_is_refused_with_exit_2_and_one_line(tmp_path, capsys):
    broken = write(tmp_path, "broken.ttl", "@prefix ex: <http://example.org/> .\nex:A a ex:B ;;")
    for path, expected in (
        (broken, "not readable as turtle"),
        (tmp_path / "missing.json", "cannot read the ontology"),
        (write(tmp_path, "empty.ttl", ""), "no class to import"),
    ):
        assert main(["schema", "import", str(path)]) == 2
        err = capsys.readouterr().err
        assert expected in err and str(path) in err and "Traceback" not in err and err.count("\n") == 1
    with pytest.raises(OntologyError):
        load_ontology(broken)


def test_schema_import_prints_a_schema_a_request_takes_and_its_warnings(capsys):
    assert main(["schema", "import", str(FILM_JSON)]) == 0
    out, err = capsys.readouterr()
    schema = json.loads(out)
    request = load_request({"goal_prompt": "films", "config": {"schema": schema}})
    assert request.config.schema_.terms["director"].label == "director"
    assert (
        err == "warning: relation 'writer': domain 'WrittenWork' is not a concept; its subject may be of any"
        " type\n"
    )


def test_a_request_names_an_ontology_relative_to_its_own_folder(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    write(folder, "people.ttl", PEOPLE)
    request_file = write(
        folder,
        "request.json",
        json.dumps(
            {
                "goal_prompt": "people",
                "config": {"schema": {"ontology": "people.ttl", "identity_keys": {"City": ["name"]}}},
            }
        ),
    )
    request = load_request(request_file)
    assert request.config.schema_.subclass_of == {"Scientist": ["Person"]}
    missing = write(
        folder,
        "missing.json",
        json.dumps({"goal_prompt": "x", "config": {"schema": {"ontology": "nowhere.ttl"}}}),
    )
    with pytest.raises(
        RequestInvalid, match="config.schema.ontology: .*nowhere.ttl: cannot read the ontology"
    ):
        load_request(missing)


def test_an_edge_pattern_on_a_class_admits_its_subclasses(tmp_path):
    schema = load_ontology(write(tmp_path, "people.ttl", PEOPLE)).schema().compile()
    state = GraphState(schema)
    actor = Actor(schema, Constraints())
    verdicts = actor.apply(
        state,
        [
            read_action(a)
            for a in [
                {"type": "ADD_NODE", "label": "Scientist", "properties": {"name": "Marie Curie"}},
                {
                    "type": "ADD_NODE",
                    "label": "production_company",
                    "properties": {"name": "Radium Institute"},
                },
                {"type": "ADD_NODE", "label": "City", "properties": {"name": "Paris"}},
                {
                    "type": "ADD_EDGE",
                    "label": "works_for",
                    "from": {"name": "Marie Curie"},
                    "to": {"name": "Radium Institute"},
                },
                {
                    "type": "ADD_EDGE",
                    "label": "works_for",
                    "from": {"name": "Radium Institute"},
                    "to": {"name": "Paris"},
                },
            ]
        ],
    )
    assert [v.accepted for v in verdicts] == [True, True, True, True, False]
    assert verdicts[4].code == "EDGE_PATTERN_FORBIDDEN"
    assert (
        schema.subtypes["Person"] == {"Person", "Scientist"}
        and ("Scientist", "production_company") in schema.disjoint
    )


def test_json_and_rdf_exports_write_the_ontologys_own_names_and_iris(tmp_path):
    from igg.export.document import write_json
    from igg.export.rdf import write_ntriples
    from igg.models.document import GraphDocument

    schema = load_ontology(write(tmp_path, "people.ttl", PEOPLE)).schema()
    state = GraphState(schema.compile())
    actor = Actor(state.schema, Constraints())
    verdicts = actor.apply(
        state,
        [
            read_action(a)
            for a in [
                {
                    "type": "ADD_NODE",
                    "label": "Person",
                    "properties": {"name": "Ada", "birth_date": ["1815-12-10", "Dec 1815"]},
                },
                {
                    "type": "ADD_NODE",
                    "label": "production_company",
                    "properties": {"name": "Analytical", "employees": 3},
                },
                {
                    "type": "ADD_EDGE",
                    "label": "works_for",
                    "from": {"name": "Ada"},
                    "to": {"name": "Analytical"},
                },
            ]
        ],
    )
    assert all(v.accepted for v in verdicts), verdicts  # a multi-valued datatype relation: a list of strings
    write_json(state, tmp_path / "graph.json", schema=schema)
    doc = json.loads((tmp_path / "graph.json").read_text())
    assert doc["triples"] == [
        ["Ada", "works for", "Analytical"],
        ["Ada", "birth date", "1815-12-10"],
        ["Ada", "birth date", "Dec 1815"],
        ["Analytical", "employees", 3],
    ]
    assert GraphDocument.model_validate(doc).nodes[0].properties["name"] == "Ada"
    write_ntriples(state, tmp_path / "graph.nt")
    graph = rdflib.Graph().parse(tmp_path / "graph.nt", format="nt")
    ex = rdflib.Namespace("http://example.org/people#")
    ada = next(graph.subjects(rdflib.RDF.type, ex.Person))
    assert (ada, ex.worksFor, None) in graph
    assert set(graph.objects(ada, ex.birthDate)) == {
        rdflib.Literal("1815-12-10", datatype=rdflib.XSD.date),
        rdflib.Literal("Dec 1815"),
    }
    assert (ex.Scientist, rdflib.RDFS.subClassOf, ex.Person) in graph


def test_a_workspace_reads_no_ontology_file_a_client_names(tmp_path):
    from igg.errors import WorkspaceError
    from igg.workspace import Workspace

    people = write(tmp_path, "people.ttl", PEOPLE)
    with pytest.raises(WorkspaceError) as refused:
        Workspace().start({"goal_prompt": "people", "config": {"schema": {"ontology": str(people)}}})
    assert refused.value.code == "INVALID_REQUEST"
    assert "this server reads no ontology file a client names" in refused.value.message
    assert load_request(
        {"goal_prompt": "people", "config": {"schema": {"ontology": str(people)}}}
    ).config.schema_
