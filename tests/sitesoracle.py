"""Independent oracles for the sites code-map edges carry (``file``/``line``/``column``, ``sites``).

- Python: the compiler's own parser (``ast``) says where each call, import, class, string and name starts;
  a site must be the start of a node of the kind its edge stands for.
- Java: ``javac`` compiles the tree and ``javap -c -l -p`` shows, per method, each ``invoke*`` instruction and
  the line table mapping bytecode offsets to source lines: a CALLS edge's every site must be a line where its
  source method (or a lambda body javac compiled out of the same class, or a method of an anonymous or local
  class inside it, whose calls IGG counts as the enclosing method's) invokes something.

Nothing here reads IGG's analysers; it reads the graph an IGG map made and the files.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SitedEdge:
    """One edge of a map with its sites, as the graph carries them."""

    type: str
    source: dict[str, Any]
    source_type: str
    target: dict[str, Any]
    target_type: str
    properties: dict[str, Any]

    @property
    def sites(self) -> list[tuple[str, int, int]]:
        out = []
        for s in self.properties["sites"]:
            path, line, column = s.rsplit(":", 2)
            out.append((path, int(line), int(column)))
        return out


def sited_edges(state: Any) -> Iterator[SitedEdge]:
    """Every edge of ``state`` that carries sites."""
    for _, u, v, d in state.edges():
        if "sites" in d["properties"]:
            yield SitedEdge(
                d["type"],
                state.node_properties(u),
                state.node_type(u),
                state.node_properties(v),
                state.node_type(v),
                d["properties"],
            )


def _column(lines: list[bytes], line: int, offset: int) -> int:
    """``ast``'s byte offset in a line as a 1-based character column."""
    return len(lines[line - 1][:offset].decode("utf-8")) + 1


def python_starts(text: str) -> dict[str, set[tuple[int, int]]]:
    """Where the nodes of each kind start in a Python file: ``call``, ``import``, ``class``, ``string``
    (a literal or f-string), ``name`` (a name or attribute), as (line, character column), 1-based."""
    tree = ast.parse(text)
    lines = text.encode("utf-8").split(b"\n")
    found: dict[str, set[tuple[int, int]]] = {k: set() for k in ("call", "import", "class", "string", "name")}
    kinds = {
        ast.Call: "call",
        ast.Import: "import",
        ast.ImportFrom: "import",
        ast.ClassDef: "class",
        ast.Constant: "string",
        ast.JoinedStr: "string",
        ast.Name: "name",
        ast.Attribute: "name",
    }
    for node in ast.walk(tree):
        kind = kinds.get(type(node))
        if kind is not None:
            found[kind].add((node.lineno, _column(lines, node.lineno, node.col_offset)))  # type: ignore[attr-defined]
    return found


PYTHON_KINDS = {
    "CALLS": "call",
    "INSTANTIATES": "call",
    "IMPORTS": "import",
    "IMPORTS_SYMBOL": "import",
    "EXTENDS": "class",
    "IMPLEMENTS": "class",
    "READS_FROM": ("string", "name"),
    "WRITES_TO": ("string", "name"),
}
"""The kind of node each edge type's sites must start in Python."""


def python_mismatches(root: Path, edges: list[SitedEdge]) -> list[str]:
    """Each site of ``edges`` (under ``root``) that does not start a node of its edge's kind."""
    starts: dict[str, dict[str, set[tuple[int, int]]]] = {}
    bad = []
    for e in edges:
        kinds = PYTHON_KINDS[e.type]
        for path, line, column in e.sites:
            if not path.endswith(".py"):
                continue
            if path not in starts:
                starts[path] = python_starts((root / path).read_text(encoding="utf-8"))
            if not any(
                (line, column) in starts[path][k] for k in ((kinds,) if isinstance(kinds, str) else kinds)
            ):
                bad.append(f"{e.type} {path}:{line}:{column} is no {kinds} ({e.target.get('name')})")
    return bad


# ---- Java: javap's line tables -----------------------------------------------------------------------------
_CLASS = re.compile(r"^(?:[\w ]*?)\b(?:class|interface|enum)\s+([\w.$]+)")
_MEMBER = re.compile(r"^  (?:[\w.<>$\[\], ?&]+ )?([\w.$<>\"]+)\((?:.*)\)(?: throws [\w.$, ]+)?;$")
_INSTRUCTION = re.compile(r"^\s+(\d+): (\w+)")
_LINE = re.compile(r"^\s+line (\d+): (\d+)$")


def javap_call_lines(root: Path, out: Path) -> dict[tuple[str, str], set[int]]:
    """Compile every ``.java`` under ``root`` into ``out`` and read back, per (binary class name with slashes,
    method name; constructors ``<init>``, static initialisers ``<clinit>``), the source lines that hold an
    ``invoke*`` instruction (``invokedynamic`` included)."""
    sources = sorted(str(p) for p in root.rglob("*.java"))
    done = subprocess.run(
        ["javac", "-nowarn", "-g:source,lines", "-d", str(out), *sources], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"javac failed on {root}:\n{done.stderr[-4000:]}")
    classes = sorted(str(p) for p in out.rglob("*.class"))
    text = subprocess.run(
        ["javap", "-c", "-l", "-p", *classes], check=True, capture_output=True, text=True
    ).stdout
    return read_javap(text)


def read_javap(text: str) -> dict[tuple[str, str], set[int]]:
    """``javap -c -l -p`` output -> (class, method) -> lines holding an invoke instruction."""
    found: dict[tuple[str, str], set[int]] = {}
    current = method = ""
    invokes: list[int] = []
    table: list[tuple[int, int]] = []  # (start offset, line)

    def flush() -> None:
        if method and invokes and table:
            ordered = sorted(table)
            lines = found.setdefault((current, method), set())
            for offset in invokes:
                lines.add(max((s for s in ordered if s[0] <= offset), default=ordered[0])[1])

    for raw in text.splitlines():
        if not raw.startswith(" "):
            header = _CLASS.match(raw.strip())
            if header:
                flush()
                current, method, invokes, table = header.group(1).replace(".", "/"), "", [], []
            continue
        member = _MEMBER.match(raw) if raw.startswith("  ") and not raw.startswith("   ") else None
        if member or raw == "  static {};":
            flush()
            invokes, table = [], []
            if raw == "  static {};":
                method = "<clinit>"
            else:
                assert member is not None
                name = member.group(1)
                method = "<init>" if name.replace(".", "/") == current else name
            continue
        ins = _INSTRUCTION.match(raw)
        if ins and ins.group(2).startswith("invoke"):
            invokes.append(int(ins.group(1)))
            continue
        line = _LINE.match(raw)
        if line:
            table.append((int(line.group(2)), int(line.group(1))))
    flush()
    return found


def java_binary(state_types: dict[str, dict[str, Any]], owner: str) -> str | None:
    """The binary name (slashes, ``$`` for nesting) of the type whose qualified name is ``owner``."""
    t = state_types.get(owner)
    if t is None:
        return None
    package = t.get("package") or ""
    return (package.replace(".", "/") + "/" if package else "") + t["name"].replace(".", "$")


def allowed_lines(lines: dict[tuple[str, str], set[int]], binary: str, method: str | None) -> set[int]:
    """The call lines of ``method`` of class ``binary`` (every overload of the name), of every lambda body of
    that class, and of every method of its anonymous and local classes (``binary$1``, ``binary$1Local``);
    ``method`` None: of every method of the class."""
    out: set[int] = set()
    inner = re.compile(re.escape(binary) + r"\$\d")
    for (cls, name), found in lines.items():
        if (
            cls == binary
            and (method is None or name == method or name.startswith("lambda$"))
            or inner.match(cls)
        ):
            out |= found
    return out


def java_bytecode_name(props: dict[str, Any]) -> str:
    """The name javac gives an IGG Method node's method."""
    if props.get("constructor") or props["name"] == "<init>":
        return "<init>"
    return str(props["name"])


def java_mismatches(
    edges: list[SitedEdge], types: dict[str, dict[str, Any]], lines: dict[tuple[str, str], set[int]]
) -> tuple[int, list[str]]:
    """(sites checked, each CALLS site that is no call line of its source in the bytecode)."""
    checked, bad = 0, []
    for e in edges:
        if e.type != "CALLS":
            continue
        if e.source_type == "Method":
            binary = java_binary(types, e.source["owner"])
            method: str | None = java_bytecode_name(e.source)
        else:
            binary, method = java_binary(types, e.source.get("qualified_name", "")), None
        if binary is None:
            continue
        allowed = allowed_lines(lines, binary, method)
        for path, line, column in e.sites:
            checked += 1
            if line not in allowed:
                bad.append(
                    f"CALLS {binary}.{method} -> {e.target.get('name')} at {path}:{line}:{column}: "
                    f"bytecode call lines {sorted(allowed)}"
                )
    return checked, bad
