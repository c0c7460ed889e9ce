"""Generate a synthetic source tree for benchmarks: Java and Python files that reference each other.

Each Java file declares a class (or every fifth an interface) in one of ``packages`` packages, with fields of
other generated types, overloaded methods, calls on fields, static calls, ``this``/``super`` calls and SQL in
string literals; each Python module declares classes and functions that import, call and instantiate each
other. Deterministic for a given seed. Usage: ``python scripts/gen_code_tree.py OUT_DIR [--files N]``.
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


def generate(out: Path, files: int = 1200, packages: int = 20, seed: int = 7) -> list[Path]:
    """Write ``files`` source files (60% Java, 40% Python) under ``out``; returns their paths."""
    rng = random.Random(seed)
    java_n = files * 3 // 5
    py_n = files - java_n
    written = []
    for i in range(java_n):
        rel, text = _java(i, java_n, rng, packages)
        written.append(_write(out / "java" / rel, text))
    for p in range(packages):
        written.append(
            _write(
                out / "java" / f"com/bench/p{p}/Util{p}.java",
                f"package com.bench.p{p};\n\npublic final class Util{p} {{\n"
                "    public static String h(String a) {\n        return a;\n    }\n}\n",
            )
        )
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
    args = parser.parse_args()
    written = generate(args.out, args.files)
    print(f"wrote {len(written)} source files under {args.out}")


if __name__ == "__main__":
    main()
