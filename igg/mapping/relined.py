"""The difference an update makes when the changed files' facts moved and nothing else of them changed.

A file whose facts after an edit are its facts before it moved in order (``igg.codemap.relines``) links to
what it linked to before: the link reads no line or column but to order them. A fresh map then makes every
element it made before, with that file's lines and sites moved: its declarations' ``line``, and each edge's
sites in it (``sites``, and ``line`` and ``column`` when its first site is there;
``igg.codemap.model.site_properties``, whose order the move keeps). Its Module node takes the new content
hash and line count. ``relined_difference`` plans that on the elements that hold the files' lines alone
(``igg.mapping.updated.file_elements``, loaded as a ``PartialState``), in the order ``plan_file_difference``
plans a change (``by_id``), so the step is the one the general path keeps. It returns None when an element
holds a line or site of such a file that the facts do not (the map would not be what a fresh map makes): the
general path decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from igg.act.difference import Difference
from igg.codemap.facts import FileFacts
from igg.codemap.relines import Moves
from igg.graph.state import GraphState
from igg.mapping.difference import by_id


def relined_difference(
    state: GraphState, facts: Mapping[str, FileFacts], moved: Mapping[str, Moves]
) -> Difference | None:
    """What makes ``state`` (the elements holding the lines of the files ``facts``, by path, and the ends of
    their edges) the graph a fresh map makes of those files now, when each file's lines and sites moved as
    ``moved`` says (path -> ``igg.codemap.relines.Moves``) and nothing else changed; None when an element
    holds a line or site of them that ``moved`` does not."""
    diff = Difference()
    props = state.node_properties
    for node in sorted(state.nodes, key=by_id):
        p = props(node)
        if state.node_type(node) == "Module" and p.get("path") in facts:
            f = facts[p["path"]]
            change = {k: v for k, v in (("sha", f.sha), ("lines", f.lines)) if p.get(k) != v}
        elif p.get("file") in moved and "line" in p:
            line = moved[p["file"]].lines.get(p["line"]) if type(p["line"]) is int else None
            if line is None:
                return None
            change = {"line": line} if line != p["line"] else {}
        else:
            continue
        if change:
            diff.set_properties.append((node, change, []))
    for edge, data in sorted(state.edge_data(), key=lambda item: by_id(item[0])):
        p = data["properties"]
        if p.get("file") is None:
            continue
        now = _moved_sites(p, moved)
        if now is None:
            return None
        if now != p:
            diff.set_edge_properties.append((edge, now))
    return diff


def _moved_sites(p: dict[str, Any], moved: Mapping[str, Moves]) -> dict[str, Any] | None:
    """An edge's properties ``p`` with its sites in the files ``moved`` moved; None when one is at a site not
    moved or is no site, or they would not be in source order any more."""
    sites: list[tuple[str, int, int]] = []
    for site in p.get("sites") or ():
        try:
            path, line, column = site.rsplit(":", 2)
            at = (path, int(line), int(column))
        except (AttributeError, ValueError):
            return None  # not a site a map writes (``path:line:column``): the general path rewrites it
        if path in moved:
            now = moved[path].sites.get(at[1:])
            if now is None:
                return None
            at = (path, *now)
        sites.append(at)
    if sites != sorted(sites):
        return None
    first: tuple[Any, Any] = (p.get("line"), p.get("column"))
    if p["file"] in moved:
        found = moved[p["file"]].sites.get(first) if all(type(x) is int for x in first) else None
        if found is None or (sites and sites[0] != (p["file"], *found)):
            return None
        first = found
    if first == (p.get("line"), p.get("column")) and not any(path in moved for path, _, _ in sites):
        return p
    out = dict(p)
    out["line"], out["column"] = first
    if "sites" in p:
        out["sites"] = [f"{path}:{line}:{column}" for path, line, column in sites]
    return out


__all__ = ["relined_difference"]
