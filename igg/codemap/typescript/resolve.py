"""Module resolution as the TypeScript compiler does it (``moduleResolution`` node10, node16/nodenext,
bundler), over the files of the mapped tree and the configuration files among them.

A relative specifier (``./x``, ``../y/z``) names a file: as written when it has a TypeScript extension, with
``.js``/``.jsx``/``.mjs``/``.cjs`` mapped to their TypeScript sources (``./x.js`` is ``x.ts``, ``x.tsx`` or
``x.d.ts`` first), else with each extension tried (``.ts``, ``.tsx``, ``.d.ts``, ``.js``, ``.jsx``), else a
folder: its ``package.json``'s ``types``/``typings``/``main``, then its ``index`` file. A bare specifier goes
through the ``tsconfig.json`` that governs the importing file (the nearest one in a folder above it, with
``extends`` followed): ``paths`` patterns (the longest matching prefix; each substitution in order, relative
to ``baseUrl`` or to the configuration that sets them), then ``baseUrl``; then a workspace package of the tree
by its ``package.json`` ``name`` (npm, pnpm and yarn workspaces link them into ``node_modules``): its
``exports`` (conditions ``types``, ``import``, ``require``, ``node``, ``default``, subpath patterns; not under
node10), else its ``types``/``typings``/``main``, else its ``index``. A ``#name`` specifier goes through the
``imports`` of the nearest ``package.json`` (node16, nodenext, bundler). Anything else is an outside package,
named by its first segment (two for ``@scope/name``; ``node:fs`` is ``fs``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx")
"""Tried in this order for a specifier without a file extension."""
_REPLACED = {
    ".js": (".ts", ".tsx", ".d.ts", ".js", ".jsx"),
    ".jsx": (".tsx", ".d.ts", ".jsx"),
    ".mjs": (".mts", ".d.mts", ".mjs"),
    ".cjs": (".cts", ".d.cts", ".cjs"),
}
"""A JavaScript extension written in a specifier -> the files that may stand for it, in order."""
_AS_WRITTEN = (".ts", ".tsx", ".mts", ".cts", ".d.ts", ".d.mts", ".d.cts")
_EXPORTS_MODES = ("node16", "nodenext", "bundler")


DECLARES = {".d.ts": (".ts", ".tsx", ".js", ".jsx"), ".d.mts": (".mts", ".mjs"), ".d.cts": (".cts", ".cjs")}
"""A declaration file's suffix -> the implementations it may declare, in the order the compiler pairs them."""


def implementation(path: str, paths: Mapping[str, T]) -> T | None:
    """The implementation file the declaration file ``path`` declares (None: ``path`` is no declaration file,
    or declares none of the tree)."""
    lower = path.lower()
    for suffix, implementations in DECLARES.items():
        if lower.endswith(suffix):
            stem = path[: -len(suffix)]
            return next((paths[stem + ext] for ext in implementations if stem + ext in paths), None)
    return None


@dataclass(frozen=True, slots=True)
class External:
    """An outside package, by its name (``@scope/name``)."""

    name: str


@dataclass(kw_only=True)
class Options:
    """The compiler options of one tsconfig, with ``extends`` applied: what resolution reads of them."""

    base_url: str | None = None
    """Folder (relative to the mapped root) bare specifiers are also looked up in."""
    paths: list[tuple[str, list[str]]] = field(default_factory=list)
    """``paths`` patterns -> their substitutions, each already relative to the mapped root."""
    conditions: tuple[str, ...] = ()
    """``customConditions``: conditions of package ``exports`` that count before the standard ones."""
    mode: str = "node10"
    """``moduleResolution``: ``node10`` (package ``exports`` ignored), ``node16``/``nodenext`` or
    ``bundler``."""

    @property
    def exports(self) -> bool:
        """Whether package ``exports`` count (node16, nodenext, bundler; not node10)."""
        return self.mode in _EXPORTS_MODES


def package_name(specifier: str) -> str:
    """The outside package a bare specifier names: ``lodash/fp`` -> ``lodash``, ``@a/b/c`` -> ``@a/b``."""
    if specifier.startswith("node:"):
        specifier = specifier[5:]
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") and len(parts) > 1 else parts[0]


def is_relative(specifier: str) -> bool:
    """Whether ``specifier`` is a relative path (``./x``, ``..``): a file of the tree, never an outside
    package."""
    return specifier in (".", "..") or specifier.startswith(("./", "../"))


class Resolver:
    """Resolves specifiers of files of one tree (``files``: every mapped path; ``configs``: path -> the data
    of each ``tsconfig*.json``/``jsconfig*.json`` and ``package.json``)."""

    def __init__(self, files: Iterable[str], configs: Mapping[str, dict[str, Any]]) -> None:
        self.files = set(files)
        self.configs = dict(configs)
        self.packages: dict[str, str] = {}
        """Workspace package name -> its folder."""
        for path, data in sorted(self.configs.items()):
            if posixpath.basename(path) == "package.json" and isinstance(data.get("name"), str):
                self.packages.setdefault(data["name"], posixpath.dirname(path))
        self._options: dict[str, Options] = {}
        self._governing: dict[str, str | None] = {}

    # ---- the public question -------------------------------------------------------------------------
    def resolve(self, specifier: str, importer: str) -> str | External | None:
        """The in-tree file ``specifier`` means in file ``importer``, an outside package, or None (a relative
        path to nothing the tree maps: a stylesheet, a JSON file, a file not there)."""
        if not specifier:
            return None
        if is_relative(specifier):
            return self.file_or_folder(
                posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
            )
        if specifier.startswith("/") or "://" in specifier:
            return None
        options = self.options_for(importer)
        if specifier.startswith("#") and options.exports:
            found = self._subpath_import(specifier, importer, options)
            if found is not None:
                return found
        found = self._through_config(specifier, options)
        if found is not None:
            return found
        name = package_name(specifier)
        if name in self.packages:
            found = self._in_package(
                self.packages[name], specifier[len(name) :].lstrip("/"), options, importer
            )
            if found is not None:
                return found
        return External(name)

    def _through_config(self, specifier: str, options: Options) -> str | None:
        best: tuple[int, str, list[str]] | None = None
        for pattern, targets in options.paths:
            star = pattern.find("*")
            if star < 0:
                if pattern == specifier:
                    best = (len(pattern) + 1, "", targets)
                    break
                continue
            prefix, suffix = pattern[:star], pattern[star + 1 :]
            if (
                specifier.startswith(prefix)
                and specifier.endswith(suffix)
                and len(specifier) >= len(prefix) + len(suffix)
                and (best is None or len(prefix) > best[0])
            ):
                best = (len(prefix), specifier[len(prefix) : len(specifier) - len(suffix)], targets)
        if best is not None:
            for target in best[2]:
                found = self.file_or_folder(posixpath.normpath(target.replace("*", best[1])))
                if found is not None:
                    return found
        if options.base_url is not None:
            return self.file_or_folder(posixpath.normpath(posixpath.join(options.base_url, specifier)))
        return None

    # ---- files and folders ---------------------------------------------------------------------------
    def file_or_folder(self, base: str, *, package: bool = True) -> str | None:
        """The file ``base`` names (extensions tried), else the folder's entry point."""
        if base.startswith("../") or base == "..":
            return None
        found = self.file(base)
        if found is not None:
            return found
        if package:
            data = self.configs.get(posixpath.join(base, "package.json") if base != "." else "package.json")
            if data is not None:
                for key in ("types", "typings", "main"):
                    value = data.get(key)
                    if isinstance(value, str) and value:
                        found = self.file_or_folder(
                            posixpath.normpath(posixpath.join(base, value)), package=False
                        )
                        if found is not None:
                            return found
        return self.file(posixpath.join(base, "index") if base != "." else "index")

    def file(self, base: str) -> str | None:
        lower = base.lower()
        if lower.endswith(_AS_WRITTEN) and base in self.files:
            return base
        for written, stands in _REPLACED.items():
            if lower.endswith(written):
                stem = base[: -len(written)]
                for ext in stands:
                    if stem + ext in self.files:
                        return stem + ext
                return None
        for ext in EXTENSIONS:
            if base + ext in self.files:
                return base + ext
        return None

    def _in_package(self, folder: str, subpath: str, options: Options, importer: str) -> str | None:
        data = self.configs.get(posixpath.join(folder, "package.json") if folder else "package.json", {})
        exports = data.get("exports")
        if options.exports and exports is not None:
            esm = options.mode == "bundler" or self.is_esm(importer)
            conditions = (
                *options.conditions,
                "types",
                "import" if esm else "require",
                "default",
                *(("node",) if options.mode != "bundler" else ()),
            )
            target = match_exports(exports, "./" + subpath if subpath else ".", conditions)
            if target is None:
                return None
            return self.file_or_folder(posixpath.normpath(posixpath.join(folder, target)), package=False)
        if subpath:
            return self.file_or_folder(posixpath.normpath(posixpath.join(folder, subpath)))
        return self.file_or_folder(folder or ".")

    def _subpath_import(self, specifier: str, importer: str, options: Options) -> str | None:
        """``#name`` through the ``imports`` of the nearest ``package.json`` above ``importer`` (node16,
        bundler)."""
        at = posixpath.dirname(importer)
        while True:
            path = posixpath.join(at, "package.json") if at else "package.json"
            data = self.configs.get(path)
            if data is not None:
                imports = data.get("imports")
                if not isinstance(imports, dict):
                    return None
                esm = options.mode == "bundler" or self.is_esm(importer)
                conditions = (
                    *options.conditions,
                    "types",
                    "import" if esm else "require",
                    "default",
                    *(("node",) if options.mode != "bundler" else ()),
                )
                target = match_exports(imports, specifier, conditions)
                if target is None or not target.startswith("./"):
                    return None
                return self.file_or_folder(posixpath.normpath(posixpath.join(at, target)), package=False)
            if not at:
                return None
            at = posixpath.dirname(at)

    def is_esm(self, path: str) -> bool:
        """Whether node16 reads ``path`` as an ES module: ``.mts``/``.mjs``, or ``"type": "module"`` in the
        nearest ``package.json`` above it (``.cts``/``.cjs`` never)."""
        lower = path.lower()
        if lower.endswith((".mts", ".mjs")):
            return True
        if lower.endswith((".cts", ".cjs")):
            return False
        at = posixpath.dirname(path)
        while True:
            data = self.configs.get(posixpath.join(at, "package.json") if at else "package.json")
            if data is not None:
                return data.get("type") == "module"
            if not at:
                return False
            at = posixpath.dirname(at)

    # ---- tsconfig ------------------------------------------------------------------------------------
    def options_for(self, importer: str) -> Options:
        """The options of the tsconfig (or jsconfig) nearest above ``importer``."""
        folder = posixpath.dirname(importer)
        config = self._governing.get(folder, "?")
        if config == "?":
            config = None
            at = folder
            while True:
                for name in ("tsconfig.json", "jsconfig.json"):
                    candidate = posixpath.join(at, name) if at else name
                    if candidate in self.configs:
                        config = candidate
                        break
                if config is not None or not at:
                    break
                at = posixpath.dirname(at)
            self._governing[folder] = config
        if config is None:
            return Options()
        known = self._options.get(config)
        if known is None:
            known = self._options[config] = self._read(config, set())
        return known

    def _read(self, path: str, seen: set[str]) -> Options:
        """``path``'s options over those of the configurations it ``extends`` (those in the tree)."""
        seen.add(path)
        data = self.configs.get(path, {})
        options = Options()
        parents = data.get("extends")
        for parent in [parents] if isinstance(parents, str) else parents if isinstance(parents, list) else []:
            if not isinstance(parent, str) or not is_relative(parent):
                continue  # a package's configuration (@tsconfig/node20): outside the tree
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), parent))
            if not target.endswith(".json"):
                target += ".json"
            if target in self.configs and target not in seen:
                inherited = self._read(target, seen)
                options = Options(
                    base_url=inherited.base_url or options.base_url,
                    paths=inherited.paths or options.paths,
                    mode=inherited.mode,
                    conditions=inherited.conditions or options.conditions,
                )
        here = posixpath.dirname(path)
        compiler = data.get("compilerOptions")
        compiler = compiler if isinstance(compiler, dict) else {}
        if isinstance(compiler.get("baseUrl"), str):
            options.base_url = posixpath.normpath(posixpath.join(here, compiler["baseUrl"]))
        if isinstance(compiler.get("paths"), dict):
            root = options.base_url if isinstance(compiler.get("baseUrl"), str) or options.base_url else here
            options.paths = [
                (pattern, [posixpath.join(root or "", t) for t in targets if isinstance(t, str)])
                for pattern, targets in compiler["paths"].items()
                if isinstance(targets, list)
            ]
        if isinstance(compiler.get("customConditions"), list):
            options.conditions = tuple(c for c in compiler["customConditions"] if isinstance(c, str))
        resolution = str(compiler.get("moduleResolution") or "").lower()
        module = str(compiler.get("module") or "").lower()
        if resolution:
            options.mode = "node10" if resolution in ("node", "node10", "classic") else resolution
        elif module in ("node16", "nodenext"):
            options.mode = module
        elif module == "preserve":
            options.mode = "bundler"
        return options


def match_exports(exports: Any, subpath: str, conditions: tuple[str, ...]) -> str | None:
    """The target package ``exports`` give ``subpath`` (``.`` or ``./x``) under ``conditions``, or None."""
    if (
        isinstance(exports, (str, list))
        or isinstance(exports, dict)
        and not any(k.startswith((".", "#")) for k in exports)
    ):
        return _condition(exports, conditions) if subpath == "." else None
    if not isinstance(exports, dict):
        return None
    if subpath in exports:
        return _condition(exports[subpath], conditions)
    best: tuple[int, str, Any] | None = None
    for key, value in exports.items():
        star = key.find("*")
        if star < 0:
            continue
        prefix, suffix = key[:star], key[star + 1 :]
        if (
            subpath.startswith(prefix)
            and subpath.endswith(suffix)
            and (best is None or len(prefix) > best[0])
        ):
            best = (len(prefix), subpath[len(prefix) : len(subpath) - len(suffix)], value)
    if best is None:
        return None
    target = _condition(best[2], conditions)
    return target.replace("*", best[1]) if target is not None else None


def _condition(value: Any, conditions: tuple[str, ...]) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for item in value:
            found = _condition(item, conditions)
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in conditions:
                found = _condition(inner, conditions)
                if found is not None:
                    return found
    return None
