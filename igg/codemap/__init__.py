"""Code maps: ``prepare`` (walk, parse, link, then the request the code agent runs) and ``update`` (the
incremental re-map of ``igg map-code --update``). The agents and analysers themselves are ``igg.agents.code``."""

AGENT_MODES = ("code", "llm", "hybrid")
"""What ``igg map-code --agent`` accepts (here, not in ``prepare``, so the command line names them cheaply)."""
