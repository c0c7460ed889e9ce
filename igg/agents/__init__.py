"""Agents: the protocol, the shared response parser, and the scripted, LLM and code agents."""

from igg.agents.base import Agent, AgentTurn, AsyncAgent, Observation, Usage, as_turn

__all__ = ["Agent", "AgentTurn", "AsyncAgent", "Observation", "Usage", "as_turn"]
