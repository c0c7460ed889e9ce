"""Code maps' analysers: the language seam (``language``), one package per language (``python``, ``java``,
``typescript``, ``go``), the walk, the facts and their cache, the index and the linker, the SQL and HTTP route
readers. The jobs that drive them for a command are ``igg.mapping``; the code agents are
``igg.agents.code``."""

AGENT_MODES = ("code", "llm", "hybrid")
"""What ``igg map-code --agent`` accepts (here, not in ``igg.mapping.prepare``, so the command line names them
cheaply)."""
