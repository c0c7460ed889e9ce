"""How much work one check may do: the bound every caller of ``igg.rules.check`` passes through it.

A check's work is decided by what a client sends (the rules, over MCP or HTTP) as much as by the graph: a
``transitive`` rule between two sets of a few hundred nodes has a chain per pair, each as long as the graph is
deep (a 320-node graph once gave 3,600 violations of 201 hops, 870 MB). So a check stops, as a QUERY does,
once it has reported ``violations`` violations, ``hops`` edges along their paths in all, or visited ``visits``
nodes and edges in its searches; the report then says ``truncated`` and its counts are lower bounds.

``CheckBounds()`` holds the bounds of a server's check (``MAX_VIOLATIONS``, ``MAX_HOPS``, ``MAX_VISITS``);
``CheckBounds.for_command_line()`` the wider ones of ``igg check`` on a repository (a person's own input,
still finite, so a CI job cannot be made to run out of memory by a rule file in a pull request).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_VIOLATIONS = 1_000
"""Most violations one check reports (over MCP or HTTP)."""
MAX_HOPS = 5_000
"""Most edges the violations of one check show in their paths, together (each costs ~10 us to build and
answer: ~50 ms)."""
MAX_VISITS = 100_000
"""Most units of search one check spends: a node tested against a selector, an edge scanned, a node or edge of
a chain search, an adjacency built (each ~1 us: ~0.1 s of CPU)."""
COMMAND_LINE_SCALE = 100
"""``igg check`` on a repository allows this many times the server's bounds."""


class BoundReached(Exception):
    """Raised inside a check when a bound is reached; ``igg.rules.check.check`` stops there."""


@dataclass(kw_only=True)
class CheckBounds:
    """The bounds of one check and what it has spent; ``truncated`` once one was reached."""

    violations: int = MAX_VIOLATIONS
    hops: int = MAX_HOPS
    visits: int = MAX_VISITS
    truncated: bool = False
    """The check stopped at a bound: violations were left out, and the counts are lower bounds."""

    @classmethod
    def for_command_line(cls) -> CheckBounds:
        """The wider bounds of ``igg check`` run by a person on a repository."""
        return cls(
            violations=MAX_VIOLATIONS * COMMAND_LINE_SCALE,
            hops=MAX_HOPS * COMMAND_LINE_SCALE,
            visits=MAX_VISITS * COMMAND_LINE_SCALE,
        )

    def visit(self, n: int = 1) -> None:
        """Spend ``n`` visits; ``BoundReached`` when none are left."""
        self.visits -= n
        if self.visits < 0:
            self.truncated = True
            raise BoundReached

    def admit(self, hops: int) -> None:
        """Count one more violation of ``hops`` edges before it is made; ``BoundReached`` (and ``truncated``)
        when it would pass the violations or hops bound."""
        if self.violations <= 0 or hops > self.hops:
            self.truncated = True
            raise BoundReached
        self.violations -= 1
        self.hops -= hops
