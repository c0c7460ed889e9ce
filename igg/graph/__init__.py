"""The graph state: networkx MultiDiGraph, identity index, node references, mutation journal."""

from igg.graph.journal import MUTATION, Mutation, read_mutation
from igg.graph.state import GraphState

__all__ = ["MUTATION", "GraphState", "Mutation", "read_mutation"]
