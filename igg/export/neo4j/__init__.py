"""Exports to a Bolt server (Neo4j, or a Bolt-speaking store such as ArcadeDB or Memgraph).

- ``settings``: where and how to connect (``Neo4jSettings``, ``check_uri``);
- ``bolt``: the connection (``BoltSession``), the plan-and-write export (``export_neo4j``);
- ``schema``: the server's constraints read before anything is written;
- ``diff`` and ``delta``: what changed since the last export of a session, and writing only that;
- ``sync`` and ``follow``: a session kept in step with its export (``igg export --sync``, ``--follow``).

The modules are imported where they are used (the driver costs a command's start-up).
"""
