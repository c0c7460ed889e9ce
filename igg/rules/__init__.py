"""Dependency rules over a typed graph: the rules engine behind ``igg check`` and ``igg cycles``.

* ``depgraph``: the graph the rules read (nodes with dotted names and files, edges with their source lines);
* ``select``: which nodes a selector picks;
* ``load``: the rules file (``igg.toml`` or ``[tool.igg]``), refused with the rule and field at fault;
* ``chains``: direct edges and shortest import chains between two sets of nodes;
* ``cycles``: strongly connected components at a level and the edges whose removal breaks each;
* ``check``: each rule kind judged, into ``report``'s violations;
* ``sarif`` and ``github``: the report as code scanning and workflow annotations read it.
"""
