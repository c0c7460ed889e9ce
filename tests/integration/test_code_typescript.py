"""TypeScript and JavaScript maps against the TypeScript compiler (5.x) as the oracle (``tests/tsoracle``).

Module IMPORTS are compared edge for edge with what ``ts.resolveModuleName`` resolves for every import the
compiler's pre-processor lists (type-only, dynamic and ``require`` ones included), on trees built here (each
resolution rule: relative paths with extension and index probing, ``.js`` naming a ``.ts``, tsconfig
``paths``/``baseUrl``/``extends``, npm workspaces with ``exports`` or ``main``, ``require``, ``import()``) and
on two real projects copied into ``fixtures/code/typescript`` (ky, superstruct). Types are compared with the
compiler's declarations, CALLS with the checker's resolved signatures (precision; recall is reported).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from igg.codemap.link import CodeModel, link
from igg.codemap.walk import walk
from igg.mapping.prepare import parse_all
from tests.tsoracle import depcruise_edges, f1, missing, module_edges, oracle, package_edges

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "fixtures" / "code" / "typescript"

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _link(root: Path, symlinks: dict[str, str] | None = None) -> tuple[CodeModel, list[str], dict[str, Any]]:
    """IGG's model of the tree, the source files it read, and the compiler's view of them (``symlinks``: the
    ``node_modules`` links a package manager makes for workspace packages, which the compiler follows and the
    map skips)."""
    for link_name, target in (symlinks or {}).items():
        where = root / "node_modules" / link_name
        where.parent.mkdir(parents=True, exist_ok=True)
        where.symlink_to(os.path.relpath(root / target, where.parent))
    walked = walk([root])
    facts, _ = parse_all(walked.files, jobs=1)
    sources = [f.path for f in walked.files if f.language == "typescript" and not f.path.endswith(".json")]
    return link(facts), sources, oracle(root, sources)


def _canonical(path: str, sources: list[str]) -> str:
    """A ``.d.ts`` file merged into its implementation is that implementation's module."""
    pairs = {".d.ts": (".ts", ".tsx", ".js", ".jsx"), ".d.mts": (".mts", ".mjs"), ".d.cts": (".cts", ".cjs")}
    for suffix, implementations in pairs.items():
        if path.endswith(suffix):
            for ext in implementations:
                if path[: -len(suffix)] + ext in sources:
                    return path[: -len(suffix)] + ext
    return path


def _imports(model: CodeModel) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    modules, packages = set(), set()
    for plan in model.files:
        for r in plan.relations:
            if r.label == "IMPORTS" and r.target.startswith("module:"):
                modules.add((r.source.removeprefix("module:"), r.target.removeprefix("module:")))
            elif r.label == "IMPORTS" and r.target.startswith("package:"):
                packages.add((r.source.removeprefix("module:"), r.target.removeprefix("package:")))
    return modules, packages


def _compare_imports(root: Path, symlinks: dict[str, str] | None = None) -> tuple[float, float, float]:
    model, sources, truth = _link(root, symlinks)
    ours, packages = _imports(model)
    expected = {(_canonical(a, sources), _canonical(b, sources)) for a, b in module_edges(truth)}
    expected = {(a, b) for a, b in expected if a != b}
    score = f1(ours, expected)
    print(
        f"{root.name}: module IMPORTS precision {score[0]:.3f} recall {score[1]:.3f} F1 {score[2]:.3f} "
        f"({len(expected)} edges)"
    )
    assert ours == expected
    assert packages == package_edges(truth)
    return score


RELATIVE = {
    "tsconfig.json": '{"compilerOptions": {"allowJs": true, "module": "commonjs", "target": "es2020"}}\n',
    "src/a.ts": "\n".join(
        [
            "import { b } from './b';",
            "import dir from './dir';",
            "import { c } from './c.js';",
            "import type { D } from './d';",
            "import './side';",
            "import * as e from './e';",
            "import old = require('./old');",
            "export * from './reexported';",
            "export { f as g } from './f';",
            "export type T = import('./tt').U;",
            "import data from './data.json';",
            "import styles from './a.css';",
            "import { h } from '../lib/h';",
            "import React from 'react';",
            "import { parse } from '@babel/parser/lib';",
            "import fs from 'node:fs';",
            "export * as spaced from './spaced';",
            "import { client } from './gen/client.gen';",
            "import { vendored } from './vendor/v';",
            (
                "export async function load() { const m = await import('./lazy'); const r = require('./req');"
                " return [m, r]; }"
            ),
            "",
        ]
    ),
    "src/b.ts": "export const b = 1;\n",
    "src/gen/client.gen.ts": (
        "// This file is auto-generated by @hey-api/openapi-ts\nimport { b } from '../b';\nexport const"
        " client = b;\n"
    ),
    "src/vendor/v.ts": "export const vendored = 1;\n",
    "src/spaced.ts": "export const s = 1;\n",
    "src/dir/index.ts": "export default 1;\n",
    "src/c.ts": "export const c = 1;\n",
    "src/c.js": "exports.c = 2;\n",
    "src/d.tsx": "export interface D { x: number }\nexport const el = <div/>;\n",
    "src/side.js": "console.log('side');\n",
    "src/e.d.ts": "export declare function e(): void;\n",
    "src/old.ts": "export = 1;\n",
    "src/reexported.ts": "export class R {}\n",
    "src/f.ts": "export function f() {}\n",
    "src/tt.ts": "export interface U {}\n",
    "src/lazy.ts": "export const lazy = 1;\n",
    "src/req.js": "const again = require('./b'); module.exports = again;\n",
    "src/data.json": "{}\n",
    "lib/h.mts": "export const h = 1;\n",
    "lib/k.mjs": "import { h } from './h.mjs'; export const k = h;\n",
    "lib/j.cts": "import { k } from './k.mjs'; export const j = k;\n",
    "lib/m.cjs": "const j = require('./j.cjs'); module.exports = j;\n",
    "lib/l.d.ts": "export declare const l: number;\n",
    "lib/l.js": "export const l = 1;\n",
    "lib/uses_l.ts": "import { l } from './l';\nimport pkg from './pkg';\nexport const v = l + pkg;\n",
    "lib/pkg/package.json": '{"name": "pkg-folder", "main": "main.js"}\n',
    "lib/pkg/main.ts": "export default 1;\n",
}


def test_relative_imports_of_every_form_are_the_compilers(tmp_path: Path) -> None:
    _compare_imports(_write(tmp_path / "relative", RELATIVE))


PATHS = {
    "tsconfig.base.json": json.dumps(
        {
            "compilerOptions": {
                "baseUrl": ".",
                "moduleResolution": "node10",
                "allowJs": True,
                "paths": {
                    "@lib/*": ["libs/*/src", "libs/*"],
                    "#config": ["config/index.ts"],
                    "@ui": ["libs/ui/src/index.ts"],
                },
            }
        }
    ),
    "apps/web/tsconfig.json": (
        '// the app\n{"extends": "../../tsconfig.base.json", "compilerOptions": {"jsx": "react",},}\n'
    ),
    "apps/web/src/main.ts": "\n".join(
        [
            "import { Button } from '@ui';",
            "import { upper } from '@lib/util/strings';",
            "import { now } from '@lib/time';",
            "import config from '#config';",
            "import { deep } from 'libs/deep/inner';",
            "import { missing } from '@lib/nothing';",
            "import React from 'react';",
            "export const x = [Button, upper, now, config, deep, missing, React];",
            "",
        ]
    ),
    "apps/api/tsconfig.json": json.dumps({"compilerOptions": {"baseUrl": "src", "paths": {"~/*": ["*"]}}}),
    "apps/api/src/server.ts": (
        "import { route } from '~/routes/index';\nimport { db } from 'db';\nexport const s = [route, db];\n"
    ),
    "apps/api/src/routes/index.ts": "export const route = 1;\n",
    "apps/api/src/db.ts": "export const db = 1;\n",
    "libs/ui/src/index.ts": "export const Button = 1;\n",
    "libs/util/src/strings.ts": "export function upper(s: string) { return s.toUpperCase(); }\n",
    "libs/time/index.ts": "export const now = 1;\n",
    "libs/deep/inner.ts": "export const deep = 1;\n",
    "config/index.ts": "export default {};\n",
}


def test_tsconfig_paths_base_url_and_extends_are_the_compilers(tmp_path: Path) -> None:
    _compare_imports(_write(tmp_path / "paths", PATHS))


def _workspaces(resolution: str) -> dict[str, str]:
    custom = {"customConditions": ["@acme/source"]} if resolution != "node10" else {}
    return {
        "package.json": json.dumps({"name": "monorepo", "private": True, "workspaces": ["packages/*"]}),
        "tsconfig.json": json.dumps(
            {
                "compilerOptions": {
                    "moduleResolution": resolution,
                    "module": "esnext",
                    "allowJs": True,
                    **custom,
                }
            }
        ),
        "packages/core/.gitignore": (
            "dist/\n**/package.json\n"
        ),  # a tracked file the compiler reads all the same
        "packages/core/package.json": json.dumps(
            {
                "name": "@acme/core",
                "main": "./src/index.ts",
                "exports": {
                    ".": {
                        "@acme/source": "./src/index.ts",
                        "types": "./dist/index.d.ts",
                        "default": "./dist/index.js",
                    },
                    "./utils/*": {"import": "./src/utils/*.ts"},
                },
            }
        ),
        "packages/core/src/index.ts": "export * from './utils/str';\nexport class Core {}\n",
        "packages/core/src/utils/str.ts": "export function str() { return ''; }\n",
        "packages/cli/package.json": json.dumps(
            {"name": "acme-cli", "types": "lib/types.d.ts", "main": "lib/main.js"}
        ),
        "packages/cli/lib/main.js": "const { Core } = require('@acme/core');\nmodule.exports = { Core };\n",
        "packages/cli/lib/types.d.ts": "export declare const Core: unknown;\n",
        "packages/app/package.json": json.dumps(
            {
                "name": "@acme/app",
                "imports": {
                    "#internal/*": {"types": "./src/internal/*.ts", "default": "./dist/internal/*.js"},
                    "#config": "./src/config.ts",
                },
            }
        ),
        "packages/app/src/internal/log.ts": "export function log() {}\n",
        "packages/app/src/config.ts": "import { log } from '#internal/log';\nexport const config = log;\n",
        "packages/app/src/index.ts": "\n".join(
            [
                "import { Core } from '@acme/core';",
                "import { str } from '@acme/core/utils/str';",
                "import cli from 'acme-cli';",
                "import fp from 'lodash/fp';",
                "import { z } from '@scoped/outside/deep';",
                "import { config } from '#config';",
                "export const all = [Core, str, cli, fp, z];",
                "",
            ]
        ),
    }


@pytest.mark.parametrize("resolution", ["bundler", "node10", "node16"])
def test_workspace_packages_resolve_as_the_compiler_resolves_them(tmp_path: Path, resolution: str) -> None:
    """npm/pnpm/yarn workspaces link each package into ``node_modules``: the compiler follows the link to the
    package's ``exports`` (bundler, node16) or ``types``/``main`` (node10); IGG reads the package.json
    files."""
    links = {"@acme/core": "packages/core", "acme-cli": "packages/cli", "@acme/app": "packages/app"}
    _compare_imports(_write(tmp_path / f"ws-{resolution}", _workspaces(resolution)), links)


@pytest.mark.parametrize("project", ["ky", "superstruct"])
def test_real_projects_import_what_the_compiler_resolves(tmp_path: Path, project: str) -> None:
    import shutil

    root = tmp_path / project
    shutil.copytree(REAL / project, root)
    precision, recall, score = _compare_imports(root)
    assert score == 1.0 and recall == 1.0


@pytest.mark.parametrize(("project", "folder"), [("ky", "source"), ("superstruct", "src")])
def test_real_projects_import_what_dependency_cruiser_lists(
    tmp_path: Path, project: str, folder: str
) -> None:
    """A second oracle: dependency-cruiser (with ``--ts-pre-compilation-deps``) on the same sources."""
    import shutil

    root = tmp_path / project
    shutil.copytree(REAL / project, root)
    model, _, _ = _link(root)
    ours, _ = _imports(model)
    expected = depcruise_edges(root, folder)
    print(
        f"{project}: module IMPORTS vs dependency-cruiser F1 {f1(ours, expected)[2]:.3f} ({len(expected)}"
        " edges)"
    )
    assert ours == expected


def _types(model: CodeModel) -> set[tuple[str, str]]:
    return {
        (s.properties["file"], s.properties["name"])
        for s in model.symbols.values()
        if s.label in ("Class", "Interface", "Enum")
    }


@pytest.mark.parametrize("project", ["ky", "superstruct"])
def test_real_projects_types_are_the_compilers(tmp_path: Path, project: str) -> None:
    import shutil

    root = tmp_path / project
    shutil.copytree(REAL / project, root)
    model, sources, truth = _link(root)
    expected = {(_canonical(f, sources), name) for f, name, _ in truth["types"]}
    ours = _types(model)
    precision, recall, _ = f1(ours, expected)
    print(f"{project}: types recall {recall:.3f} precision {precision:.3f} ({len(expected)} types)")
    assert recall >= 0.99 and precision >= 0.99, sorted(expected ^ ours)[:10]


def _calls(model: CodeModel) -> set[tuple[str, str, str, str]]:
    """IGG's callable-to-callable CALLS as (caller file, caller, callee file, callee): ``Class.method`` or
    ``function``, as the oracle names them."""

    def name(key: str) -> tuple[str, str] | None:
        symbol = model.symbols[key]
        p = symbol.properties
        if symbol.label == "Method":
            module = p["file"].rsplit(".", 1)[0].removesuffix(".d")
            return p["file"], f"{p['owner'][len(module) + 1 :]}.{p['name']}"
        if symbol.label == "Function":
            return p["file"], p["name"]
        return None

    out = set()
    for plan in model.files:
        for r in plan.relations:
            if r.label == "CALLS":
                a, b = name(r.source), name(r.target)
                if a is not None and b is not None:
                    out.add((*a, *b))
    return out


CALLS = {
    "tsconfig.json": '{"compilerOptions": {"module": "commonjs", "strict": true}}\n',
    "src/repo.ts": "\n".join(
        [
            "export interface Store { get(id: string): string; }",
            "export class Repo implements Store {",
            "  constructor(private prefix: string) {}",
            "  get(id: string): string { return this.key(id); }",
            "  key(id: string): string { return this.prefix + id; }",
            "  static create(): Repo { return new Repo('r:'); }",
            "}",
            "export function helper(x: number): number { return x + 1; }",
            "export const arrow = (s: Store) => s.get('a');",
            "",
        ]
    ),
    "src/service.ts": "\n".join(
        [
            "import { Repo, Store, helper, arrow } from './repo';",
            "import * as repo from './repo';",
            "export class Base { constructor() {} hello(): void {} }",
            "export class Service extends Base {",
            "  private repo: Repo = Repo.create();",
            "  constructor(private store: Store) { super(); }",
            "  run(other: Repo): string {",
            "    helper(1); repo.helper(2); arrow(this.store); this.hello(); super.hello();",
            (
                "    const local = new Repo('x'); local.key('k'); other.get('o'); this.store.get('s');"
                " this.repo.key('r');"
            ),
            "    const untyped = make(); untyped.whatever();",
            "    [1, 2].map((n) => helper(n));",
            "    return Repo.create().get('z');",
            "  }",
            "}",
            "function make(): any { return {}; }",
            "export function main(): void { new Service(new Repo('m')).run(Repo.create()); }",
            "",
        ]
    ),
    "src/legacy.js": "function twice(x) { return x * 2; }\nmodule.exports = { twice };\n",
    "src/uses.js": (
        "const { twice } = require('./legacy');\nconst legacy = require('./legacy');\n"
        "function run() { return twice(1) + legacy.twice(2); }\nmodule.exports = { run };\n"
    ),
}


def test_calls_are_the_ones_the_checker_resolves(tmp_path: Path) -> None:
    model, _, truth = _link(_write(tmp_path / "calls", CALLS))
    ours, expected = _calls(model), {tuple(c) for c in truth["calls"]}
    precision, recall, _ = f1(ours, expected)
    print(f"calls: CALLS precision {precision:.3f} recall {recall:.3f} ({len(expected)} calls)")
    assert ours <= expected, sorted(ours - expected)
    assert recall >= 0.8, sorted(expected - ours)


@pytest.mark.parametrize("project", ["ky", "superstruct"])
def test_real_projects_calls_are_precise(tmp_path: Path, project: str) -> None:
    import shutil

    root = tmp_path / project
    shutil.copytree(REAL / project, root)
    model, _, truth = _link(root)
    ours, expected = _calls(model), {tuple(c) for c in truth["calls"]}
    precision, recall, _ = f1(ours, expected)
    print(
        f"{project}: CALLS precision {precision:.3f} recall {recall:.3f} ({len(ours)} ours, {len(expected)} "
        "the checker's)"
    )
    assert precision >= 0.95, sorted(ours - expected)[:10]


def _igg(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300
    )


def test_a_polyglot_tree_maps_each_language_and_the_summary_counts_files_per_language(tmp_path: Path) -> None:
    _write(
        tmp_path / "poly",
        {
            **{f"web/{k}": v for k, v in RELATIVE.items()},
            "svc/app.py": "import json\n\ndef q():\n    return 'SELECT id FROM users WHERE a = 1'\n",
            "web/src/db.ts": "export function load() { return `SELECT id FROM users WHERE b = ${1}`; }\n",
        },
    )
    done = _igg("map-code", "poly", "--no-store", "--json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["map_code"]
    assert summary["files"]["by_language"] == {"python": 1, "typescript": 28}
    only = _igg("map-code", "poly", "--no-store", "--json", "--quiet", "--languages", "python", cwd=tmp_path)
    assert json.loads(only.stdout)["map_code"]["files"]["by_language"] == {"python": 1}
    wrong = _igg("map-code", "poly", "--no-store", "--languages", "python,cobol", cwd=tmp_path)
    assert wrong.returncode == 2 and "cobol: languages are python, java, typescript" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def test_both_languages_read_the_one_shared_table(tmp_path: Path) -> None:
    _write(
        tmp_path / "shared",
        {
            "svc/app.py": "def q():\n    return 'SELECT id FROM users WHERE a = 1'\n",
            "web/db.ts": (
                "export function load() { return `SELECT id FROM users WHERE b = ${1}`; }\n"
                "export function save() { return 'INSERT INTO users (id) VALUES (?)'; }\n"
            ),
        },
    )
    walked = walk([tmp_path / "shared"])
    model = link(parse_all(walked.files, jobs=1)[0])
    edges = {
        (model.symbols[r.source].properties["name"], r.label)
        for p in model.files
        for r in p.relations
        if r.target == "table:users"
    }
    assert edges == {("q", "READS_FROM"), ("load", "READS_FROM"), ("save", "WRITES_TO")}


def test_a_changed_tsconfig_relinks_on_update(tmp_path: Path) -> None:
    """``--update`` after a change of ``tsconfig.json`` alone: the imports it redirects move, as a fresh map
    has them."""
    tree = _write(
        tmp_path / "tree",
        {
            "tsconfig.json": json.dumps({"compilerOptions": {"baseUrl": ".", "paths": {"@x/*": ["one/*"]}}}),
            "main.ts": "import { a } from '@x/a';\nexport const m = a;\n",
            "one/a.ts": "export const a = 1;\n",
            "two/a.ts": "export const a = 2;\n",
        },
    )
    first = _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (tree / "tsconfig.json").write_text(
        json.dumps({"compilerOptions": {"baseUrl": ".", "paths": {"@x/*": ["two/*"]}}})
    )
    update = _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--update", "--json", cwd=tmp_path)
    assert update.returncode == 0, update.stderr
    assert json.loads(update.stdout)["graph"]["edges_added"] >= 1
    now = _igg("export", "--store", "s.db", "m", "--format", "json", "--output", "now.json", cwd=tmp_path)
    fresh = _igg("map-code", "tree", "--no-store", "--quiet", "--export", "json:fresh.json", cwd=tmp_path)
    assert now.returncode == 0 and fresh.returncode == 0, now.stderr + fresh.stderr

    def imports(path: Path) -> set[tuple[str, str]]:
        doc = json.loads(path.read_text())
        names = {n["id"]: n["properties"].get("path") or n["properties"]["name"] for n in doc["nodes"]}
        return {(names[e["from"]], names[e["to"]]) for e in doc["edges"] if e["type"] == "IMPORTS"}

    assert imports(tmp_path / "now.json") == imports(tmp_path / "fresh.json") == {("main.ts", "two/a.ts")}


@pytest.mark.parametrize("edit", ["body", "export"])
def test_an_update_after_a_typescript_edit_is_the_fresh_map(tmp_path: Path, edit: str) -> None:
    """A changed body links that file (and those naming what changed) again; a changed export links all:
    either way the graph is the one a fresh map of the edited tree makes."""
    tree = _write(tmp_path / "tree", {k: v for k, v in CALLS.items()})
    first = _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    service = tree / "src" / "service.ts"
    if edit == "body":
        service.write_text(service.read_text().replace("helper(1); repo.helper(2);", "repo.helper(2);"))
    else:
        repo = tree / "src" / "repo.ts"
        repo.write_text(
            repo.read_text().replace("export function helper", "function helper")
        )  # no longer exported
    update = _igg("map-code", "tree", "--store", "s.db", "--session", "m", "--update", "--json", cwd=tmp_path)
    assert update.returncode == 0, update.stderr
    now = _igg("export", "m", "--store", "s.db", "--format", "json", "--output", "now.json", cwd=tmp_path)
    fresh = _igg("map-code", "tree", "--no-store", "--quiet", "--export", "json:fresh.json", cwd=tmp_path)
    assert now.returncode == 0 and fresh.returncode == 0, now.stderr + fresh.stderr

    def edges(path: Path) -> set[tuple[str, str, str]]:
        doc = json.loads(path.read_text())
        names = {n["id"]: json.dumps(n["properties"], sort_keys=True) for n in doc["nodes"]}
        return {(names[e["from"]], e["type"], names[e["to"]]) for e in doc["edges"]}

    assert edges(tmp_path / "now.json") == edges(tmp_path / "fresh.json")


def test_a_file_that_does_not_parse_is_partial_and_the_map_goes_on(tmp_path: Path) -> None:
    _write(
        tmp_path / "bad",
        {
            "ok.ts": "import { b } from './broken';\nexport const ok = b;\n",
            "broken.ts": "export const b = ;\nexport class {\n",
            "tsconfig.json": "{ not json",
        },
    )
    done = _igg("map-code", "bad", "--no-store", "--json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    partial = {p["path"]: p["error"] for p in json.loads(done.stdout)["map_code"]["files"]["partial"]}
    assert partial["broken.ts"].startswith("syntax error") and partial["tsconfig.json"].startswith(
        "not valid JSON"
    )


def test_declaration_files_of_one_stem_keep_their_types_apart(tmp_path: Path) -> None:
    """axios ships ``index.d.ts`` (declaring ``index.js``) and ``index.d.cts`` (declaring an ``index.cjs`` the
    tree lacks): both declare ``Axios``; the compiler has each, and so has the map (the second named
    ``index.cjs``)."""
    root = _write(
        tmp_path / "pair",
        {
            "package.json": '{"name": "pair", "types": "index.d.ts"}\n',
            "tsconfig.json": '{"compilerOptions": {"allowJs": true, "module": "commonjs"}}\n',
            "index.js": "export class Axios { get() { return 1 } }\n",
            "index.d.ts": "export class Axios { get(): number }\nexport interface Config { url: string }\n",
            "index.d.cts": (
                "declare class Axios { get(): number }\ndeclare namespace axios { interface Options {} }\n"
                "export = Axios\n"
            ),
        },
    )
    model, sources, truth = _link(root)
    expected = {(_canonical(f, sources), name) for f, name, _ in truth["types"]}
    assert {("index.js", "Axios"), ("index.d.cts", "Axios")} <= expected
    assert _types(model) == expected
