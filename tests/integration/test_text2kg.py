"""igg eval text2kg: recorded answers replayed through the act step (or an agent through the loop), the
accepted triples in the benchmark's own format, the metrics and what each check dropped, right or wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyshacl
import pytest
import rdflib

from igg.evaluate.answers import parse_answer, read_answers, relation_key
from igg.evaluate.metrics import triple_key
from igg.evaluate.text2kg import evaluate
from igg.interfaces.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "text2kg"
FILM = {
    "ontology": FIXTURES / "19_film_ontology.json",
    "sentences": FIXTURES / "ont_19_film_test.jsonl",
    "gold": FIXTURES / "ont_19_film_ground_truth.jsonl",
    "answers": FIXTURES / "19_film_Vicuna13B_responses.jsonl",
}

PEOPLE = """
@prefix ex: <http://example.org/p#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:Person a owl:Class ; owl:disjointWith ex:City . ex:Scientist a owl:Class ; rdfs:subClassOf ex:Person .
ex:City a owl:Class .
ex:birthPlace a owl:ObjectProperty ; rdfs:label "birth place" ; rdfs:domain ex:Person ; rdfs:range ex:City .
ex:doctoralAdvisor a owl:ObjectProperty ; rdfs:domain ex:Scientist ; rdfs:range ex:Scientist .
ex:mayor a owl:ObjectProperty ; rdfs:domain ex:City ; rdfs:range ex:Person .
ex:birthDate a owl:DatatypeProperty ; rdfs:domain ex:Person ; rdfs:range xsd:date .
"""
SENTENCE = "Ada Lovelace, born on 10 December 1815 in London, studied under Augustus De Morgan."


def jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_both_published_answer_forms_are_read_and_bad_ones_counted():
    webnlg = parse_answer(
        {
            "id": "1",
            "triples": [
                ["A", "LCCN\\_number", "1"],
                ["A", "director", "[]"],
                ["A", "x"],
                ["", "director", "B"],
                {"sub": "A", "rel": "writer", "obj": "C"},
            ],
        }
    )
    assert webnlg.triples == [("A", "LCCN\\_number", "1"), ("A", "director", "[]"), ("A", "writer", "C")]
    assert webnlg.malformed == 2 and webnlg.invalid is None
    tekgen = parse_answer(
        {
            "id": "2",
            "response": (
                "Sentence.\ndirector(Super Capers, Ray Griggs)\nnot a triple\n"
                "member of political party(Ab Klink, Christian Democratic Appeal)"
            ),
        }
    )
    assert tekgen.triples == [
        ("Super Capers", "director", "Ray Griggs"),
        ("Ab Klink", "member of political party", "Christian Democratic Appeal"),
    ]
    assert parse_answer({"id": "3", "triples": "none"}).invalid == "'triples' is str, not a list"
    assert relation_key("LCCN\\_number") == relation_key("LCCN number") == relation_key("lccn_Number")


def test_an_unreadable_answer_is_an_invalid_turn_and_the_run_goes_on(tmp_path):
    sentences = jsonl(
        tmp_path / "test.jsonl",
        [{"id": "s1", "sent": SENTENCE}, {"id": "s2", "sent": SENTENCE}, {"id": "s3", "sent": SENTENCE}],
    )
    answers = jsonl(
        tmp_path / "answers.jsonl",
        [
            "{not json",
            {"id": "s2", "triples": 7},
            {"id": "s3", "triples": [["Ada Lovelace", "birth_place", "London"]]},
        ],
    )
    onto = tmp_path / "people.ttl"
    onto.write_text(PEOPLE)
    report = evaluate(onto, sentences, tmp_path / "out", responses_path=answers)
    assert report["unreadable_lines"] == 1 and report["counts"]["invalid_turns"] == 1
    assert report["verdicts"]["s2"] == [{"code": "INVALID_TURN", "message": "'triples' is int, not a list"}]
    lines = [json.loads(x) for x in (tmp_path / "out" / "accepted.jsonl").read_text().splitlines()]
    assert lines == [
        {"id": "s1", "triples": []},
        {"id": "s2", "triples": []},
        {"id": "s3", "triples": [["Ada Lovelace", "birth_place", "London"]]},
    ]


def test_replay_types_entities_from_the_ontology_and_refuses_a_type_it_forbids(tmp_path):
    onto = tmp_path / "people.ttl"
    onto.write_text(PEOPLE)
    sentences = jsonl(tmp_path / "test.jsonl", [{"id": "s1", "sent": SENTENCE}])
    answers = jsonl(
        tmp_path / "answers.jsonl",
        [
            {
                "id": "s1",
                "triples": [
                    [
                        "Ada Lovelace",
                        "doctoralAdvisor",
                        "Augustus De Morgan",
                    ],  # both typed Scientist by the domain/range
                    [
                        "Ada Lovelace",
                        "birth place",
                        "London",
                    ],  # a Scientist admitted where a Person is wanted
                    ["Ada Lovelace", "birthDate", "1815-12-10"],  # a datatype relation: a property, typed
                    ["London", "mayor", "Ada Lovelace"],  # London is a City: fine; Ada a Person: fine
                    ["Ada Lovelace", "mayor", "London"],  # Ada as a City: Person and City are disjoint
                    ["Ada Lovelace", "birth place", "Paris"],  # not in the sentence
                    ["Ada Lovelace", "spouse", "William King"],
                ],
            }
        ],
    )  # not in the ontology
    report = evaluate(onto, sentences, tmp_path / "out", responses_path=answers)
    accepted = json.loads((tmp_path / "out" / "accepted.jsonl").read_text())["triples"]
    assert accepted == [
        ["Ada Lovelace", "doctoralAdvisor", "Augustus De Morgan"],
        ["Ada Lovelace", "birth_place", "London"],
        ["Ada Lovelace", "birthDate", "1815-12-10"],
        ["London", "mayor", "Ada Lovelace"],
    ]
    codes = [(v["triple"][2], v["code"]) for v in report["verdicts"]["s1"]]
    assert codes == [
        ("London", "TYPE_CONFLICT"),
        ("Paris", "UNGROUNDED_VALUE"),
        ("William King", "UNKNOWN_EDGE_TYPE"),
    ]
    assert (
        'Scientist "Ada Lovelace" (n1) is a Scientist; mayor wants its from end to be a City, and the schema '
        "makes Scientist and City disjoint" in report["verdicts"]["s1"][0]["message"]
    )


def test_replay_never_adds_or_rewrites_a_triple_and_reports_what_it_dropped(tmp_path, capsys):
    assert (
        main(
            [
                "eval",
                "text2kg",
                "--ontology",
                str(FILM["ontology"]),
                "--sentences",
                str(FILM["sentences"]),
                "--ground-truth",
                str(FILM["gold"]),
                "--responses",
                str(FILM["answers"]),
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert table.startswith("ontology") and "\n19_film " in table and "UNGROUNDED_VALUE" in table
    answers, _ = read_answers(FILM["answers"])
    gold = {
        json.loads(x)["id"]: {triple_key((t["sub"], t["rel"], t["obj"])) for t in json.loads(x)["triples"]}
        for x in FILM["gold"].read_text().splitlines()
    }
    accepted = [json.loads(x) for x in (tmp_path / "accepted.jsonl").read_text().splitlines()]
    assert len(accepted) == 127
    kept = right_raw = right_kept = 0
    for line in accepted:
        own = {triple_key(t) for t in answers[line["id"]].triples}
        assert all(triple_key(t) in own for t in line["triples"]), line  # one of the answer's own, verbatim
        kept += len(line["triples"])
        right_raw += len(own & gold[line["id"]])
        right_kept += len({triple_key(t) for t in line["triples"]} & gold[line["id"]])
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["counts"]["accepted"] == kept and report["counts"]["correct_kept"] == right_kept
    assert right_kept >= 0.9 * right_raw
    assert report["accepted"]["rel_halluc"] == 0 and report["raw"]["rel_halluc"] > 0
    assert report["accepted"]["f1"] >= report["raw"]["f1"]
    assert report["accepted"]["obj_halluc"] < report["raw"]["obj_halluc"] / 3
    dropped = report["dropped"]
    assert dropped["UNKNOWN_EDGE_TYPE"] == {"right": 0, "wrong": 37}
    assert (
        sum(row["right"] + row["wrong"] for row in dropped.values()) + kept <= report["counts"]["triples"] + 1
    )


def test_missing_inputs_exit_2_with_one_line(tmp_path, capsys):
    code = main(
        [
            "eval",
            "text2kg",
            "--ontology",
            str(FILM["ontology"]),
            "--sentences",
            str(tmp_path / "no.jsonl"),
            "--responses",
            str(FILM["answers"]),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "no.jsonl" in err and "Traceback" not in err


def test_the_rdf_export_of_accepted_graphs_conforms_to_the_ontologys_shapes(tmp_path):
    report = evaluate(FILM["ontology"], FILM["sentences"], tmp_path, responses_path=FILM["answers"], rdf=True)
    graph = rdflib.Graph().parse(tmp_path / "accepted.ttl")
    shapes = rdflib.Graph().parse(tmp_path / "shapes.ttl")
    assert report["rdf"]["triples"] == len(graph) > 200
    conforms, _, text = pyshacl.validate(graph, shacl_graph=shapes)
    assert conforms, text
    film = rdflib.URIRef("https://cenguix.github.io/Text2KGBench/ont_19_film/concepts#Film")
    director = rdflib.URIRef("https://cenguix.github.io/Text2KGBench/ont_19_film/relations#director")
    budget = rdflib.URIRef("https://cenguix.github.io/Text2KGBench/ont_19_film/relations#budget")
    a_film = next(graph.subjects(rdflib.RDF.type, film))
    assert graph.value(a_film, budget) is None or graph.value(a_film, budget).datatype == rdflib.XSD.double
    graph.add((a_film, director, a_film))  # a film directed by a film: the shapes say no
    graph.add((a_film, budget, rdflib.Literal("a lot", datatype=rdflib.XSD.double)))
    conforms, _, text = pyshacl.validate(graph, shacl_graph=shapes)
    assert not conforms and "director" in text and "budget" in text


def test_an_agent_extracts_through_the_loop_with_the_imported_schema(tmp_path):
    onto = tmp_path / "people.ttl"
    onto.write_text(PEOPLE)
    sentences = jsonl(
        tmp_path / "test.jsonl",
        [
            {"id": "s1", "sent": SENTENCE},
            {"id": "s2", "sent": "Nothing."},
            {"id": "s3", "sent": "No transcript."},
        ],
    )
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    jsonl(
        transcripts / "s1.jsonl",
        [
            {
                "reasoning": "first",
                "actions": [
                    {
                        "type": "ADD_NODE",
                        "label": "Person",
                        "properties": {"name": "Ada Lovelace", "birthDate": "1815-12-10"},
                    },
                    {"type": "ADD_NODE", "label": "City", "properties": {"name": "London"}},
                    {"type": "ADD_NODE", "label": "City", "properties": {"name": "Paris"}},
                ],
            },
            {
                "reasoning": "then",
                "finished": True,
                "actions": [
                    {
                        "type": "ADD_EDGE",
                        "label": "birth_place",
                        "from": {"name": "Ada Lovelace"},
                        "to": {"name": "London"},
                    },
                    {
                        "type": "ADD_EDGE",
                        "label": "birth_place",
                        "from": {"name": "London"},
                        "to": {"name": "London"},
                    },
                    {  # entities not added yet: typed by the relation's domain and range (Scientist)
                        "type": "ADD_EDGE",
                        "label": "doctoralAdvisor",
                        "from": {"name": "Ada Lovelace"},
                        "to": {"name": "Augustus De Morgan"},
                    },
                ],
            },
        ],
    )
    jsonl(transcripts / "s2.jsonl", [{"reasoning": "nothing here", "finished": True, "actions": []}])
    report = evaluate(onto, sentences, tmp_path / "out", agent=f"script:{transcripts}")
    accepted = [json.loads(x) for x in (tmp_path / "out" / "accepted.jsonl").read_text().splitlines()]
    assert accepted == [
        {
            "id": "s1",
            "triples": [
                ["Ada Lovelace", "birth_place", "London"],
                ["Ada Lovelace", "doctoralAdvisor", "Augustus De Morgan"],
                ["Ada Lovelace", "birthDate", "1815-12-10"],
            ],
        },
        {"id": "s2", "triples": []},
        {"id": "s3", "triples": []},
    ]
    assert (
        report["mode"] == "agent"
        and report["counts"]["triples"] == 4
        and report["counts"]["invalid_turns"] == 1
    )
    # London is a City: as a birth_place's subject it would be a Person, which the ontology makes disjoint
    assert [v["code"] for v in report["verdicts"]["s1"]] == ["TYPE_CONFLICT"]
    assert (
        report["verdicts"]["s3"][0]["code"] == "INVALID_TURN"
        and "s3.jsonl" in report["verdicts"]["s3"][0]["message"]
    )


def test_a_wikidata_tekgen_style_ontology_and_answers_are_read_as_the_scorer_reads_them(tmp_path):
    """Concepts and relations by Wikidata id, a relation label with a trailing space and a class of the same
    label (one warning), answers with underscored relation names or only a response text."""
    onto = tmp_path / "5_military_ontology.json"
    onto.write_text(
        json.dumps(
            {
                "id": "ont_5_military",
                "concepts": [
                    {"qid": "Q5", "label": "human"},
                    {"qid": "Q56019", "label": "military rank"},
                    {"qid": "Q16861376", "label": "military casualty classification"},
                ],
                "relations": [
                    {"pid": "P410", "label": "military rank", "domain": "Q5", "range": "Q56019"},
                    {
                        "pid": "P1347",
                        "label": "military casualty classification ",
                        "domain": "Q5",
                        "range": "Q16861376",
                    },
                ],
            }
        )
    )
    sentence = "Vasily Stepanovich Zavoyko was an admiral of the Russian navy, killed in action in 1874."
    sentences = jsonl(
        tmp_path / "test.jsonl", [{"id": "t1", "sent": sentence}, {"id": "t2", "sent": sentence}]
    )
    answers = jsonl(
        tmp_path / "answers.jsonl",
        [
            {
                "id": "t1",
                "triples": [
                    ["Vasily Stepanovich Zavoyko", "military_rank", "admiral"],
                    ["Vasily Stepanovich Zavoyko", "military_casualty_classification_", "killed in action"],
                    ["Wang Jiaocheng)\ncountry(China", "military_rank", "admiral"],
                ],
            },
            {"id": "t2", "response": "military\\_rank(Vasily Stepanovich Zavoyko, vice-admiral)"},
        ],
    )
    report = evaluate(onto, sentences, tmp_path / "out", responses_path=answers)
    assert report["ontology_warnings"] == [
        (
            "relation 'military rank': another term has this label or name (military_rank); it is imported"
            " under a numbered name"
        ),
        (
            "relation 'military casualty classification ': another term has this label or name "
            "(military_casualty_classification); it is imported under a numbered name"
        ),
    ]
    lines = [json.loads(x) for x in (tmp_path / "out" / "accepted.jsonl").read_text().splitlines()]
    assert lines[0]["triples"] == [
        ["Vasily Stepanovich Zavoyko", "military_rank", "admiral"],
        ["Vasily Stepanovich Zavoyko", "military_casualty_classification_", "killed in action"],
    ]
    assert lines[1]["triples"] == []  # "vice-admiral" is not in the sentence
    assert [v["code"] for v in report["verdicts"]["t2"]] == ["UNGROUNDED_VALUE"]


@pytest.mark.integration  # a fresh interpreter per case
@pytest.mark.parametrize(
    "missing,argv,expected",
    [
        (
            "rdflib",
            ["schema", "import", str(FIXTURES / "ont_19_film.ttl")],
            "needs rdflib: pip install 'igg[rdf]'",
        ),
        (
            "rdflib",
            ["schema", "shacl", str(FIXTURES / "19_film_ontology.json")],
            "needs rdflib: pip install 'igg[rdf]'",
        ),
        (
            "nltk",
            [
                "eval",
                "text2kg",
                "--ontology",
                str(FILM["ontology"]),
                "--sentences",
                str(FILM["sentences"]),
                "--ground-truth",
                str(FILM["gold"]),
                "--responses",
                str(FILM["answers"]),
                "--out",
                "OUT",
            ],
            "need NLTK: pip install 'igg[eval]'",
        ),
    ],
)
def test_a_missing_optional_library_is_one_line_and_exit_2(tmp_path, missing, argv, expected):
    """Without the optional library (made unimportable in a fresh interpreter), the command says what to
    install."""
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    code = (
        f"import sys\nsys.modules[{missing!r}] = None\nfrom igg.interfaces.cli import main\n"
        f"sys.exit(main({argv!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and "Traceback" not in done.stderr and done.stderr.count("\n") <= 3


@pytest.mark.parametrize(
    "text,number",
    [
        ("6603633000.0 (kilometres)", 6603633000.0),
        ('"360"', 360.0),
        ('"~500"', 500.0),
        ("&minus;7", -7.0),
        ('"42 m"', 42.0),
        ("1,200", 1200.0),
        ("$2000000.0", 2000000.0),
        ("5%", 5.0),
        ("2004-01-22", "2004-01-22"),
        ("12 June 1989", "12 June 1989"),
        ("3 minutes 10 seconds", "3 minutes 10 seconds"),
    ],
)
def test_a_numeric_datatype_reads_numbers_as_knowledge_graphs_write_them(text, number):
    from igg.evaluate.replay import typed
    from igg.ontology.model import XSD, Relation

    assert typed(text, Relation(name="length", label="length", datatype=XSD + "double")) == number
    assert typed(text, Relation(name="name", label="name", datatype=XSD + "string")) == text
    assert typed("Yes", Relation(name="open", label="open", datatype=XSD + "boolean")) is True
