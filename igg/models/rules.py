"""The rules file: architecture contracts a repository keeps (``igg.toml``, or ``[tool.igg]`` in
``pyproject.toml``).

One array ``rules``, each rule a table with a ``name``, a ``kind`` and selectors over the typed graph. The
kinds are a discriminated union on ``kind`` (``RULE_ADAPTER`` reads one), so a mistyped field is refused with
the rule's name and the field, never ignored. ``schemas/rules.schema.json`` is generated from these models.

A *selector* picks nodes of the graph: a string is a name pattern (``shop.api``: the node of that name and
everything under it, as import-linter reads a module; ``shop.api*``: a glob over the dotted name, ``*``
crossing dots), a table narrows by node type, path glob and externality, and a list is the union of its
selectors.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class NodeSelector(_Strict):
    """Nodes picked by type, name and path (every given field must match)."""

    type: str | Annotated[list[str], Listed] | None = None
    """Node type(s) of the graph's schema (``Module``, ``Package``, ``Class``, ``DatabaseTable``, ...)."""
    name: str | None = None
    """A name pattern: a dotted name (the node and everything under it) or a glob (``shop.*.api``)."""
    path: str | None = None
    """A glob over the node's source file (``src/shop/api/*``; a module's ``path``, a type's ``file``)."""
    external: bool | None = None
    """True: only packages outside the mapped tree (third-party, standard library); false: only the tree's."""


MAX_LISTED = 64
"""Most items of any list in a rule (a selector's union, node types, edge types, layers, a layer's siblings,
containers, independent modules): a check's work grows with the product of two such lists."""
Listed = Field(max_length=MAX_LISTED)

Selector = str | NodeSelector | Annotated[list[str | NodeSelector], Listed]
"""A name pattern, a node selector, or a list of them (their union; at most ``MAX_LISTED``)."""

Severity = Literal["error", "warning"]
"""error: a violation fails ``igg check`` (exit 1); warning: it is reported but does not fail."""

EdgeTypes = Annotated[list[str], Listed]


class _Rule(_Strict):
    name: str = Field(min_length=1)
    """The rule's name: unique in the file; violations, SARIF rule ids and ratchet keys carry it."""
    description: str | None = None
    """What the rule protects, shown with its violations and in SARIF's rule metadata."""
    severity: Severity = "error"
    """error (fails the check) or warning (reported only)."""
    edges: EdgeTypes = Field(default_factory=lambda: ["IMPORTS"])
    """The edge types the rule reads (default IMPORTS; e.g. READS_FROM and WRITES_TO for table access)."""
    exclude_type_checking_imports: bool = False
    """Leave out type-only imports (``if TYPE_CHECKING:``, TypeScript ``import type``), as import-linter's
    option of that name does: they are no dependency when the code runs."""


class ForbiddenRule(_Rule):
    """No edge of ``edges`` from a node of ``from`` to a node of ``to`` (with ``transitive``, no path either,
    unless it passes through a node of ``through``)."""

    kind: Literal["forbidden"]
    from_: Selector = Field(alias="from")
    """Where the forbidden dependencies start."""
    to: Selector
    """What they may not reach (a table ``{type = "DatabaseTable", name = "payments"}`` for table access)."""
    through: Selector | None = None
    """With ``transitive``: paths through these nodes are allowed (``api`` may reach ``db`` through
    ``repo``)."""
    transitive: bool = False
    """Also forbid indirect paths (import-linter's default for its forbidden contracts)."""


class LayerGroup(_Strict):
    """One layer made of sibling selectors."""

    siblings: list[str] = Field(min_length=1, max_length=MAX_LISTED)
    """The layer's members (name patterns)."""
    independent: bool = True
    """Whether the siblings may not depend on each other (import-linter's ``a | b``; false is ``a : b``)."""


Layer = str | Annotated[list[str], Listed] | LayerGroup
"""A layer: a name pattern, a list of independent siblings, or a ``LayerGroup``."""


class LayersRule(_Rule):
    """Ordered layers, highest first: no edge goes from a lower layer to a higher one."""

    kind: Literal["layers"]
    layers: list[Layer] = Field(min_length=2, max_length=MAX_LISTED)
    """Highest first. With ``containers``, each name is relative to each container."""
    containers: list[str] = Field(default_factory=list, max_length=MAX_LISTED)
    """Packages inside which the layers repeat (``layers = ["api", "db"]`` in ``shop`` is ``shop.api``,
    ...)."""
    transitive: bool = False
    """Also forbid indirect paths upward (through modules outside the other layers), as import-linter does."""


class IndependenceRule(_Rule):
    """None of ``modules`` may depend on another of them."""

    kind: Literal["independence"]
    modules: list[str | NodeSelector] = Field(min_length=2, max_length=MAX_LISTED)
    """The independent parts (each a selector; a node belongs to the first that picks it)."""
    transitive: bool = False
    """Also forbid indirect paths between them (through modules outside them), as import-linter does."""


class AcyclicRule(_Rule):
    """No cycle among the selected nodes at ``level``."""

    kind: Literal["acyclic"]
    select: Selector = "*"
    """The nodes whose cycles count (at ``level``: modules, packages or types); default all."""
    level: Literal["module", "package", "type", "service"] = "module"
    """module: modules (a member's edge counts for its module); package: a module's package; type: classes,
    interfaces and enums (a method's edge counts for its type); service: the services of a tree (its top-level
    folders, ``igg.codemap.routes``), one requesting another over HTTP (``REQUESTS`` to a route the other
    ``HANDLES``; ``select`` globs their names)."""
    external: bool = False
    """Count packages outside the tree too (never part of a cycle of the tree's own imports)."""


class _RouteRule(_Rule):
    edges: EdgeTypes = Field(default_factory=lambda: ["HANDLES", "REQUESTS"])
    """The edges it reads (HANDLES and REQUESTS; see docs/http-routes.md)."""
    select: Selector = "*"
    """unused_route: the routes judged (``{type = "Route", path = "/api/*"}``); unknown_route: the callers
    judged (``web.*``, ``{path = "web/*"}``). Default all."""


class UnusedRouteRule(_RouteRule):
    """Every route the tree handles is requested by some code of the tree: a route nobody calls is listed (an
    endpoint kept for clients outside the tree is excluded through ``select``, or the rule is a warning)."""

    kind: Literal["unused_route"]


class UnknownRouteRule(_RouteRule):
    """Every request of the tree reaches a route the tree handles: a request of a method and path no route of
    the tree serves (a ``Route`` with ``handled = false``) is listed."""

    kind: Literal["unknown_route"]


class AllowedOnlyRule(_Rule):
    """Edges of ``edges`` from ``from`` may go only to ``to`` (or stay inside ``from``)."""

    kind: Literal["allowed_only"]
    from_: Selector = Field(alias="from")
    """Whose dependencies are restricted."""
    to: Selector
    """What they may depend on (besides nodes ``from`` itself picks)."""


Rule = Annotated[
    ForbiddenRule
    | LayersRule
    | IndependenceRule
    | AcyclicRule
    | AllowedOnlyRule
    | UnusedRouteRule
    | UnknownRouteRule,
    Field(discriminator="kind"),
]
"""One rule, by its ``kind``."""

RULE_KINDS = (
    "forbidden",
    "layers",
    "independence",
    "acyclic",
    "allowed_only",
    "unused_route",
    "unknown_route",
)
"""The kinds, in the order the docs list them."""


class RulesFile(_Strict):
    """``igg.toml``'s content (or ``[tool.igg]``'s in ``pyproject.toml``)."""

    rules: list[Rule] = Field(default_factory=list)
    """The rules, checked in this order."""


RULE_ADAPTER: TypeAdapter[Rule] = TypeAdapter(Rule)
"""Reads one rule table."""

__all__ = [
    "MAX_LISTED",
    "RULE_ADAPTER",
    "RULE_KINDS",
    "AcyclicRule",
    "AllowedOnlyRule",
    "ForbiddenRule",
    "IndependenceRule",
    "Layer",
    "LayerGroup",
    "LayersRule",
    "NodeSelector",
    "Rule",
    "RulesFile",
    "Selector",
    "Severity",
    "UnknownRouteRule",
    "UnusedRouteRule",
]
