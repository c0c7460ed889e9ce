"""Ontologies in: Text2KGBench JSON, OWL/RDFS and SHACL read into one ``Ontology``, turned into an IGG schema
(``Ontology.schema``), and back out as SHACL shapes (``igg.ontology.shapes``)."""

from igg.ontology.model import Ontology, OntologyClass, OntologyError, Relation, safe_name
from igg.ontology.read import load_ontology

__all__ = ["Ontology", "OntologyClass", "OntologyError", "Relation", "load_ontology", "safe_name"]
