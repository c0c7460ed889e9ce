"""Agents: the protocol, the shared response parser, and the scripted, LLM and code agents."""

from igg.agents.base import (
    Agent,
    AgentCapabilities,
    AgentTurn,
    AnyAgent,
    AsyncAgent,
    Observation,
    TurnLike,
    as_turn,
    capabilities,
)
from igg.record.records import Usage

__all__ = [
    "Agent",
    "AgentCapabilities",
    "AgentTurn",
    "AnyAgent",
    "AsyncAgent",
    "Observation",
    "TurnLike",
    "Usage",
    "as_turn",
    "capabilities",
]
