"""Nested callables and local types of TypeScript/JavaScript as nodes, judged by the TypeScript compiler
(``tests/tsoracle``: the checker's resolved call targets, named as IGG names them): a function nested in
another (``function`` declarations, ``const f = () => ...``, in functions and methods, behind anonymous
callbacks) is ``outer.inner`` with its own calls; the members of a module-level object literal are functions
(``api.get``) or aliases of the module's functions, through which an importer's ``utils.forEach()`` resolves;
CommonJS's ``exports.a = function () {...}`` is the function ``a``; classes, interfaces and enums declared in
function bodies are types (``outer.Local``; by their own name in a callback no named callable holds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from igg.codemap.link import link
from igg.codemap.walk import walk
from igg.mapping.prepare import parse_all
from tests.integration.test_code_typescript import _calls, _types
from tests.tsoracle import missing, oracle

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

TREE = {
    "tsconfig.json": (
        '{"compilerOptions": {"module": "esnext", "moduleResolution": "bundler", "strict": true,'
        ' "allowJs": true, "checkJs": true}}\n'
    ),
    "src/utils.js": "\n".join(
        [
            "function forEach(list, fn) { for (const x of list) fn(x) }",
            "function merge(a, b) { return Object.assign({}, a, b) }",
            "export default { forEach, merge, combine: merge, twice(x) { return merge(x, x) } }",
            "",
        ]
    ),
    "src/common.js": (
        "exports.twice = function (x) { return half(x) * 4 }\nfunction half(x) { return x / 2 }\n"
    ),
    "src/usecommon.js": (
        "const common = require('./common')\nfunction run() { return common.twice(1) }\n"
        "module.exports = { run }\n"
    ),
    "src/api.ts": "\n".join(
        [
            "import utils from './utils.js'",
            "export function outer(items: number[]): number {",
            "  function inner(n: number): number { return helper(n) }",
            "  const arrow = (n: number): number => inner(n) + deeper(n)",
            "  function deeper(n: number): number { const last = (): number => helper(n); return last() }",
            "  utils.forEach(items, (x: number) => { arrow(x) })",
            (
                "  return [1, 2].map((n) => { function inCallback(): number { return inner(n) } return"
                " inCallback() })[0]"
            ),
            "}",
            "export function helper(n: number): number { utils.merge({}, {}); return n }",
            "export const api = {",
            "  get(id: string): string { return api.post(id) },",
            "  post: (id: string): string => id + helper(1),",
            "}",
            "export class Service {",
            "  run(): number {",
            "    const step = (): number => helper(2) + outer([])",
            "    class Local { go(): number { return step() } }",
            "    interface Shape { size: number }",
            "    enum Mode { A, B }",
            "    const shape: Shape = { size: Mode.B }",
            "    const local = new Local()",
            "    return local.go() + shape.size + api.get('x').length",
            "  }",
            "}",
            "describe('suite', () => {",
            "  class InTest { check(): number { return helper(3) } }",
            "  new InTest().check()",
            "})",
            "function describe(name: string, body: () => void): void { body() }",
            "",
        ]
    ),
}


def test_nested_callables_and_local_types_are_the_compilers(tmp_path: Path) -> None:
    root = tmp_path / "nested"
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    walked = walk([root])
    facts, _ = parse_all(walked.files, jobs=1)
    model = link(facts)
    sources = sorted(name for name in TREE if not name.endswith(".json"))
    truth = oracle(root, sources)
    expected = {tuple(c) for c in truth["calls"]}
    ours = _calls(model)
    for call in [
        ("src/api.ts", "outer.inner", "src/api.ts", "helper"),
        ("src/api.ts", "outer.arrow", "src/api.ts", "outer.inner"),
        ("src/api.ts", "outer.arrow", "src/api.ts", "outer.deeper"),
        ("src/api.ts", "outer.deeper.last", "src/api.ts", "helper"),
        ("src/api.ts", "outer.inCallback", "src/api.ts", "outer.inner"),
        ("src/api.ts", "outer", "src/utils.js", "forEach"),
        ("src/api.ts", "helper", "src/utils.js", "merge"),
        ("src/api.ts", "api.get", "src/api.ts", "api.post"),
        ("src/api.ts", "Service.run.step", "src/api.ts", "outer"),
        ("src/api.ts", "Service.run.Local.go", "src/api.ts", "Service.run.step"),
        ("src/utils.js", "default.twice", "src/utils.js", "merge"),
        ("src/usecommon.js", "run", "src/common.js", "twice"),
        ("src/common.js", "twice", "src/common.js", "half"),
    ]:
        assert call in expected, call  # the compiler's naming is the one described
    assert ours <= expected, sorted(ours - expected)
    assert ours == expected, sorted(expected - ours)
    types = {(f, name) for f, name, _ in truth["types"]}
    assert {
        ("src/api.ts", "Service.run.Local"),
        ("src/api.ts", "Service.run.Shape"),
        ("src/api.ts", "Service.run.Mode"),
        ("src/api.ts", "InTest"),
    } <= types
    assert _types(model) == types


@pytest.mark.parametrize("edit", ["nested", "namespace"])
def test_an_update_after_a_nested_edit_is_the_fresh_map(tmp_path: Path, edit: str) -> None:
    """A nested function renamed and a local class added (a body edit of one file), or a member added to the
    default-exported object literal an importer calls through: the updated graph is the fresh map's."""
    import json
    import os
    import subprocess
    import sys

    def igg(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        return subprocess.run(
            [sys.executable, "-m", "igg", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    root = tmp_path / "tree"
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert igg("map-code", "tree", "--store", "s.db", "--session", "m", "--quiet").returncode == 0
    if edit == "nested":
        api = root / "src" / "api.ts"
        api.write_text(
            api.read_text()
            .replace("inner", "renamed")
            .replace(
                "  function deeper", "  class Added { go(): number { return helper(9) } }\n  function deeper"
            )
        )
    else:
        utils = root / "src" / "utils.js"
        utils.write_text(utils.read_text().replace("combine: merge,", "combine: merge, each: forEach,"))
        api = root / "src" / "api.ts"
        api.write_text(api.read_text().replace("utils.merge({}, {})", "utils.each([], () => 0)"))
    update = igg("map-code", "tree", "--store", "s.db", "--session", "m", "--update", "--json")
    assert update.returncode == 0, update.stderr
    assert igg("export", "m", "--store", "s.db", "--format", "json", "--output", "now.json").returncode == 0
    assert igg("map-code", "tree", "--no-store", "--quiet", "--export", "json:fresh.json").returncode == 0

    def graph(path: Path) -> tuple[set[str], set[tuple[str, str, str]]]:
        doc = json.loads(path.read_text())
        names = {n["id"]: json.dumps(n["properties"], sort_keys=True) for n in doc["nodes"]}
        return set(names.values()), {(names[e["from"]], e["type"], names[e["to"]]) for e in doc["edges"]}

    now, fresh = graph(tmp_path / "now.json"), graph(tmp_path / "fresh.json")
    assert now == fresh
    named = {json.loads(n).get("name") for n in now[0]}
    assert ("outer.renamed" in named and "outer.Added" in named) if edit == "nested" else "forEach" in named
