"""The graph state: networkx MultiDiGraph, identity index, node references, mutation journal."""

from igg.graph.state import GraphState, Mutation

__all__ = ["GraphState", "Mutation"]
