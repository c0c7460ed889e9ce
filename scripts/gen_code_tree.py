"""Generate a synthetic source tree for benchmarks: Java, Python, TypeScript and Go files that reference each
other.

Each Java file declares a class (or every fifth an interface) in one of ``packages`` packages, with fields of
other generated types, overloaded methods, calls on fields, static calls, ``this``/``super`` calls and SQL in
string literals; each Python module declares classes and functions that import, call and instantiate each
other. Each TypeScript module exports an interface, a class implementing it and a function, importing
classes and functions of other modules (relative imports, across packages); each Go file declares a struct
with methods and a function in one of the packages of one Go module (``go.mod``), calling into other files of
its package and into packages below it (no import cycles, as Go requires). TypeScript and Go modules depend on
a few hubs (one module in a hundred) more than on the others, so fan-in is skewed as in a real monorepo.
Deterministic for a given seed. Usage:
``python scripts/gen_code_tree.py OUT_DIR [--files N] [--languages java,python,typescript,go]``
(default: Java and Python, 60% and 40%; with ``--languages`` the files are split evenly).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

TABLES = [
    "users",
    "orders",
    "payments",
    "sessions",
    "audit_log",
    "items",
    "roles",
    "tokens",
    "carts",
    "events",
]


def _java(i: int, n: int, rng: random.Random, packages: int) -> tuple[str, str]:
    pkg = f"com.bench.p{i % packages}"
    name = f"C{i}"
    deps = sorted({rng.randrange(n) for _ in range(3)} - {i})
    if i % 5 == 4:
        methods = "\n".join(
            f"    String m{k}(String a);\n    String m{k}(String a, int b);" for k in range(3)
        )
        return (
            f"{pkg.replace('.', '/')}/{name}.java",
            f"package {pkg};\n\npublic interface {name} {{\n{methods}\n}}\n",
        )
    imports = "\n".join(f"import com.bench.p{d % packages}.C{d};" for d in deps)
    fields = "\n".join(f"    private C{d} f{d};" for d in deps)
    base = f" extends C{deps[0]}" if deps and deps[0] % 5 != 4 and deps[0] < i else ""
    impl = next((f" implements C{d}" for d in deps if d % 5 == 4), "")
    body = []
    for k in range(4):
        calls = []
        for d in deps:
            calls.append(f"        f{d}.m{rng.randrange(3)}(a{', 1' if rng.random() < 0.5 else ''});")
        table = rng.choice(TABLES)
        sql = rng.choice(
            [
                f'"SELECT id FROM {table} WHERE id = ?"',
                f'"INSERT INTO {table} (id) VALUES (?)"',
                f'"UPDATE {table} SET v = ? WHERE id = ?"',
                f'"DELETE FROM {table} WHERE id = ?"',
            ]
        )
        body.append(
            f"    public String m{k}(String a) {{\n"
            + "\n".join(calls)
            + f"\n        String q = {sql};\n        this.m{k}(a, {k});\n        return helper(a);\n    }}"
        )
        body.append(
            f"    public String m{k}(String a, int b) {{\n        return Util{i % packages}.h(a);\n    }}"
        )
    body.append("    static String helper(String a) {\n        return a;\n    }")
    text = (
        f"package {pkg};\n\n{imports}\n\npublic class {name}{base}{impl} {{\n{fields}\n\n"
        + "\n\n".join(body)
        + "\n}\n"
    )
    return f"{pkg.replace('.', '/')}/{name}.java", text


def _python(i: int, n: int, rng: random.Random, packages: int) -> tuple[str, str]:
    pkg = f"benchpy.p{i % packages}"
    deps = sorted({rng.randrange(n) for _ in range(3)} - {i})
    imports = "\n".join(f"from benchpy.p{d % packages}.m{d} import K{d}, f{d}" for d in deps)
    methods = []
    for k in range(4):
        calls = "\n".join(f"        self.k{d}.run{rng.randrange(3)}(x)\n        f{d}(x)" for d in deps)
        table = rng.choice(TABLES)
        methods.append(
            f"    def run{k}(self, x: int) -> int:\n{calls or '        pass'}\n"
            f'        self.db.execute("SELECT * FROM {table} WHERE id = %s", (x,))\n'
            f"        return self.run{(k + 1) % 4}(x) if x else 0"
        )
    init = "\n".join(f"        self.k{d} = K{d}()" for d in deps)
    text = (
        f"{imports}\n\n\nclass K{i}:\n    def __init__(self, db=None) -> None:\n        self.db ="
        f" db\n{init}\n\n"
        + "\n\n".join(methods)
        + f"\n\n\ndef f{i}(x: int) -> int:\n    return K{i}().run0(x)\n"
    )
    return f"{pkg.replace('.', '/')}/m{i}.py", text


LANGUAGES = ("java", "python", "typescript", "go")
GO_MODULE = "bench.example/mono"


def _deps(i: int, n: int, rng: random.Random, fan_out: int = 3) -> list[int]:
    """The modules module ``i`` of ``n`` depends on: one hub (the first ``n // 100``) more often than not,
    and the rest at random."""
    hubs = max(1, n // 100)
    found = {rng.randrange(hubs)} if rng.random() < 0.7 else set()
    found.update(rng.randrange(n) for _ in range(fan_out))
    return sorted(found - {i})


def _typescript(i: int, n: int, rng: random.Random, packages: int) -> tuple[str, str]:
    pkg = i % packages
    deps = _deps(i, n, rng)
    imports = "\n".join(
        f'import {{ K{d}, f{d} }} from "{"." if d % packages == pkg else f"../p{d % packages}"}/m{d}";'
        for d in deps
    )
    fields = "\n".join(f"  private k{d} = new K{d}();" for d in deps)
    methods = []
    for k in range(4):
        calls = "\n".join(f"    this.k{d}.run{rng.randrange(4)}(x);\n    f{d}(x);" for d in deps)
        methods.append(
            f"  run{k}(x: number): number {{\n{calls}\n"
            f"    return x > 0 ? this.run{(k + 1) % 4}(x - 1) : 0;\n  }}"
        )
    text = (
        f"{imports}\n\nexport interface I{i} {{\n  run0(x: number): number;\n}}\n\n"
        f"export class K{i} implements I{i} {{\n{fields}\n\n"
        + "\n\n".join(methods)
        + f"\n}}\n\nexport function f{i}(x: number): number {{\n  return new K{i}().run0(x);\n}}\n"
    )
    return f"src/p{pkg}/m{i}.ts", text


def _go(i: int, n: int, rng: random.Random, packages: int) -> tuple[str, str]:
    pkg = i % packages
    deps = []
    for d in _deps(i, n, rng):
        if d % packages > pkg:  # only packages below this one (or its own): Go forbids import cycles
            d -= d % packages - pkg
        if d != i and d >= 0 and d not in deps:
            deps.append(d)

    def name(d: int, what: str) -> str:
        return what if d % packages == pkg else f"p{d % packages}.{what}"

    imported = sorted({d % packages for d in deps} - {pkg})
    imports = (
        "import (\n" + "\n".join(f'\t"{GO_MODULE}/p{k}"' for k in imported) + "\n)\n\n" if imported else ""
    )
    fields = "\n".join(f"\tk{d} *{name(d, f'T{d}')}" for d in deps)
    methods = []
    for k in range(4):
        calls = "\n".join(f"\tt.k{d}.Run{rng.randrange(4)}(x)\n\t{name(d, f'F{d}')}(x)" for d in deps)
        methods.append(
            f"func (t *T{i}) Run{k}(x int) int {{\n{calls}\n\tif x > 0 {{\n"
            f"\t\treturn t.Run{(k + 1) % 4}(x - 1)\n\t}}\n\treturn 0\n}}"
        )
    text = (
        f"package p{pkg}\n\n{imports}// T{i} is generated.\ntype T{i} struct {{\n{fields}\n}}\n\n"
        f"// NewT{i} makes a T{i}.\nfunc NewT{i}() *T{i} {{\n\treturn &T{i}{{}}\n}}\n\n"
        + "\n\n".join(methods)
        + f"\n\n// F{i} runs a T{i}.\nfunc F{i}(x int) int {{\n\treturn NewT{i}().Run0(x)\n}}\n"
    )
    return f"p{pkg}/f{i}.go", text


def generate(
    out: Path,
    files: int = 1200,
    packages: int | None = None,
    seed: int = 7,
    languages: tuple[str, ...] = ("java", "python"),
) -> list[Path]:
    """Write ``files`` source files under ``out`` (Java and Python: 60% and 40%; other ``languages``: split
    evenly, each in its own folder) in ``packages`` packages per language (default: 20, or one per 250 files
    of a language); returns their paths."""
    if set(languages) == {"java", "python"}:
        return _java_and_python(out, files, packages or max(20, files * 3 // 5 // 250), seed)
    rng = random.Random(seed)
    written: list[Path] = []
    share = [files // len(languages) + (k < files % len(languages)) for k in range(len(languages))]
    for language, count in zip(languages, share, strict=True):
        per = packages or max(20, count // 250)
        if language in ("java", "python"):
            written.extend(_java_and_python(out, count, per, seed, only=language))
        elif language == "typescript":
            _write(out / "ts" / "tsconfig.json", '{"compilerOptions": {"strict": true}}\n')
            for i in range(count):
                rel, text = _typescript(i, count, rng, per)
                written.append(_write(out / "ts" / rel, text))
        elif language == "go":
            _write(out / "go" / "go.mod", f"module {GO_MODULE}\n\ngo 1.21\n")
            for i in range(count):
                rel, text = _go(i, count, rng, per)
                written.append(_write(out / "go" / rel, text))
        else:
            raise SystemExit(
                f"gen_code_tree: no generator for {language!r}; languages: {', '.join(LANGUAGES)}"
            )
    return written


def _java_and_python(out: Path, files: int, packages: int, seed: int, only: str | None = None) -> list[Path]:
    """Java and Python files (60% and 40%; ``only``: all of them in that language)."""
    rng = random.Random(seed)
    java_n = files * 3 // 5 if only is None else files if only == "java" else 0
    py_n = files - java_n
    written = []
    for i in range(java_n):
        rel, text = _java(i, java_n, rng, packages)
        written.append(_write(out / "java" / rel, text))
    for p in range(packages if java_n else 0):
        written.append(
            _write(
                out / "java" / f"com/bench/p{p}/Util{p}.java",
                f"package com.bench.p{p};\n\npublic final class Util{p} {{\n"
                "    public static String h(String a) {\n        return a;\n    }\n}\n",
            )
        )
    if py_n:
        for p in range(packages):
            _write(out / "python" / f"benchpy/p{p}/__init__.py", "")
        _write(out / "python" / "benchpy/__init__.py", "")
    for i in range(py_n - packages):
        rel, text = _python(i, py_n - packages, rng, packages)
        written.append(_write(out / "python" / rel, text))
    return written


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=1200)
    parser.add_argument(
        "--languages",
        default="java,python",
        help=f"comma-separated, of {','.join(LANGUAGES)} (default java,python: 60%% and 40%%)",
    )
    args = parser.parse_args()
    written = generate(args.out, args.files, languages=tuple(args.languages.split(",")))
    print(f"wrote {len(written)} source files under {args.out}")


if __name__ == "__main__":
    main()
