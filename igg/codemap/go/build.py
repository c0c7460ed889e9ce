"""What ``go build`` reads of a tree: which files belong to the build, and each folder's import path.

**Files in the build** (``excluded``), as ``go list`` decides them by default: files under a ``testdata``
folder or a folder whose name starts with ``_`` or ``.``, and files whose name starts with ``_`` or ``.``, are
no package's; a ``_GOOS``/``_GOARCH``/``_GOOS_GOARCH`` name suffix (``_windows.go``, ``_arm64_test.go``) and a
``//go:build`` line (or the older ``// +build`` lines) before the ``package`` clause are evaluated for this
machine's build context: ``GOOS``/``GOARCH`` from the environment or the machine, ``unix`` for Unix systems,
``gc``, ``cgo`` (``CGO_ENABLED``, else on), the release tags ``go1.1`` .. ``go1.N`` of the Go toolchain on
the ``PATH`` (its ``VERSION`` file; ``RELEASE`` without one), no custom tags. ``ignore`` and any other tag
are false. What is approximated: cgo's default (Go 1.20+ turns it off without a C compiler), and a release
tag newer than the toolchain found.

**Import paths** (``import_paths``): a folder's import path is the ``module`` path of the nearest ``go.mod``
at or above it plus the folder's path below that ``go.mod`` (a tree of several modules: each folder under its
own); a folder under no ``go.mod`` is named by its path from the mapped root (the root itself by its
``package`` clause, as GOPATH-less ``go run`` would call it ``command-line-arguments``). ``go.work`` adds
nothing to naming: every module it uses has its ``go.mod``.
"""

from __future__ import annotations

import os
import platform
import posixpath
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

RELEASE = 23
"""The Go 1.x release whose tags (``go1.1`` .. ``go1.23``) hold when no Go toolchain is on the ``PATH``."""

KNOWN_OS = frozenset(
    "aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 "
    "solaris wasip1 windows zos".split()
)
UNIX_OS = frozenset(
    "aix android darwin dragonfly freebsd hurd illumos ios linux netbsd openbsd solaris".split()
)
KNOWN_ARCH = frozenset(
    "386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 "
    "mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm".split()
)
_MACHINE = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "i386": "386",
    "i686": "386",
    "armv7l": "arm",
    "armv6l": "arm",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "loongarch64": "loong64",
}
_GO_BUILD = re.compile(r"^//go:build\s+(.+?)\s*$")
_PLUS_BUILD = re.compile(r"^//\s*\+build\s+(.+?)\s*$")
_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"/][^\s\"]*)\"?", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Context:
    """The build context files are judged in (see the module doc)."""

    goos: str
    goarch: str
    cgo: bool
    release: int

    def tag(self, name: str) -> bool:
        """Whether build tag ``name`` holds."""
        if name in (self.goos, self.goarch, "gc"):
            return True
        if name == "unix":
            return self.goos in UNIX_OS
        if name == "cgo":
            return self.cgo
        if name == "linux" and self.goos == "android" or name == "darwin" and self.goos == "ios":
            return True
        if name == "solaris" and self.goos == "illumos":
            return True
        m = re.fullmatch(r"go1\.(\d+)", name)
        return m is not None and int(m.group(1)) <= self.release


def _toolchain_release() -> int | None:
    go = shutil.which("go")
    if go is None:
        return None
    root = os.path.dirname(os.path.dirname(os.path.realpath(go)))
    try:
        with open(os.path.join(root, "VERSION"), encoding="utf-8") as f:
            m = re.match(r"go1\.(\d+)", f.read(32))
    except OSError:
        return None
    return int(m.group(1)) if m else None


@cache
def context() -> Context:
    """This machine's build context (read once a process)."""
    goos = os.environ.get("GOOS") or {"win32": "windows", "darwin": "darwin"}.get(
        sys.platform, sys.platform.rstrip("0123456789") or "linux"
    )
    goarch = os.environ.get("GOARCH") or _MACHINE.get(platform.machine().lower(), platform.machine().lower())
    cgo = os.environ.get("CGO_ENABLED", "1") != "0"
    return Context(goos=goos, goarch=goarch, cgo=cgo, release=_toolchain_release() or RELEASE)


def excluded(path: str, text: str, ctx: Context | None = None) -> str | None:
    """Why ``go list`` leaves file ``path`` (relative to the mapped root) out of every package, or None."""
    ctx = ctx or context()
    parts = path.split("/")
    for folder in parts[:-1]:
        if folder == "testdata":
            return "in a testdata folder (no package of the build)"
        if folder.startswith(("_", ".")):
            return f"in folder {folder} (go ignores folders starting with _ or .)"
    base = parts[-1]
    if base.startswith(("_", ".")):
        return "its name starts with _ or . (go ignores it)"
    why = _by_name(base, ctx)
    if why is not None:
        return why
    expression = constraint(text)
    if expression is not None and not evaluate(expression, ctx.tag):
        return f"build constraint //go:build {expression} (GOOS={ctx.goos}, GOARCH={ctx.goarch})"
    return None


def _by_name(base: str, ctx: Context) -> str | None:
    stem = base[:-3] if base.endswith(".go") else base
    stem = stem.removesuffix("_test")
    pieces = stem.split("_")
    if len(pieces) < 2:
        return None
    last, before = pieces[-1], pieces[-2] if len(pieces) > 2 else None
    if last in KNOWN_ARCH:
        if before in KNOWN_OS and len(pieces) > 2 and not ctx.tag(before):
            return f"for GOOS={before} (its name)"
        return None if ctx.tag(last) else f"for GOARCH={last} (its name)"
    if last in KNOWN_OS:
        return None if ctx.tag(last) else f"for GOOS={last} (its name)"
    return None


def constraint(text: str) -> str | None:
    """The file's build constraint (``//go:build``, else its ``// +build`` lines joined as go fix joins them),
    read from the comments before its ``package`` clause; None without one."""
    plus: list[str] = []
    in_block = False
    for raw in text[:16384].removeprefix("\ufeff").splitlines():
        line = raw.strip()
        if in_block:
            if "*/" in line:
                in_block = False
            continue
        if not line:
            continue
        if line.startswith("/*"):
            in_block = "*/" not in line
            continue
        if not line.startswith("//"):
            break
        m = _GO_BUILD.match(line)
        if m:
            return m.group(1)
        m = _PLUS_BUILD.match(line)
        if m:
            terms = m.group(1).split()
            plus.append(" || ".join(_and(t.split(","), len(terms) > 1) for t in terms))
    return " && ".join(f"({p})" if " || " in p and len(plus) > 1 else p for p in plus) if plus else None


def _and(options: list[str], grouped: bool) -> str:
    """One ``// +build`` term (``linux,!cgo``) as a ``//go:build`` conjunction."""
    joined = " && ".join(options)
    return f"({joined})" if grouped and len(options) > 1 else joined


_TOKEN = re.compile(r"\s*(\|\||&&|!|\(|\)|[\w.]+)")


def evaluate(expression: str, tag: Callable[[str], bool]) -> bool:
    """The value of a ``//go:build`` expression (an unreadable one holds, as go vet would flag it)."""
    tokens: list[str] = _TOKEN.findall(expression)
    at = 0

    def peek() -> str | None:
        return tokens[at] if at < len(tokens) else None

    def take() -> str:
        nonlocal at
        at += 1
        return tokens[at - 1]

    def parse_or() -> bool:
        value = parse_and()
        while peek() == "||":
            take()
            value = parse_and() or value
        return value

    def parse_and() -> bool:
        value = parse_not()
        while peek() == "&&":
            take()
            value = parse_not() and value
        return value

    def parse_not() -> bool:
        token = take()
        if token == "!":
            return not parse_not()
        if token == "(":
            value = parse_or()
            if peek() == ")":
                take()
            return value
        return tag(token)

    try:
        return parse_or()
    except IndexError:
        return True


def module_path(text: str) -> str | None:
    """The ``module`` path a ``go.mod`` declares."""
    m = _MODULE.search(_strip_comments(text))
    return m.group(1) if m else None


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def read_mod(text: str) -> dict[str, object]:
    """What linking reads of a ``go.mod`` or ``go.work``: ``module``, ``go``, ``require``, ``replace`` (local
    ones: old path -> folder), ``use`` (go.work)."""
    body = _strip_comments(text)
    out: dict[str, object] = {}
    module = module_path(text)
    if module:
        out["module"] = module
    m = re.search(r"^\s*go\s+(\S+)", body, re.MULTILINE)
    if m:
        out["go"] = m.group(1)
    out["require"] = sorted(set(_directive(body, "require")))
    out["use"] = sorted(set(_directive(body, "use")))
    replace: dict[str, str] = {}
    for entry in _directive(body, "replace", whole=True):
        left, _, right = entry.partition("=>")
        old, new = left.split(), right.split()
        if old and new and new[0].startswith(("./", "../", "/")):
            replace[old[0].strip('"')] = new[0].strip('"')
    out["replace"] = replace
    return out


def _directive(body: str, name: str, whole: bool = False) -> list[str]:
    found: list[str] = []
    for m in re.finditer(rf"^\s*{name}\s*\(\s*\n(.*?)^\s*\)", body, re.MULTILINE | re.DOTALL):
        for line in m.group(1).splitlines():
            if line.strip():
                found.append(line.strip() if whole else line.split()[0].strip('"'))
    for m in re.finditer(rf"^\s*{name}\s+([^(\s][^\n]*)$", body, re.MULTILINE):
        found.append(m.group(1).strip() if whole else m.group(1).split()[0].strip('"'))
    return found


_PACKAGE = re.compile(r"^\s*package\s+(\w+)", re.MULTILINE)


def package_clause(text: str) -> str | None:
    """The name a file's ``package`` clause gives (read without parsing)."""
    m = _PACKAGE.search(re.sub(r"/\*.*?\*/|//[^\n]*", "", text[:65536], flags=re.DOTALL))
    return m.group(1) if m else None


def import_paths(paths: Iterable[str], mods: Mapping[str, str], texts: Mapping[str, str]) -> dict[str, str]:
    """Each ``.go`` file's folder import path (see the module doc): ``paths`` the files, ``mods`` each
    ``go.mod``'s path -> its text, ``texts`` the files' texts (for a root without ``go.mod``)."""
    modules: dict[str, str] = {}
    for mod, text in mods.items():
        declared = module_path(text)
        if declared:
            modules[posixpath.dirname(mod)] = declared
    out: dict[str, str] = {}
    for path in paths:
        folder = posixpath.dirname(path)
        at = folder
        while True:
            if at in modules:
                below = folder[len(at) :].lstrip("/") if at else folder
                out[path] = f"{modules[at]}/{below}" if below else modules[at]
                break
            if not at:
                out[path] = folder or package_clause(texts.get(path, "")) or "main"
                break
            at = posixpath.dirname(at)
    return out
