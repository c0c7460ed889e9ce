"""Grounding: when an LLM maps code, nodes and edges about code symbols the sources lack are rejected.

An extra validation rule (error code ``UNGROUNDED_SYMBOL``), active only in code mode (``igg map-code
--agent llm|hybrid``), added to the act step through ``Actor(extra_rules=grounding.rules())``:

- ADD_NODE of a code type must name something the sources have: a Class/Interface/Enum by name (simple
  or ``Outer.Inner``, and its package when given), a Method/Function by name (and owner when given), a
  Module by path or dotted name, a Package that is declared or imported, a DatabaseTable that occurs in
  the sources' text (an ORM annotation counts, not only SQL the static pass recognised);
- ADD_EDGE of CALLS/INSTANTIATES/READS_FROM/WRITES_TO/EXTENDS/IMPLEMENTS must be supported by the source
  text: the target's name occurs in the file that declares the source symbol;
- once the LLM proposes (``quotes_required``: from the start with ``--agent llm``, after the static pass with
  ``hybrid``), such an edge must also quote the source line it relies on (``"evidence": ["line text"]``): a
  quote that is not in that file (whitespace runs collapsed) is ``UNGROUNDED_EVIDENCE``, no quote
  ``MISSING_EVIDENCE``. The act step keeps the located quote (file, line, column) in the edge's provenance.

Node types outside the code schema (a user's own additions) are not checked. The static agent's own
proposals pass by construction.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from igg.act.context import CheckContext, Ends, NewNode, Rejection
from igg.act.evidence import normalize
from igg.act.rules import Rule
from igg.codemap.link import CodeModel
from igg.codemap.sources import SourceFile
from igg.models.actions import AddEdge, AddNode
from igg.models.verdicts import ErrorCode

_TYPES = ("Class", "Interface", "Enum")
_TEXT_EDGES = frozenset({"CALLS", "INSTANTIATES", "READS_FROM", "WRITES_TO", "EXTENDS", "IMPLEMENTS"})


class Grounding:
    """What the sources contain, and the rules that check LLM proposals against it."""

    def __init__(self, model: CodeModel, sources: Sequence[SourceFile]) -> None:
        self.texts = {s.path: s.text for s in sources}
        self._lower = {p: t.lower() for p, t in self.texts.items()}
        self.types: dict[str, list[dict[str, Any]]] = {}
        self.members: dict[str, list[dict[str, Any]]] = {}
        self.modules: set[str] = set()
        self.packages: set[str] = set()
        for s in model.symbols.values():
            p = s.properties
            if s.label in _TYPES:
                for name in {p["name"], p["name"].rpartition(".")[2], p["qualified_name"]}:
                    self.types.setdefault(name, []).append(p)
            elif s.label in ("Method", "Function"):
                self.members.setdefault(p["name"], []).append(p)
            elif s.label == "Module":
                self.modules.update((p["path"], p["name"]))
            elif s.label == "Package":
                self.packages.add(p["name"])
        self.code_types = frozenset({*_TYPES, "Method", "Function", "Module", "Package", "DatabaseTable"})
        self.quotes_required = False
        """LLM edges must quote their source line (set by the agent once the LLM proposes)."""
        self._normal: dict[str, str] = {}

    def rules(self) -> dict[type, tuple[Rule[Any, Any], ...]]:
        """Extra rules for ``Actor(extra_rules=...)``."""
        return {AddNode: (self.node_grounded,), AddEdge: (self.edge_grounded,)}

    # ---- nodes ---------------------------------------------------------------------------------------
    def node_grounded(self, ctx: CheckContext, a: AddNode, new: NewNode) -> Rejection | None:
        if a.label not in self.code_types:
            return None
        why = self._node_problem(a.label, a.properties)
        return None if why is None else (ErrorCode.UNGROUNDED_SYMBOL, why)

    def _node_problem(self, label: str, props: dict[str, Any]) -> str | None:
        name = props.get("name")
        name = name if isinstance(name, str) else ""
        if label in _TYPES:
            qualified = props.get("qualified_name")
            key = qualified if isinstance(qualified, str) else name
            found = self.types.get(key, []) or self.types.get(name, [])
            package = props.get("package")
            if isinstance(package, str) and package:
                found = [p for p in found if p["package"] == package]
            if found:
                return None
            where = (
                f" in package {package!r}"
                if isinstance(package, str) and package and not key.startswith(package + ".")
                else ""
            )
            return self._missing(
                f"{label} {key!r}{where}", "no class, interface or enum of that name", key, self.types
            )
        if label in ("Method", "Function"):
            short = name.rpartition(".")[2].split("(")[0]
            found = self.members.get(short, [])
            owner = props.get("owner")
            if isinstance(owner, str) and owner and found:
                found = [
                    p
                    for p in found
                    if p.get("owner") in (owner, None)
                    or (p.get("owner") or "").rpartition(".")[2] == owner.rpartition(".")[2]
                ]
            if found:
                return None
            whose = f" of {owner!r}" if isinstance(owner, str) and owner else ""
            return self._missing(
                f"{label} {short!r}{whose}", "no method or function of that name", short, self.members
            )
        if label == "Module":
            if props.get("path") in self.modules or name in self.modules:
                return None
            return self._missing(
                f"Module {props.get('path') or name!r}",
                "no such file or module",
                str(props.get("path") or name),
                dict.fromkeys(self.modules),
            )
        if label == "Package":
            if name in self.packages:
                return None
            return self._missing(
                f"Package {name!r}", "no file declares or imports it", name, dict.fromkeys(self.packages)
            )
        table = re.sub(r"[`\"\[\]]", "", name).lower()
        if table and any(re.search(rf"\b{re.escape(table)}\b", t) for t in self._lower.values()):
            return None
        return (
            f"DatabaseTable {name!r} does not occur in the sources; only tables the code uses can be mapped."
        )

    def _missing(self, what: str, reason: str, probe: str, known: dict[str, Any]) -> str:
        close = difflib.get_close_matches(probe, list(known), n=3, cutoff=0.6)
        hint = f" Close names in the sources: {', '.join(close)}." if close else ""
        return (
            f"{what} does not exist in the {len(self.texts)} source files mapped ({reason}).{hint} "
            "Only propose symbols that appear in the sources."
        )

    # ---- edges ---------------------------------------------------------------------------------------
    def edge_grounded(self, ctx: CheckContext, a: AddEdge, ends: Ends) -> Rejection | None:
        if a.label not in _TEXT_EDGES:
            return None
        state = ctx.state
        source = state.node_properties(ends.source)
        target = state.node_properties(ends.target)
        files = self._files_of(state.node_type(ends.source), source)
        if not files:
            return None  # a node the sources do not place in a file (e.g. from seed data): nothing to check
        name = str(target.get("name", "")).rpartition(".")[2].split("(")[0]
        if not name:
            return None
        pattern = re.compile(rf"\b{re.escape(name.lower())}\b")
        if any(pattern.search(self._lower.get(f, "")) for f in files):
            return self._quoted(a, files) if self.quotes_required else None
        return (
            ErrorCode.UNGROUNDED_SYMBOL,
            (
                f"{a.label} from {state.describe(ends.source)} to {state.describe(ends.target)} is not"
                f" supported by the sources: {name!r} does not occur in {', '.join(sorted(files))}. Only"
                " propose relations the code shows."
            ),
        )

    def _quoted(self, a: AddEdge, files: set[str]) -> Rejection | None:
        """An LLM edge quotes a line of the source symbol's file."""
        shown = ", ".join(sorted(files))
        quotes = [q for q in a.evidence if isinstance(q, str)]
        if not quotes and not a.evidence:
            return (
                ErrorCode.MISSING_EVIDENCE,
                f"{a.label} edges proposed over code must quote the source line they "
                f'rely on: add "evidence": ["<the line of {shown} that makes the {a.label.lower()}>"].',
            )
        for q in quotes:
            wanted = normalize(q)
            if wanted and any(wanted in self._normalized(f) for f in files):
                return None
        if not quotes:
            return None  # spans point into the context; the act step checks them
        return (
            ErrorCode.UNGROUNDED_EVIDENCE,
            (
                f"the evidence of this {a.label} edge is not a line of {shown} (compared "
                "with whitespace runs collapsed); quote the statement that makes it, verbatim."
            ),
        )

    def _normalized(self, path: str) -> str:
        text = self._normal.get(path)
        if text is None:
            text = self._normal[path] = normalize(self.texts.get(path, ""))
        return text

    def _files_of(self, label: str, props: dict[str, Any]) -> set[str]:
        if isinstance(props.get("file"), str) and props["file"] in self.texts:
            return {props["file"]}
        name = str(props.get("name", ""))
        if label in _TYPES:
            return {p["file"] for p in self.types.get(name, [])}
        if label in ("Method", "Function"):
            short = name.rpartition(".")[2].split("(")[0]
            return {p["file"] for p in self.members.get(short, [])}
        return set()
