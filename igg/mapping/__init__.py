"""The code-map jobs: what drives the analysers of ``igg.codemap`` for a command.

- ``prepare``: walk, parse and link a tree, and the request a map runs (``igg map-code``);
- ``update``: a stored map brought in step with its tree as one planned difference (``--update``);
- ``difference``: that difference, what turns a stored graph into the graph a fresh map builds;
- ``since``: what a change did to the graph (``--since``);
- ``checking``: ``igg check`` and ``igg cycles`` on a tree or a stored map;
- ``depgraph``: the dependency graph the rules read.

They sit with the engine, a layer above the analysers (the language seam, one package per language, walk,
facts, link, cache), which the code agents import too.
"""
