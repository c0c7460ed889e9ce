"""Valid TypeScript the tree-sitter grammar does not parse (``igg.codemap.typescript.repair``) is read whole:
no file partial, and the declarations after each construct are the compiler's (``tests/tsoracle``): a generic
call signature on its own line in an interface or a type literal, ``export type * from``, a member named
``in`` after one without a separator, and ``f<typeof import('x')>()``; a file that is really broken stays
partial."""

from __future__ import annotations

from pathlib import Path

import pytest

from igg.codemap.link import link
from igg.codemap.typescript.analyze import analyze_typescript, parse
from igg.codemap.walk import walk
from igg.mapping.prepare import parse_all
from tests.integration.test_code_typescript import _calls
from tests.tsoracle import missing, module_edges, oracle

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")

TREE = {
    "tsconfig.json": (
        '{"compilerOptions": {"module": "esnext", "moduleResolution": "bundler", "strict": true}}\n'
    ),
    "src/store.ts": "\n".join(
        [
            "export interface StoreApi<T> { getState(): T }",
            "export type UseBound<S> = {",
            "  (): S",
            "  <U>(selector: (state: S) => U): U",
            "} & StoreApi<S>",
            "export interface Compose {",
            "  (options: string): number",
            "  /** the generic form */",
            "  <Ext extends {}>(",
            "    ...funcs: Ext[]",
            "  ): Ext",
            "  <",
            "    A,",
            "    B,",
            "  >(a: A): B",
            "}",
            "export class AfterSignatures { run(): number { return helper() } }",
            "export function helper(): number { return 1 }",
            "",
        ]
    ),
    "src/query.ts": "\n".join(
        [
            "export type IdQuery = {",
            "  equals?: Array<string>",
            "  in?: Array<string>",
            "  notIn?: Array<string>",
            "}",
            "export interface AfterIn { id: string }",
            "export enum Kind { A, B }",
            "",
        ]
    ),
    "src/types.ts": (
        "export type * from './store'\nexport type * as query from './query'\nexport class AfterTypeStar {}\n"
    ),
    "src/load.ts": "\n".join(
        [
            "import { helper } from './store'",
            "function typed<T>(): T | undefined { return undefined }",
            "export async function load(): Promise<number> {",
            "  const mod = typed<typeof import('./query')>()",
            "  return mod ? helper() : 0",
            "}",
            "export class AfterTypeofImport { go(): Promise<number> { return load() } }",
            "",
        ]
    ),
}


def _write(root: Path) -> Path:
    for name, text in TREE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_grammar_gaps_leave_no_file_partial_and_the_types_after_them_are_the_compilers(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "gaps")
    sources = sorted(name for name in TREE if name.endswith(".ts"))
    for name in sources:  # each construct does break the bare grammar: the repair is what reads them
        assert parse(name, TREE[name]).root_node.has_error, name
    walked = walk([root])
    facts, _ = parse_all(walked.files, jobs=1)
    assert [(f.path, f.error) for f in facts if f.error] == []
    model = link(facts)
    truth = oracle(root, sources)
    types = {
        (s.properties["file"], s.properties["name"])
        for s in model.symbols.values()
        if s.label in ("Class", "Interface", "Enum")
    }
    expected = {(f, name) for f, name, _ in truth["types"]}
    assert ("src/types.ts", "AfterTypeStar") in expected and ("src/store.ts", "AfterSignatures") in expected
    assert types == expected
    imports = {
        (r.source.removeprefix("module:"), r.target.removeprefix("module:"))
        for plan in model.files
        for r in plan.relations
        if r.label == "IMPORTS" and r.target.startswith("module:")
    }
    assert imports == module_edges(truth)
    ours = _calls(model)
    assert ("src/load.ts", "load", "src/store.ts", "helper") in ours
    assert ours <= {tuple(c) for c in truth["calls"]}, ours


def test_export_type_star_stays_type_only_and_a_broken_file_stays_partial() -> None:
    facts = analyze_typescript("src/types.ts", TREE["src/types.ts"])
    assert facts.error is None
    assert [(i.source, i.type_only) for i in facts.imports] == [("./store", True), ("./query", True)]
    broken = analyze_typescript("src/broken.ts", "interface A {\n  <T>(x: T): \n}\nexport const = 1\n")
    assert broken.error is not None and broken.error.startswith("syntax error")
