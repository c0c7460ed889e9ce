"""The graph section of the observation: the whole graph when it fits, else the most relevant part.

Form (compact adjacency, ~half the tokens of a markdown table):

    Class (2):
    "AuthController" package="com.app.auth"
    "AuthService" package="com.app.auth"
    Edges:
    "AuthController" -CALLS-> "AuthService", "UserRepository"
    "users" <-READS_FROM- "UserRepository"

Node lines, under their type, start with the first identity value (quoted), then the other identity keys
and properties as ``key=value``. In edge lines a node shows as the shortest reference that picks it out:
``"X"`` for ``{"name": "X"}`` (or ``{"key": "X"}`` when its first identity key is not ``name``) when no other
node shares that value, else ``Type "X"`` (add ``"label": Type``), else ``Type {every identity key}``.
An edge line lists one node's edges of one type: ``-T->`` out of it, ``<-T-`` into it.

When the graph does not fit its share of the budget, nodes are taken in order of relevance: those the
caller focuses on, those mentioned in the current context chunk, the recently touched, the most connected,
then the oldest; each with its edges (at most ``_TARGETS`` per line and a bounded share per node), until
the budget is spent. The section then says how many nodes and edges it shows and leaves out. The work done
is bounded by the budget (and a bounded scan of each shown node's edges), never by the graph size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from igg.graph.state import GraphState
from igg.models.validtime import HISTORY, TIME_KEYS, VALID_FROM, VALID_TO, history
from igg.observe.escape import quote
from igg.observe.tokens import estimate_tokens, line_cost

_ID_CHARS = 200
"""Identity values longer than this are cut in the listing."""
_VALUE_CHARS = 80
"""Other property values longer than this are cut."""
_PROPS = 8
"""Properties shown per node or edge."""
_TARGETS = 12
"""Neighbours listed per edge line when the graph is cut."""
_SCAN = 4000
"""Edge entries read per node and direction when the graph is cut (hubs stay cheap)."""
_MORE_COST = estimate_tokens(" (+999,999,999 more)")
_WORD = re.compile(r"[A-Za-z_$][\w$]*(?:[.:/][A-Za-z_$][\w$]*)*")
_MAX_WORDS = 5000


@dataclass
class _Sheet:
    """Lines under a token allowance."""

    left: int
    lines: list[str] = field(default_factory=list)

    def add(self, line: str) -> bool:
        cost = line_cost(line)
        if cost > self.left:
            return False
        self.lines.append(line)
        self.left -= cost
        return True


def mentioned_nodes(state: GraphState, text: str) -> list[str]:
    """Nodes whose identity value appears as a word (or dotted part) of ``text``, in order of mention."""
    keys = list(state.schema.types_by_identity_key)
    found: dict[str, None] = {}
    seen: set[str] = set()
    for m in _WORD.finditer(text):
        word = m.group()
        parts = [word] if word.isidentifier() else [word, *re.split(r"[.:/]", word)]
        for part in parts:
            if part in seen:
                continue
            seen.add(part)
            for key in keys:
                for n in state.nodes_with(key, part):
                    found[n] = None
        if len(seen) >= _MAX_WORDS:
            break
    return list(found)


def focus_nodes(state: GraphState, focus: Sequence[dict[str, Any]]) -> list[str]:
    """Nodes matched by the focus references (only references naming an identity key are looked up)."""
    keyed = state.schema.types_by_identity_key
    out: dict[str, None] = {}
    for ref in list(focus)[:200]:
        if isinstance(ref, dict) and any(k in keyed for k in ref):
            try:
                out.update(dict.fromkeys(state.find_nodes(ref)[:50]))
            except TypeError:  # an unhashable value in a hand-made reference: it matches nothing
                continue
    return list(out)


_CACHED = 50_000
"""Nodes whose rendered pieces ``_Pieces`` keeps at most (it starts over past that)."""


class _Pieces:
    """Each node's rendered line and references with their token estimates, kept from one observation to the
    next (the same recent and well-connected nodes are shown again and again). A ``GraphWatcher``: a node's
    entries are dropped when it changes or goes. Whether the short reference picks its node out depends on
    the other nodes, so that is looked up at every use."""

    def __init__(self) -> None:
        self.lines: dict[str, tuple[str, int]] = {}
        self.refs: dict[str, tuple[str, int, str, int, str, Any]] = {}
        """node -> (short reference, its tokens, typed reference, its tokens, first identity key, its
        value)."""

    def clear_if_full(self) -> None:
        if len(self.lines) + len(self.refs) > _CACHED:
            self.lines.clear()
            self.refs.clear()

    def node_added(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        self.lines.pop(node_id, None)
        self.refs.pop(node_id, None)

    def node_changed(
        self, node_id: str, node_type: str, before: dict[str, Any], after: dict[str, Any]
    ) -> None:
        self.lines.pop(node_id, None)
        self.refs.pop(node_id, None)

    def node_removed(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        self.lines.pop(node_id, None)
        self.refs.pop(node_id, None)

    def edge_added(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        return None

    def edge_removed(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        return None


def _pieces(state: GraphState) -> _Pieces:
    pieces: _Pieces | None = state.indexes.get("rendered")
    if pieces is None:
        pieces = state.indexes["rendered"] = _Pieces()
        state.watch(pieces)
    pieces.clear_if_full()
    return pieces


class GraphView:
    """Renders the graph section of one observation within a token allowance."""

    def __init__(self, state: GraphState) -> None:
        self.state = state
        self.nodes = state.nodes
        self.succ = state.succ
        self.pred = state.pred
        self._refs: dict[str, tuple[str, int]] = {}
        self._pieces = _pieces(state)

    # ---- pieces ----------------------------------------------------------------------------------------
    def ref(self, node_id: str) -> tuple[str, int]:
        """How a node is named in edge lines, and its estimated tokens (cached per render)."""
        found = self._refs.get(node_id)
        if found is None:
            kept = self._pieces.refs.get(node_id)
            if kept is None:
                short = self._make_ref(node_id, typed=False)
                long_ = self._make_ref(node_id, typed=True, unique=False)
                data = self.nodes[node_id]
                first = self.state.schema.identity_keys[data["type"]][0]
                kept = self._pieces.refs[node_id] = (
                    short,
                    estimate_tokens(short),
                    long_,
                    estimate_tokens(long_),
                    first,
                    data["properties"][first],
                )
            short, short_cost, long_, long_cost, first, value = kept
            found = self._refs[node_id] = (
                (short, short_cost) if len(self.state.nodes_with(first, value)) == 1 else (long_, long_cost)
            )
        return found

    def node_line_cost(self, node_id: str) -> tuple[str, int]:
        """``node_line`` and its ``line_cost`` (kept between renders until the node changes)."""
        kept = self._pieces.lines.get(node_id)
        if kept is None:
            line = self.node_line(node_id)
            kept = self._pieces.lines[node_id] = (line, line_cost(line))
        return kept

    def _make_ref(self, node_id: str, typed: bool, unique: bool | None = None) -> str:
        """The reference text; ``typed``: with the type when the first identity value is not unique
        (``unique`` says whether it is; None: look it up)."""
        data = self.nodes[node_id]
        t = data["type"]
        props = data["properties"]
        keys = self.state.schema.identity_keys[t]
        first = keys[0]
        value = quote(props[first], _ID_CHARS)
        short = value if first == "name" else f'{{"{first}": {value}}}'
        if not typed:
            return short
        if unique is None:
            unique = len(self.state.nodes_with(first, props[first])) == 1
        if unique:
            return short  # its first identity value alone picks it out
        if len(keys) == 1:
            return f"{t} {short}"
        return f"{t} {{" + ", ".join(f'"{k}": {quote(props[k], _ID_CHARS)}' for k in keys) + "}"

    def node_line(self, node_id: str, properties: dict[str, Any] | None = None) -> str:
        """First identity value (quoted), the other identity keys, then the other properties (``properties``:
        these instead of the node's own, e.g. as they were at a time)."""
        data = self.nodes[node_id]
        keys = self.state.schema.identity_keys[data["type"]]
        props = data["properties"] if properties is None else properties
        line = quote(props[keys[0]], _ID_CHARS)
        for k in keys[1:]:
            line += f" {k}={quote(props[k], _ID_CHARS)}"
        return line + _props(props, keys)

    # ---- whole graph -------------------------------------------------------------------------------------
    def render_all(self, allowance: int) -> list[str] | None:
        """Every node and edge, or None when they do not fit ``allowance``."""
        state = self.state
        sheet = _Sheet(allowance)
        if not sheet.add(_summary(state)):
            return None
        for t in state.schema.node_type_list:
            ids = state.nodes_of_type(t)
            if not ids:
                continue
            if not sheet.add(f"{t} ({len(ids):,}):"):
                return None
            for n in ids:
                if not sheet.add(self.node_line(n)):
                    return None
        if state.edge_count:
            if not sheet.add("Edges:"):
                return None
            for n in self.nodes:
                for line in self._edge_lines(n, self.succ[n], "out", None, cap=None)[0]:
                    if not sheet.add(line):
                        return None
        return sheet.lines

    # ---- relevant part ---------------------------------------------------------------------------------
    def render_relevant(self, allowance: int, candidates: Iterable[str]) -> list[str]:
        """The most relevant nodes (in ``candidates`` order, then oldest first) and their edges."""
        state = self.state
        total_nodes, total_edges = state.node_count, state.edge_count
        head = _summary(state)
        types = state.schema.node_type_list
        tail_template = _shown(total_nodes, total_nodes, total_edges, total_edges)
        reserve = line_cost(head) + line_cost(tail_template) + line_cost("Edges:")
        budget = allowance - reserve
        if budget <= 0:
            short = f"{total_nodes:,} nodes, {total_edges:,} edges (not listed: no room in the token budget)."
            return [short] if line_cost(short) <= allowance else []
        per_node = max(40, budget // 12)
        chosen: dict[str, None] = {}
        by_type: dict[str, list[str]] = {}
        edge_lines: list[str] = []
        shown_edges: set[str] = set()
        left = budget
        for n in _unique(chain(candidates, self.nodes)):
            if n in chosen or n not in self.nodes:
                continue
            t = self.nodes[n]["type"]
            line, cost = self.node_line_cost(n)
            if t not in by_type:
                cost += line_cost(f"{t} ({total_nodes:,} of {total_nodes:,}):")
            if cost > left:
                break
            left -= cost
            chosen[n] = None
            by_type.setdefault(t, []).append(line)
            room = min(per_node, left)
            for direction, adjacency in (("out", self.succ[n]), ("in", self.pred[n])):
                if not adjacency:
                    continue  # no edges this way: no lines, nothing spent
                lines, spent = self._edge_lines(n, adjacency, direction, shown_edges, cap=room)
                edge_lines.extend(lines)
                left -= spent
                room -= spent
        lines = [head]
        for t in types:
            if t in by_type:
                lines.append(f"{t} ({len(by_type[t]):,} of {len(state.nodes_of_type(t)):,}):")
                lines.extend(by_type[t])
        if edge_lines:
            lines.append("Edges:")
            lines.extend(edge_lines)
        shown_n, shown_e = len(chosen), len(shown_edges)
        if shown_n < total_nodes or shown_e < total_edges:
            lines.insert(1, _shown(shown_n, total_nodes, shown_e, total_edges))
        return lines

    def _edge_lines(
        self,
        n: str,
        adjacency: dict[str, dict[str, dict[str, Any]]],
        direction: str,
        shown: set[str] | None,
        cap: int | None,
    ) -> tuple[list[str], int]:
        """Edge lines of one node in one direction, grouped by type, within ``cap`` tokens (None: all)."""
        groups, more, partial = _grouped(n, adjacency, direction, shown, cap)
        lines: list[str] = []
        spent = 0
        me, me_cost = self.ref(n)
        for t, items in groups.items():
            arrow, arrow_cost = _arrow(t, direction)
            parts = [me, arrow]
            # every piece starts with ',', a space or a reference's first character and none continues a word,
            # so the pieces' estimates add up to at least the line's: no need to re-read the line
            cost = 1 + me_cost + arrow_cost
            used: list[str] = []
            for eid, other, data in items:
                text, piece_cost = self.ref(other)
                if used:
                    parts.append(", ")
                    piece_cost += 1
                parts.append(text)
                if data["properties"]:
                    extra = _edge_props(data)
                    parts.append(extra)
                    piece_cost += estimate_tokens(extra)
                if cap is not None and spent + cost + piece_cost + _MORE_COST > cap:
                    del parts[len(parts) - (1 + bool(used) + bool(data["properties"])) :]
                    break
                cost += piece_cost
                used.append(eid)
            if not used:
                break
            left_out = len(items) - len(used) + more.get(t, 0)
            if partial and cap is not None:
                parts.append(" (+more)")
                cost += _MORE_COST
            elif left_out:
                parts.append(f" (+{left_out:,} more)")
                cost += _MORE_COST
            lines.append("".join(parts))
            spent += cost
            if shown is not None:
                shown.update(used)
        return lines, spent


def _grouped(
    n: str,
    adjacency: dict[str, dict[str, dict[str, Any]]],
    direction: str,
    shown: set[str] | None,
    cap: int | None,
) -> tuple[dict[str, list[tuple[str, str, dict[str, Any]]]], dict[str, int], bool]:
    """The edges of node ``n`` in one direction not ``shown`` yet, by type, as (edge id, other end, data):
    at most ``_TARGETS`` a type when there is a ``cap`` (how many more: the second item), and whether the
    scan stopped after ``_SCAN`` edges (the third)."""
    groups: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    more: dict[str, int] = {}
    scanned = 0
    partial = False
    for other, keyed in adjacency.items():
        if direction == "in" and other == n:
            continue  # a self-loop is listed once, as an out edge
        for eid, data in keyed.items():
            scanned += 1
            if shown is not None and eid in shown:
                continue
            t = data["type"]
            items = groups.setdefault(t, [])
            if cap is not None and len(items) >= _TARGETS:
                more[t] = more.get(t, 0) + 1
                continue
            items.append((eid, other, data))
        if cap is not None and scanned >= _SCAN:
            partial = True
            break
    return groups, more, partial


_ARROWS: dict[tuple[str, str], tuple[str, int]] = {}


def _arrow(edge_type: str, direction: str) -> tuple[str, int]:
    """`` -T-> `` (out) or `` <-T- `` (in), and its estimated tokens (kept: edge types are few)."""
    found = _ARROWS.get((edge_type, direction))
    if found is None:
        arrow = f" -{edge_type}-> " if direction == "out" else f" <-{edge_type}- "
        if len(_ARROWS) > 10_000:
            _ARROWS.clear()
        found = _ARROWS[(edge_type, direction)] = (arrow, estimate_tokens(arrow))
    return found


def _unique(ids: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for n in ids:
        if n not in seen:
            seen.add(n)
            yield n


def _shown(nodes: int, total_nodes: int, edges: int, total_edges: int) -> str:
    return (
        f"Shown: {nodes:,} of {total_nodes:,} nodes and {edges:,} of {total_edges:,} edges "
        f"({total_nodes - nodes:,} and {total_edges - edges:,} left out), most relevant first: focused, "
        f"mentioned in the chunk, recently touched, most connected. Unlisted nodes can still be referenced."
    )


def _summary(state: GraphState) -> str:
    nodes, edges = state.counts_by_type()
    node_part = ", ".join(f"{t} {c:,}" for t, c in nodes.items() if c)
    edge_part = ", ".join(f"{t} {c:,}" for t, c in edges.items() if c)
    text = f"{state.node_count:,} nodes" + (f" ({node_part})" if node_part else "")
    text += f"; {state.edge_count:,} edges" + (f" ({edge_part})" if edge_part else "") + "."
    return text


def _props(props: dict[str, Any], skip: Sequence[str]) -> str:
    out: list[str] = []
    extra = 0
    if VALID_FROM in props or VALID_TO in props or HISTORY in props:
        out.append(_valid_time(props))
    for k, v in props.items():
        if k in skip or k in TIME_KEYS:
            continue
        if len(out) >= _PROPS:
            extra += 1
            continue
        out.append(f" {k}={quote(v, _VALUE_CHARS)}")
    return "".join(out) + (f" (+{extra} more properties)" if extra else "")


def _valid_time(props: dict[str, Any]) -> str:
    """An element's valid time as the observation shows it: `` valid 2020-06..2022 (ended)`` or `` valid
    2024-01..`` (current), and how many earlier values its one-value properties had."""
    text = ""
    if VALID_FROM in props or VALID_TO in props:
        end = props.get(VALID_TO)
        text = f" valid {props.get(VALID_FROM, '')}..{end or ''}" + (" (ended)" if end else "")
    if HISTORY in props:
        earlier: dict[str, int] = {}
        for entry in history(props):
            earlier[entry["key"]] = earlier.get(entry["key"], 0) + 1
        shown = ", ".join(f"{k} {n - 1}" for k, n in earlier.items() if n > 1)
        if shown:
            text += f" (earlier values: {shown})"
    return text


def _edge_props(data: dict[str, Any]) -> str:
    props = data["properties"]
    if not props:
        return ""
    return " {" + _props(props, ()).strip() + "}"
