"""Typed properties: the schema's optional ``property_types`` enforced on every property an action sets.

``WRONG_PROPERTY_TYPE`` and ``VALUE_NOT_IN_ENUM`` (see ``igg.models.proptypes``) apply to ``ADD_NODE`` and
``ADD_EDGE`` properties by their type, and to ``UPDATE_NODE`` properties by the resolved node's type.
Properties a type does not declare stay free.
"""

from __future__ import annotations

from typing import Any

from igg.act.context import CheckContext, Rejection
from igg.models.actions import AddEdge, AddNode, UpdateEdge, UpdateNode
from igg.models.proptypes import value_problem
from igg.models.verdicts import ErrorCode


def check_typed(ctx: CheckContext, element_type: str, props: dict[str, Any]) -> Rejection | None:
    """The first property of ``props`` that does not fit its declared type, as a rejection."""
    specs = ctx.schema.property_types.get(element_type)
    if not specs or not props:
        return None
    for key, value in props.items():
        spec = specs.get(key)
        if spec is not None and (problem := value_problem(key, value, spec)) is not None:
            return ErrorCode(problem[0]), f"{element_type}: {problem[1]}"
    return None


def properties_typed(ctx: CheckContext, a: AddNode | AddEdge | UpdateEdge) -> Rejection | None:
    """ADD_NODE / ADD_EDGE / UPDATE_EDGE: the properties fit the declared types of ``a.label``."""
    return check_typed(ctx, a.label, a.properties)


def update_properties_typed(ctx: CheckContext, a: UpdateNode, node: str) -> Rejection | None:
    """UPDATE_NODE: the properties set fit the declared types of the node's type."""
    return check_typed(ctx, ctx.state.node_type(node), a.properties)
