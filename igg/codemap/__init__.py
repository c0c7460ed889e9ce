"""Code maps: ``prepare`` (walk, parse, link, then the request the code agent runs) and ``update`` (the
incremental re-map of ``igg map-code --update``). The agents and analysers themselves are ``igg.agents.code``."""
