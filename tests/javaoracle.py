"""The compiler as an oracle for Java maps: ``javac`` compiles a tree, ``javap -c -p -s`` shows what it made.

From the class files: the named types (nested ones as ``Outer.Inner``, local classes as ``Outer.Local``;
anonymous classes, and what they hold, belong to the type that encloses them), their in-tree supertypes
(EXTENDS/IMPLEMENTS, as IGG labels them), and the class-level calls: every ``invoke*`` instruction
(constructors included) from a type's code to a method of another in-tree type, the target being the in-tree
type that declares the method (javac records the receiver's static type; the declaration is found up its
in-tree supertypes, as IGG resolves it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HEADER = re.compile(
    r"^(?:[\w ]*?)\b(class|interface)\s+([\w.$]+)(?:<.*?>)?"
    r"(?:\s+extends\s+(.+?))?(?:\s+implements\s+(.+?))?\s*\{$"
)
_METHOD = re.compile(r"^  (?:[\w.<>$\[\], ?]+ )?([\w.$<>\"]+)\((.*)\)(?: throws [\w.$, ]+)?;$")
_DESCRIPTOR = re.compile(r"^    descriptor: (\(.*)$")
_INVOKE = re.compile(
    r"invoke(?:virtual|special|static|interface)\s+#\d+(?:,\s*\d+)?\s+//\s+(?:Interface)?Method\s+"
    r"(?:([\w/$]+)\.)?(\"<init>\"|[\w$]+):(\([^)]*\))"
)
_ANONYMOUS = re.compile(r"\$\d+(?=\$|$)")
"""An anonymous class's segment of a binary name (``Outer$1``); a local class's is ``$1Local``."""
_LOCAL = re.compile(r"\$\d+(?=[A-Za-z_])")


def javac() -> str | None:
    return shutil.which("javac")


def javac_missing() -> bool:
    """No javac, where no one asked for every component (``scripts/test`` as root on Debian asks: it installs
    a JDK there, and a missing one then fails the tests instead of skipping them)."""
    import os

    return javac() is None and not os.environ.get("IGG_REQUIRE_COMPONENTS")


def _split_types(text: str | None) -> list[str]:
    if not text:
        return []
    out, depth, current = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        out.append(current.strip())
    return out


def _erase(signature: str) -> str:
    """A supertype as javap prints it, without its type arguments, as a binary name with slashes:
    ``java.util.Map$Entry<K, V>`` -> ``java/util/Map$Entry``; a member type of a generic type is printed
    after its outer type's arguments (``a.Outer<K, V>.Inner<T>``) and is ``a/Outer$Inner``."""
    out, depth, closed = "", 0, False
    for ch in signature:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            closed = depth == 0
        elif depth == 0:
            out += "$" if ch == "." and closed else ch
            closed = False
    return out.strip().replace(".", "/")


def _named(binary: str) -> str:
    """``org/x/Outer$Inner$1`` -> ``org.x.Outer.Inner`` (an anonymous class, and whatever it holds: its
    encloser); a local class ``Outer$1Local`` -> ``Outer.Local``, as IGG names it."""
    name = binary.replace("/", ".")
    anonymous = _ANONYMOUS.search(name)
    if anonymous is not None:
        name = name[: anonymous.start()]
    return _LOCAL.sub("$", name).replace("$", ".")


@dataclass
class JavaTruth:
    types: dict[str, str] = field(default_factory=dict)
    """Named type -> class or interface."""
    supertypes: set[tuple[str, str, str]] = field(default_factory=set)
    """(EXTENDS|IMPLEMENTS, type, supertype), both in the tree."""
    calls: set[tuple[str, str]] = field(default_factory=set)
    """(caller type, declaring type of the callee), both in the tree, caller != callee."""
    methods: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    """Binary type name -> (method name, descriptor) it declares."""


def compile_and_read(root: Path, out: Path, stubs: Path | None = None) -> JavaTruth:
    """Compile every ``.java`` under ``root`` into ``out`` and read the class files back with javap.

    ``stubs``: a folder of stand-in sources for the tree's outside dependencies (annotations, a library's
    few types); they are compiled apart, onto the class path only, so they are not part of the tree."""
    sources = sorted(str(p) for p in root.rglob("*.java"))
    classpath: list[str] = []
    if stubs is not None:
        stub_out = out.parent / (out.name + "-stubs")
        subprocess.run(
            ["javac", "-nowarn", "-d", str(stub_out), *sorted(str(p) for p in stubs.rglob("*.java"))],
            check=True,
            capture_output=True,
            text=True,
        )
        classpath = ["-cp", str(stub_out)]
    done = subprocess.run(
        ["javac", "-nowarn", *classpath, "-d", str(out), *sources], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"javac failed on {root}:\n{done.stderr[-4000:]}")
    classes = sorted(out.rglob("*.class"))
    text = subprocess.run(
        ["javap", "-c", "-p", "-s", *map(str, classes)], check=True, capture_output=True, text=True
    ).stdout
    verbose = subprocess.run(
        ["javap", "-p", "-v", *map(str, classes)], check=True, capture_output=True, text=True
    ).stdout
    return _read(text, _bridges(verbose, out))


_CLASSFILE = re.compile(r"^Classfile (.+)\.class$")
_NAME = re.compile(r"([\w$]+)\(")


def _bridges(verbose: str, out: Path) -> set[tuple[str, str, str]]:
    """(binary type, method, descriptor) of javac's bridge methods (``ACC_BRIDGE``, from ``javap -v``):
    a generic override's erased twin, or a public class's copy of a public method it inherits from a
    package-private class. No source declares them; a call of one is a call of the method it stands for."""
    found: set[tuple[str, str, str]] = set()
    current, declared, descriptor = "", "", ""
    for line in verbose.splitlines():
        c = _CLASSFILE.match(line)
        if c:
            current = Path(c.group(1)).relative_to(out.resolve()).as_posix()
        elif line.startswith("    descriptor: ("):
            descriptor = line.split(": ", 1)[1].strip()
        elif line.startswith("    flags: ") and "ACC_BRIDGE" in line:
            name = _NAME.search(declared)
            if name:
                found.add((current, name.group(1), descriptor))
        elif line.startswith("  ") and not line.startswith("   "):
            declared = line
    return found


def _read(
    text: str, bridges: set[tuple[str, str, str]] | frozenset[tuple[str, str, str]] = frozenset()
) -> JavaTruth:
    truth, parents, raw_calls, switch_maps = _parse(text, bridges)
    in_tree = set(truth.methods)
    for binary, sups in parents.items():
        if _ANONYMOUS.search(binary):
            continue
        for label, sup in sups:
            if sup in in_tree:
                truth.supertypes.add((label, _named(binary), _named(sup)))

    def add(caller: str, owner: str, name: str, descriptor: str) -> None:
        source, target = _named(caller), _named(_declaring(truth, parents, owner, name, descriptor))
        if source != target:
            truth.calls.add((source, target))

    # javac's synthetic members stand between a call and its target: an ``access$NNN`` accessor (a nested
    # class calling a protected member its outer class inherits from another package) is the call it
    # makes, from the accessor's caller; a ``$SwitchMap$`` class (``Outer$1``, filled from the enum's
    # values() and ordinal() in its static initialiser) is no source's code: the switch itself calls ordinal()
    accessors: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for caller, method, owner, name, descriptor in raw_calls:
        if method is not None and method.startswith("access$"):
            accessors.setdefault((caller, method), []).append((owner, name, descriptor))
    for caller, method, owner, name, descriptor in raw_calls:
        if (method is not None and method.startswith("access$")) or caller in switch_maps:
            continue
        for target in accessors.get((owner, name), [(owner, name, descriptor)]):
            if target[0] in in_tree:
                add(caller, *target)
    return truth


def _declaring(
    truth: JavaTruth, parents: dict[str, list[tuple[str, str]]], owner: str, name: str, descriptor: str
) -> str:
    """The type of the tree declaring the method a call of ``owner.name descriptor`` reaches: ``owner`` or
    its nearest supertype declaring it (a constructor: ``owner``'s own only), else ``owner``."""
    in_tree = truth.methods
    queue, seen = [owner], set()
    while queue:
        t = queue.pop(0)
        if t in seen or t not in in_tree:
            continue
        seen.add(t)
        if (name, descriptor) in truth.methods[t]:
            return t
        if name == "<init>":
            break
        queue.extend(s for _, s in parents.get(t, ()))
    return owner


def _parse(
    text: str, bridges: set[tuple[str, str, str]] | frozenset[tuple[str, str, str]]
) -> tuple[
    JavaTruth, dict[str, list[tuple[str, str]]], list[tuple[str, str | None, str, str, str]], set[str]
]:
    """javap's listing read line by line: the types and the methods they declare (in the truth), each type's
    supertypes, the calls as (caller type, method, owner, name, descriptor), the classes of ``$SwitchMap$``
    fields."""
    truth = JavaTruth()
    parents: dict[str, list[tuple[str, str]]] = {}
    raw_calls: list[tuple[str, str | None, str, str, str]] = []
    switch_maps: set[str] = set()
    current = ""
    method: str | None = None
    for line in text.splitlines():
        header = _HEADER.match(line.strip()) if not line.startswith(" ") else None
        if header:
            kind, name = header.group(1), header.group(2)
            current = name.replace(".", "/")
            truth.methods.setdefault(current, set())
            if not _ANONYMOUS.search(name):
                truth.types[_named(name)] = kind
            parents[current] = [("EXTENDS", _erase(t)) for t in _split_types(header.group(3))] + [
                ("IMPLEMENTS", _erase(t)) for t in _split_types(header.group(4))
            ]
            continue
        if (
            line.startswith("  ") and line[2] != " " and "$SwitchMap$" in line and "(" not in line
        ):  # its field
            switch_maps.add(current)
            continue
        if line == "  static {};":
            method = "<clinit>"
            continue
        m = _METHOD.match(line)
        if m:
            name = m.group(1)
            method = "<init>" if name.replace(".", "/") == current else name
            continue
        d = _DESCRIPTOR.match(line)
        if d and method is not None:
            descriptor = d.group(1).split(")")[0] + ")"
            if (current, method, d.group(1).strip()) in bridges:
                method = None  # not declared, and what it calls is the bridged method, not the source's call
            else:
                truth.methods[current].add((method, descriptor))
            continue
        call = _INVOKE.search(line)
        if call and method is not None:
            owner = call.group(1) or current
            raw_calls.append((current, method, owner, call.group(2).strip('"'), call.group(3)))
    return truth, parents, raw_calls, switch_maps


def igg_truth(model: Any) -> JavaTruth:
    """The same three views of IGG's code model (class-level calls: CALLS and INSTANTIATES between
    members lifted to their types, and Class CALLS Class edges)."""
    truth = JavaTruth()
    owner_of: dict[str, str] = {}
    for key, s in model.symbols.items():
        if s.label in ("Class", "Interface", "Enum"):
            truth.types[s.properties["qualified_name"]] = s.label
            owner_of[key] = s.properties["qualified_name"]
        elif s.label == "Method":
            owner_of[key] = s.properties["owner"]
    for f in model.files:
        for r in f.relations:
            if r.label in ("EXTENDS", "IMPLEMENTS"):
                truth.supertypes.add((r.label, owner_of[r.source], owner_of[r.target]))
            elif r.label in ("CALLS", "INSTANTIATES") and r.source in owner_of and r.target in owner_of:
                a, b = owner_of[r.source], owner_of[r.target]
                if a != b:
                    truth.calls.add((a, b))
    return truth


def f1(truth: set[Any], found: set[Any]) -> dict[str, Any]:
    hit = len(truth & found)
    precision = hit / len(found) if found else 1.0
    recall = hit / len(truth) if truth else 1.0
    score = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(score, 3),
        "missing": sorted(truth - found),
        "extra": sorted(found - truth),
    }
