"""UPDATE_NODE and UPDATE_EDGE share one check of what an update leaves behind (``update_problem``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from igg.act.context import CheckContext, Rejection
from igg.models.actions import UpdateEdge, UpdateNode
from igg.models.common import property_key_problem
from igg.models.validtime import TIME_KEYS
from igg.models.verdicts import ErrorCode as C


def choices(values: Iterable[str]) -> str:
    """Values for a message, comma-separated ("(none)" when empty)."""
    return ", ".join(values) or "(none)"


def missing_required(ctx: CheckContext, element_type: str, props: dict[str, Any]) -> list[str]:
    """The required attributes of ``element_type`` that ``props`` lacks or leaves empty."""
    missing: list[str] = []
    for k in ctx.schema.required.get(element_type, ()):
        v = props.get(k)
        if v is None or v == "":
            missing.append(k)
    return missing


def updated_properties(before: dict[str, Any], a: UpdateNode | UpdateEdge) -> dict[str, Any]:
    """An element's properties after the update ``a`` (a new dict)."""
    after = {**before, **a.properties}
    for key in a.remove:
        after.pop(key, None)
    return after


def update_problem(
    ctx: CheckContext, a: UpdateNode | UpdateEdge, *, kind: str, element_type: str, before: dict[str, Any]
) -> Rejection | None:
    """The keys to remove are valid, and the element's properties after the update keep its type's required
    attributes and stay within ``max_properties``. ``kind`` is "node" or "edge"; ``before`` is the element's
    properties now."""
    for key in a.remove:
        problem = None if ctx.planned and key in TIME_KEYS else property_key_problem(key)
        if problem:
            return C.INVALID_PROPERTY, f"remove: {problem}."
    after = updated_properties(before, a)
    missing = missing_required(ctx, element_type, after)
    if missing:
        subject = element_type if kind == "node" else f"edge type {element_type}"
        return (
            C.MISSING_REQUIRED_ATTRIBUTE,
            f"{subject} requires {choices(ctx.schema.required[element_type])}; "
            f"this update would leave {choices(missing)} missing or empty.",
        )
    if len(after) > ctx.limits.max_properties:
        return (
            C.INVALID_PROPERTY,
            f"the {kind} would carry {len(after)} properties; the limit is {ctx.limits.max_properties}.",
        )
    return None


__all__ = ["choices", "missing_required", "update_problem", "updated_properties"]
