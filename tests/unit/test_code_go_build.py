"""What a Go build reads (``igg.codemap.go.build``), without a toolchain: build constraints evaluated as
``go/build`` evaluates them for a given context, folder import paths from ``go.mod``, ``go.mod``/``go.work``
directives, and the import lines of a file the analyzer could not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from igg.codemap.go import LANGUAGE
from igg.codemap.go.build import Context, constraint, evaluate, excluded, import_paths, read_mod
from igg.codemap.go.link import guessed_name
from igg.codemap.walk import walk

LINUX = Context(goos="linux", goarch="amd64", cgo=True, release=19)
WINDOWS = Context(goos="windows", goarch="arm64", cgo=False, release=23)


@pytest.mark.parametrize(
    ("expression", "linux", "windows"),
    [
        ("linux", True, False),
        ("!windows && amd64", True, False),
        ("(linux || windows) && !cgo", False, True),
        ("unix", True, False),
        ("go1.19 && !go1.20", True, False),
        ("go1.21", False, True),
        ("ignore", False, False),
        ("tools || purego", False, False),
        ("!(darwin || ios)", True, True),
        ("arm64 && windows", False, True),
    ],
)
def test_build_expressions_hold_as_go_build_evaluates_them(
    expression: str, linux: bool, windows: bool
) -> None:
    assert evaluate(expression, LINUX.tag) is linux
    assert evaluate(expression, WINDOWS.tag) is windows


def test_plus_build_lines_are_read_as_go_fix_rewrites_them() -> None:
    assert (
        constraint("// +build linux,386 darwin,!cgo\n\npackage x\n") == "(linux && 386) || (darwin && !cgo)"
    )
    assert (
        constraint("// Copyright.\n\n// +build linux darwin\n// +build !purego\n\npackage x\n")
        == "(linux || darwin) && !purego"
    )
    assert constraint("//go:build linux\n// +build darwin\n\npackage x\n") == "linux"  # go:build wins
    assert constraint("/* a\n block */\n//go:build ignore\n\npackage x\n") == "ignore"
    assert constraint("package x\n\n//go:build ignore\n") is None  # after the package clause: a comment


@pytest.mark.parametrize(
    ("path", "on_linux", "on_windows"),
    [
        ("a/x_windows.go", False, True),
        ("a/x_linux_test.go", True, False),
        ("a/x_arm64.go", False, True),
        ("a/x_windows_amd64.go", False, False),
        ("a/windows.go", True, True),  # the whole name is no suffix
        ("a/x_unix.go", True, True),  # unix is a build tag, not a file-name suffix
        ("a/testdata/x.go", False, False),
        ("a/_old/x.go", False, False),
        ("a/.hidden/x.go", False, False),
        ("a/_x.go", False, False),
    ],
)
def test_file_names_and_folders_decide_as_go_list(path: str, on_linux: bool, on_windows: bool) -> None:
    assert (excluded(path, "package x\n", LINUX) is None) is on_linux
    assert (excluded(path, "package x\n", WINDOWS) is None) is on_windows


def test_a_folder_is_named_by_the_nearest_go_mod_above_it() -> None:
    mods = {"go.mod": "module example.com/top // the top\n", "tools/go.mod": 'module "example.com/tools"\n'}
    paths = ["main.go", "internal/db/db.go", "tools/gen/gen.go", "tools/t.go"]
    assert import_paths(paths, mods, {}) == {
        "main.go": "example.com/top",
        "internal/db/db.go": "example.com/top/internal/db",
        "tools/gen/gen.go": "example.com/tools/gen",
        "tools/t.go": "example.com/tools",
    }
    loose = import_paths(["cmd/x/main.go", "main.go"], {}, {"main.go": "// doc\npackage app\n"})
    assert loose == {"cmd/x/main.go": "cmd/x", "main.go": "app"}


def test_go_mod_and_go_work_directives_are_read() -> None:
    mod = read_mod(
        "\n".join(
            [
                "module example.com/svc",
                "",
                "go 1.21",
                "",
                "require (",
                "\tgithub.com/a/b v1.2.3 // indirect",
                "\tgolang.org/x/mod v0.14.0",
                ")",
                "require github.com/c/d v0.1.0",
                "",
                "replace example.com/lib => ../lib",
                "replace github.com/a/b v1.2.3 => github.com/fork/b v1.2.4",
                "",
            ]
        )
    )
    assert mod["module"] == "example.com/svc" and mod["go"] == "1.21"
    assert mod["require"] == ["github.com/a/b", "github.com/c/d", "golang.org/x/mod"]
    assert mod["replace"] == {"example.com/lib": "../lib"}  # only local replacements point into a tree
    work = read_mod("go 1.21\n\nuse (\n\t./svc\n\t./lib // shared\n)\nuse ./tools\n")
    assert work["use"] == ["./lib", "./svc", "./tools"]


def test_a_file_the_analyzer_cannot_read_still_gives_its_package_and_imports() -> None:
    text = 'package store_test\n\nimport (\n\t"fmt"\n\tdb "database/sql"\n)\n\nimport "os"\n\nfunc {{{\n'
    facts = LANGUAGE.header("store/x_test.go", text, "example.com/app/store")
    assert facts.package == "example.com/app/store_test"
    assert [(i.target, i.alias, i.line) for i in facts.imports] == [
        ("fmt", None, 4),
        ("database/sql", "db", 5),
        ("os", None, 8),
    ]


def test_an_outside_package_binds_the_name_it_most_likely_declares() -> None:
    assert [
        guessed_name(p)
        for p in ("github.com/go-chi/chi/v5", "gopkg.in/yaml.v3", "github.com/mattn/go-sqlite3", "net/http")
    ] == ["chi", "yaml", "sqlite3", "http"]


def test_the_name_of_a_mapped_root_excludes_nothing(tmp_path: Path) -> None:
    """Several roots are reported under their names; a root named like a folder go ignores (``_scratch``) is
    still read, as ``go list`` run inside it reads it."""
    for root, name in (("_scratch", "a.go"), ("svc", "b.go"), ("svc/testdata", "c.go")):
        (tmp_path / root).mkdir(parents=True, exist_ok=True)
        (tmp_path / root / name).write_text("package x\n")
    walked = walk([tmp_path / "_scratch", tmp_path / "svc"], chosen=["go"])
    assert [f.path for f in walked.files] == ["_scratch/a.go", "svc/b.go"]
    assert [s.path for s in walked.skipped] == ["svc/testdata/c.go"]


def test_go_files_parsed_again_keep_the_names_the_whole_tree_gave_them(tmp_path: Path) -> None:
    """The facts cache parses only the files it lacks, and those are named again as a batch when one of them
    is in a language that names none (TypeScript): Go then named its files without the tree's ``go.mod``
    (``tool/main.go``, not ``example.com/tool/main.go``), so an update or a ``--since`` that re-parsed a Go
    and a TypeScript file renamed the Go module."""
    from dataclasses import replace

    from igg.codemap.cache import FactsCache
    from igg.mapping.prepare import parse_all

    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "go.mod").write_text("module example.com/tool\n\ngo 1.21\n", encoding="utf-8")
    (tmp_path / "tool" / "main.go").write_text('package main\n\nimport "fmt"\n', encoding="utf-8")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "app.ts").write_text("import { f } from './lib';\n", encoding="utf-8")
    files = walk([tmp_path]).files
    cache = FactsCache(None)
    first, _ = parse_all(files, cache=cache, jobs=1)
    edited = [
        replace(f, text=f.text + "\n// edited\n") if f.path.endswith((".go", ".ts")) else f for f in files
    ]
    again, _ = parse_all(edited, cache=cache, jobs=1, counts=(counts := {}))
    assert counts["parsed"] == 2  # main.go and app.ts; go.mod from the cache
    fresh, _ = parse_all(edited, jobs=1)
    modules = {f.path: f.module for f in again}
    assert modules == {f.path: f.module for f in fresh} == {f.path: f.module for f in first}
    assert modules["tool/main.go"].startswith("example.com/tool")
