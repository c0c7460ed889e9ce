"""Go maps against the Go toolchain as the oracle (``tests/gooracle``).

Package IMPORTS are compared edge for edge with ``go list -json``'s ``Imports``/``TestImports`` (a package
with its in-package tests) and ``XTestImports`` (its external test package, ``path_test``) on a tree built
here (two modules and a ``go.work``, a nested module, internal packages, a ``/v2`` folder, aliased, blank and
dot imports, in-package and external tests, build constraints of every kind, cgo, ``testdata`` and ``_``
folders, outside modules without a download) and on two real projects copied into ``fixtures/code/go`` (chi,
uuid). Types, functions and methods are compared with go/ast's declarations, CALLS with go/types' resolved
callees (precision; recall is reported), the computed IMPLEMENTS with ``types.Implements``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from igg.codemap.link import CodeModel, link
from igg.codemap.walk import WalkResult, walk
from igg.mapping.prepare import parse_all
from tests.gooracle import f1, go_list, missing, package_imports, program

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "fixtures" / "code" / "go"

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _map(root: Path) -> tuple[CodeModel, WalkResult]:
    walked = walk([root])
    facts, _ = parse_all(walked.files, jobs=1)
    return link(facts), walked


def _package_imports(model: CodeModel, modules: set[str]) -> set[tuple[str, str]]:
    """IGG's IMPORTS of ``modules`` as (importing package, imported import path): each file's edges under its
    package."""
    package_of = {
        r.target: r.source.removeprefix("package:")
        for plan in model.files
        for r in plan.relations
        if r.label == "CONTAINS" and r.source.startswith("package:") and r.target.startswith("module:")
    }
    return {
        (package_of[r.source], r.target.removeprefix("package:"))
        for plan in model.files
        for r in plan.relations
        if r.label == "IMPORTS" and r.source in modules
    }


def _compare_imports(root: Path) -> tuple[CodeModel, list[dict[str, Any]]]:
    model, _ = _map(root)
    listed = go_list(root)
    go_files = {f"module:{p.path}" for p in model.files if p.language == "go"}
    ours = {(a, b) for a, b in _package_imports(model, go_files)}
    truth = package_imports(listed)
    precision, recall, score = f1(ours, truth)
    print(
        f"{root.name}: package IMPORTS precision {precision:.3f} recall {recall:.3f} F1 {score:.3f} "
        f"({len(truth)} edges, {len(listed)} packages)"
    )
    assert ours == truth, (sorted(ours - truth), sorted(truth - ours))
    return model, listed


GO_WORK = {
    "go.work": "go 1.19\n\nuse (\n\t./svc\n\t./lib\n)\n",
    "svc/go.mod": "\n".join(
        [
            "module example.com/svc",
            "",
            "go 1.19",
            "",
            "require (",
            "\tgithub.com/pkg/errors v0.9.1",
            "\texample.com/lib v0.0.0",
            ")",
            "",
            "replace example.com/lib => ../lib // the sibling module",
            "",
        ]
    ),
    "svc/cmd/server/main.go": "\n".join(
        [
            "// Command server serves.",
            "package main",
            "",
            "import (",
            '\t"net/http"',
            '\t"os"',
            "",
            '\t"example.com/lib/text"',
            '\tv2 "example.com/lib/text/v2"',
            '\t"example.com/svc/internal/store"',
            '\t"github.com/pkg/errors"',
            '\t_ "github.com/lib/pq"',
            ")",
            "",
            "func main() {",
            '\ts := store.Open(os.Getenv("DSN"))',
            "\t_ = s",
            "\t_ = text.Upper(v2.Name)",
            '\t_ = errors.New("x")',
            '\t_ = http.ListenAndServe(":8080", nil)',
            "}",
            "",
        ]
    ),
    "svc/internal/store/store.go": "\n".join(
        [
            "package store",
            "",
            'import (\n\t"database/sql"\n\t"fmt"\n)',
            "",
            "type Store struct{ db *sql.DB }",
            "",
            "func Open(dsn string) *Store { fmt.Println(dsn); return &Store{} }",
            "",
        ]
    ),
    "svc/internal/store/store_test.go": "\n".join(
        [
            "package store",
            "",
            'import (\n\t"testing"\n\n\t"example.com/svc/internal/testutil"\n)',
            "",
            'func TestOpen(t *testing.T) { testutil.Check(t, Open("x") != nil) }',
            "",
        ]
    ),
    "svc/internal/store/store_ext_test.go": "\n".join(
        [
            "package store_test",
            "",
            'import (\n\t"strings"\n\t"testing"\n\n\t"example.com/svc/internal/store"\n)',
            "",
            'func TestExt(t *testing.T) { _ = store.Open(strings.TrimSpace(" x ")) }',
            "",
        ]
    ),
    "svc/internal/testutil/util.go": (
        'package testutil\n\nimport "os"\n\nfunc Check(t any, ok bool) { _ = os.Args }\n'
    ),
    "svc/internal/build/version.go": (
        'package build\n\nimport "runtime/debug"\n\nvar _ = debug.ReadBuildInfo\n'
    ),
    "svc/out/gen/gen.go": 'package gen\n\nimport "text/template"\n\nvar _ = template.New\n',
    "svc/vendor/github.com/pkg/errors/errors.go": 'package errors\n\nimport "fmt"\n\nvar _ = fmt.Sprint\n',
    "svc/internal/store/sys_linux.go": 'package store\n\nimport "syscall"\n\nvar _ = syscall.Getpid\n',
    "svc/internal/store/sys_windows.go": (
        'package store\n\nimport "golang.org/x/sys/windows"\n\nvar _ = windows.Handle(0)\n'
    ),
    "svc/internal/store/sys_darwin_arm64.go": (
        'package store\n\nimport "unsafe"\n\nvar _ = unsafe.Sizeof(0)\n'
    ),
    "svc/internal/store/sys_arm64_test.go": 'package store\n\nimport "math/bits"\n\nvar _ = bits.UintSize\n',
    "svc/internal/store/legacy.go": (
        '// +build ignore\n\npackage store\n\nimport "log"\n\nvar _ = log.Println\n'
    ),
    "svc/internal/store/plus.go": (
        "// Copyright notice.\n\n// +build linux darwin\n// +build !purego\n\n"
        'package store\n\nimport "hash/crc32"\n\nvar _ = crc32.IEEE\n'
    ),
    "svc/internal/store/tagged.go": (
        "//go:build (linux || windows) && amd64 && !purego && go1.12\n\n"
        'package store\n\nimport "hash/adler32"\n\nvar _ = adler32.Size\n'
    ),
    "svc/internal/store/never.go": (
        '//go:build linux && windows\n\npackage store\n\nimport "crypto/md5"\n\nvar _ = md5.Size\n'
    ),
    "svc/internal/store/future.go": (
        '//go:build go1.999\n\npackage store\n\nimport "crypto/sha1"\n\nvar _ = sha1.Size\n'
    ),
    "svc/internal/store/unix.go": (
        '//go:build unix\n\npackage store\n\nimport "os/user"\n\nvar _ = user.Current\n'
    ),
    "svc/internal/store/cgo.go": (
        '//go:build cgo\n\npackage store\n\n/*\n#include <stdlib.h>\n*/\nimport "C"\n\n'
        'import "runtime"\n\nvar _ = runtime.NumCPU\n'
    ),
    "svc/internal/store/gen.pb.go": (
        "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage store\n\n"
        'import "google.golang.org/protobuf/proto"\n\nvar _ = proto.Marshal\n'
    ),
    "svc/tools/tools.go": '//go:build tools\n\npackage tools\n\nimport _ "golang.org/x/tools/cmd/stringer"\n',
    "svc/testdata/data.go": 'package data\n\nimport "fmt"\n\nvar _ = fmt.Sprint\n',
    "svc/_scratch/old.go": 'package old\n\nimport "bytes"\n\nvar _ = bytes.MinRead\n',
    "svc/internal/store/_draft.go": 'package store\n\nimport "bufio"\n\nvar _ = bufio.MaxScanTokenSize\n',
    "lib/go.mod": "module example.com/lib\n\ngo 1.19\n",
    "lib/text/text.go": "\n".join(
        [
            "// Package text cases words.",
            "package text",
            "",
            "import (",
            '\t. "strings"',
            '\tu "unicode/utf8"',
            '\t"unicode"',
            ")",
            "",
            "func Upper(s string) string { _ = u.RuneLen('x'); _ = unicode.IsUpper('x'); return ToUpper(s) }",
            "",
        ]
    ),
    "lib/text/v2/text.go": 'package text\n\nimport "example.com/lib/text"\n\nvar Name = text.Upper("v2")\n',
    "lib/tools/go.mod": "module example.com/lib/tools\n\ngo 1.19\n\nrequire golang.org/x/mod v0.14.0\n",
    "lib/tools/main.go": (
        'package main\n\nimport (\n\t"example.com/lib/text"\n\t"golang.org/x/mod/modfile"\n)\n\n'
        'func main() { _ = text.Upper(""); _ = modfile.Parse }\n'
    ),
}


def test_package_imports_of_a_workspace_are_go_lists(tmp_path: Path) -> None:
    """Two modules in a go.work, a nested module, internal packages, a /v2 folder, packages in folders named
    build and out (a vendor folder is left out, as ./... leaves it), tests in and out of the package, build
    constraints (file names, //go:build, // +build, ignore, cgo, unix, release tags), generated
    files, testdata and _ folders: the package-to-package IMPORTS are go list's, outside packages by import
    path."""
    model, _ = _compare_imports(_write(tmp_path / "work", GO_WORK))
    packages = {s.properties["name"]: s.properties for s in model.symbols.values() if s.label == "Package"}
    assert packages["example.com/svc/internal/store_test"].get("external") is None
    assert packages["example.com/lib/text/v2"].get("external") is None
    assert packages["net/http"]["external"] is True and packages["github.com/pkg/errors"]["external"] is True
    assert "C" not in packages


def test_files_out_of_the_build_are_skipped_with_the_reason(tmp_path: Path) -> None:
    _, walked = _map(_write(tmp_path / "work", GO_WORK))
    skipped = {s.path: s.reason for s in walked.skipped}
    assert skipped["svc/internal/store/sys_windows.go"] == "not in the build: for GOOS=windows (its name)"
    assert skipped["svc/internal/store/legacy.go"].startswith(
        "not in the build: build constraint //go:build ignore (GOOS="
    )
    assert (
        skipped["svc/testdata/data.go"] == "not in the build: in a testdata folder (no package of the build)"
    )
    assert "svc/_scratch/old.go" in skipped and "svc/internal/store/_draft.go" in skipped
    assert "svc/internal/store/gen.pb.go" not in skipped  # generated, and built: read


@pytest.mark.parametrize("project", ["chi", "uuid", "../polyglot"])
def test_real_projects_import_what_go_list_lists(tmp_path: Path, project: str) -> None:
    """chi, uuid, and the Go modules of the polyglot fixture (a go.work beside Java, Python and
    TypeScript)."""
    root = tmp_path / Path(project).name
    shutil.copytree(REAL / project, root)
    _compare_imports(root)


def _names(model: CodeModel) -> dict[str, set[tuple[str, ...]]]:
    out: dict[str, set[tuple[str, ...]]] = {"types": set(), "functions": set(), "methods": set()}
    for s in model.symbols.values():
        p = s.properties
        if s.label in ("Class", "Interface"):
            out["types"].add((p["file"], p["name"], "interface" if s.label == "Interface" else "class"))
        elif s.label == "Function":
            out["functions"].add((p["file"], p["name"]))
        elif s.label == "Method" and model.symbols[f"type:{p['owner']}"].label != "Interface":
            out["methods"].add((p["file"], p["owner"].rpartition(".")[2], p["name"]))
    return out


def _calls(model: CodeModel) -> set[tuple[str, str, str, str]]:
    """IGG's callable-to-callable CALLS as (caller file, caller, callee file, callee), ``Type.Method`` or
    ``Func`` as the oracle names them."""

    def name(key: str) -> tuple[str, str] | None:
        s = model.symbols.get(key)
        if s is None or s.label not in ("Method", "Function"):
            return None
        p = s.properties
        return p["file"], f"{p['owner'].rpartition('.')[2]}.{p['name']}" if s.label == "Method" else p["name"]

    out = set()
    for plan in model.files:
        for r in plan.relations:
            if r.label == "CALLS":
                a, b = name(r.source), name(r.target)
                if a is not None and b is not None:
                    out.add((*a, *b))
    return out


def _implements(model: CodeModel) -> set[tuple[str, str, str, str]]:
    out = set()
    for plan in model.files:
        for r in plan.relations:
            if r.label == "IMPLEMENTS":
                a, b = model.symbols[r.source].properties, model.symbols[r.target].properties
                out.add((a["file"], a["name"], b["file"], b["name"]))
    return out


def _oracle_calls(truth: dict[str, list[list[str]]]) -> set[tuple[str, str, str, str]]:
    """The checker's calls, a function's calls of itself (recursion) included."""
    return {(a, b, c, d) for a, b, c, d in map(tuple, truth["calls"])}


@pytest.mark.parametrize("project", ["chi", "uuid"])
def test_real_projects_declarations_calls_and_implements_are_the_checkers(
    tmp_path: Path, project: str
) -> None:
    root = tmp_path / project
    shutil.copytree(REAL / project, root)
    model, listed = _compare_imports(root)
    truth = program(root, listed)
    ours = _names(model)
    types = {tuple(t) for t in truth["types"]}
    precision, recall, _ = f1(ours["types"], types)
    print(f"{project}: types recall {recall:.3f} precision {precision:.3f} ({len(types)} types)")
    assert recall >= 0.99 and precision >= 0.99, sorted(types ^ ours["types"])[:10]
    methods = {tuple(m) for m in truth["methods"]}
    assert ours["methods"] == methods, sorted(methods ^ ours["methods"])[:10]
    # init functions: a package may declare several; IGG keeps one node per package (the first file's)
    functions = {f for f in map(tuple, truth["functions"]) if f[1] != "init"}
    assert {f for f in ours["functions"] if f[1] != "init"} == functions
    calls, expected = _calls(model), _oracle_calls(truth)
    precision, recall, _ = f1(calls, expected)
    print(
        f"{project}: CALLS precision {precision:.3f} recall {recall:.3f} ({len(calls)} ours, {len(expected)} "
        "the checker's)"
    )
    assert precision >= 0.95, sorted(calls - expected)[:10]
    implements, implemented = _implements(model), {tuple(i) for i in truth["implements"]}
    precision, recall, _ = f1(implements, implemented)
    print(
        f"{project}: IMPLEMENTS precision {precision:.3f} recall {recall:.3f} ({len(implemented)} the"
        " checker's)"
    )
    assert precision >= 0.95, sorted(implements - implemented)[:10]


CALLS = {
    "go.mod": "module example.com/calls\n\ngo 1.19\n",
    "shapes/shapes.go": "\n".join(
        [
            "package shapes",
            "",
            'import "fmt"',
            "",
            "type Shape interface {",
            "\tArea() float64",
            "\tName() string",
            "}",
            "",
            "type Named interface {",
            "\tName() string",
            "}",
            "",
            "type Sized interface {",
            "\tNamed",
            "\tArea() float64",
            "}",
            "",
            "type Mover interface{ Move(dx, dy int) (int, error) }",
            "",
            "type base struct{ label string }",
            "",
            "func (b base) Name() string { return b.label }",
            "",
            "type Rect struct {",
            "\tbase",
            "\tW, H float64",
            "\tinner *Rect",
            "\tparts []*Rect",
            "\tbyName map[string]Rect",
            "}",
            "",
            "func NewRect(w, h float64) *Rect { return &Rect{W: w, H: h} }",
            "",
            "func (r *Rect) Area() float64 { return r.W * r.H }",
            "",
            "func (r *Rect) Move(dx int, dy int) (int, error) { return dx + dy, nil }",
            "",
            "func (r *Rect) Grow() *Rect { r.W++; return r }",
            "",
            "func (r *Rect) Total() float64 {",
            "\tsum := r.Area() + r.inner.Area() + r.Name2()",
            "\tfor _, p := range r.parts {",
            "\t\tsum += p.Area()",
            "\t}",
            "\tfor k, v := range r.byName {",
            "\t\t_ = k",
            "\t\tsum += v.Grow().Area()",
            "\t}",
            "\tsum += r.parts[0].Grow().Area()",
            "\tfunc(r int) { fmt.Println(r) }(1)",
            "\treturn sum + Describe(r)",
            "}",
            "",
            "func (r Rect) Name2() float64 { return float64(len(r.Name())) }",
            "",
            "type Circle struct{ R float64 }",
            "",
            "func (c Circle) Area() float64 { return 3 * c.R * c.R }",
            "",
            'func (c Circle) Name() string { return "circle" }',
            "",
            "type Wrong struct{}",
            "",
            "func (Wrong) Move(dx, dy int) int { return 0 }",
            "",
            "func Describe(s Shape) float64 { return s.Area() }",
            "",
            "var Default = NewRect(1, 1)",
            "",
            "var unit = &Rect{W: 1}",
            "",
            "var typed Shape",
            "",
            "func Unit() float64 { return unit.Area() + typed.Area() + Default.inner.Area() }",
            "",
            "func Total[T Shape](xs []T) float64 {",
            "\tt := 0.0",
            "\tfor _, x := range xs {",
            "\t\tt += x.Area()",
            "\t}",
            "\treturn t",
            "}",
            "",
        ]
    ),
    "app/app.go": "\n".join(
        [
            "package app",
            "",
            "import (",
            '\t"example.com/calls/shapes"',
            '\tsh "example.com/calls/shapes"',
            ")",
            "",
            "type Service struct {",
            "\tmain  *shapes.Rect",
            "\tshape shapes.Shape",
            "}",
            "",
            "func (s *Service) Run() float64 {",
            "\tr := shapes.NewRect(1, 2)",
            "\tvar c shapes.Circle",
            "\tq := &shapes.Rect{}",
            "\tn := new(shapes.Rect)",
            "\tvar g shapes.Shape = c",
            "\tshapes := []int{1}",
            "\t_ = shapes",
            (
                "\ttotal := r.Area() + c.Area() + q.Grow().Area() + n.Area() + g.Area() + s.main.Area() +"
                " s.shape.Area()"
            ),
            "\tif r, ok := g.(shapes2); ok {",
            "\t\ttotal += r.Area()",
            "\t}",
            "\ttotal += sh.Total([]shapes2{c})",
            "\ttotal += helper(s)",
            "\tx, err := r.Move(1, 2)",
            "\t_, _ = x, err",
            "\treturn total + sh.NewRect(3, 4).Grow().Total()",
            "}",
            "",
            "type shapes2 = sh.Shape",
            "",
            "func helper(s *Service) float64 {",
            "\tvar helper = func() float64 { return 1 }",
            "\treturn helper() + s.Run() + sh.Default.Grow().Area()",
            "}",
            "",
        ]
    ),
}


def test_calls_are_the_ones_the_checker_resolves(tmp_path: Path) -> None:
    """Package functions (through an alias too), methods of receivers, parameters, locals declared or built as
    T{}, &T{}, new(T), a constructor's result, fields (promoted through embedding), ranges over slices and
    maps, index expressions, call chains, interface methods, package-level variables (of this package or
    another); a local shadowing a package, a function or a receiver is never read as one."""
    root = _write(tmp_path / "calls", CALLS)
    model, _ = _map(root)
    truth = program(root, go_list(root))
    ours, expected = _calls(model), _oracle_calls(truth)
    precision, recall, _ = f1(ours, expected)
    print(f"calls: CALLS precision {precision:.3f} recall {recall:.3f} ({len(expected)} calls)")
    assert ours <= expected, sorted(ours - expected)
    assert recall >= 0.9, sorted(expected - ours)
    implements, implemented = _implements(model), {tuple(i) for i in truth["implements"]}
    assert implements == implemented, (sorted(implements - implemented), sorted(implemented - implements))
    extends = {
        (model.symbols[r.source].properties["name"], model.symbols[r.target].properties["name"])
        for p in model.files
        for r in p.relations
        if r.label == "EXTENDS"
    }
    assert extends == {("Rect", "base"), ("Sized", "Named")}


def _igg(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300
    )


def test_map_code_reads_go_beside_other_languages_and_counts_them(tmp_path: Path) -> None:
    _write(
        tmp_path / "poly",
        {
            **{f"svc/{k}": v for k, v in CALLS.items()},
            "svc/db/db.go": (
                "package db\n\nconst q = `SELECT id FROM users WHERE id = $1`\n\n"
                "func Load() string { return q }\n\nfunc Save() string "
                '{ return "INSERT INTO users (id) VALUES ($1)" }\n'
            ),
            "tools/report.py": "def q():\n    return 'SELECT id FROM users WHERE a = 1'\n",
        },
    )
    done = _igg(
        "map-code", "poly", "--no-store", "--json", "--quiet", "--export", "json:out.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["map_code"]["files"]["by_language"] == {"python": 1, "go": 4}
    doc = json.loads((tmp_path / "out.json").read_text())
    names = {n["id"]: n["properties"].get("name") for n in doc["nodes"]}
    table = next(n["id"] for n in doc["nodes"] if n["type"] == "DatabaseTable")
    assert {(names[e["from"]], e["type"]) for e in doc["edges"] if e["to"] == table} == {
        ("Load", "READS_FROM"),
        ("Save", "WRITES_TO"),
        ("q", "READS_FROM"),
    }
    only = _igg("map-code", "poly", "--no-store", "--json", "--quiet", "--languages", "go", cwd=tmp_path)
    assert json.loads(only.stdout)["map_code"]["files"]["by_language"] == {"go": 4}


def test_a_file_that_does_not_parse_is_partial_and_the_map_goes_on(tmp_path: Path) -> None:
    _write(
        tmp_path / "bad",
        {
            "go.mod": "module example.com/bad\n",
            "ok.go": "package bad\n\nfunc OK() { Broken() }\n",
            "broken.go": 'package bad\n\nimport "fmt"\n\nfunc Broken( { fmt.Println(\n',
        },
    )
    done = _igg("map-code", "bad", "--no-store", "--json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    partial = {p["path"]: p["error"] for p in json.loads(done.stdout)["map_code"]["files"]["partial"]}
    assert partial["broken.go"].startswith("syntax error") and "ok.go" not in partial
