"""Benchmark code maps of a monorepo: a generated tree of ``--files`` files in Python, Java, TypeScript and Go
(``gen_code_tree --languages``), in a git repository whose last commit changed one file.

Each command runs as the user runs it, ``python -m igg ...`` in a subprocess, timed by the wall clock:

- a fresh ``igg map-code TREE --store S`` (with limits raised to fit the tree), and its peak memory: the
  largest resident set of a child process (``resource.getrusage(RUSAGE_CHILDREN)``, which covers the parse
  processes too, each on its own);
- a no-op ``--update`` after the map, ``--update`` after one file changed (a body edit that leaves its facts
  as they were, committed: ``igg.mapping.samefacts``), and a no-op ``--update`` after that (five times:
  their median is the figure);
- ``igg check TREE --store S --since HEAD~1 --new-only`` with a few rules: the first check of the tree, which
  takes the graph of imports the map kept (``igg.mapping.kept.keep_mapped``); again with that graph dropped
  from the cache (``check_since_unkept``: the tree is walked, its facts read and linked); and after another
  body edit is committed: that check takes the graph the one before kept (``igg.mapping.kept``) and judges
  ``HEAD~1`` by it (``igg.mapping.since.same_at_commit``);
- ``--update`` after a comment line added on top of a function's body (its lines move, the facts keep the
  rest: ``igg.mapping.samefacts`` moves the lines of the elements that hold them; the graph is compared with a
  fresh map's at once, as a later update of every Python file would mend a wrong line), after a call added to
  a TypeScript method (``igg.mapping.bodies``: the file linked alone against the TypeScript files), after a
  call added to a Go function saved by a rename over the file (as editors that save safely and ``git
  checkout`` save: its folder's time moves, its listing does not), after a call added to a Python function
  (its value flows change: the program is solved again, and the files whose calls changed linked again), after
  a function added to a file of each language (a declaration: the files naming it linked with it, those of its
  language read, the census telling whether another language's symbol holds its identity; the TypeScript one
  exported, and ``check --since`` timed after it: a link of imports reads no export, so the kept graph
  answers), after an import added to a TypeScript and a Python file (``check --since`` timed after each: the
  file's edges spliced into the kept graph, ``igg.mapping.spliced``, and ``HEAD~1`` judged by the keys of the
  violations the check before kept), after a TypeScript and a Python file added beside others (the files that
  name what it declares or import its path linked with it, their elements alone loaded: ``igg.mapping.added``;
  in Python the program solved again; ``check --since`` timed after each: the file spliced into the kept
  graph with the files whose imports may find it), after each of them removed (the files that named it linked
  without it, once every file that holds an edge to its nodes is among them; ``check --since`` timed too), and
  after a TypeScript module others import
  renamed, each committed, with the peak memory of that process alone (``PEAK``), and whether the graph still
  equals a fresh map's;
- whether the updated session's graph equals the graph a fresh map of the new tree builds, element ids
  aside: what the static agent places of the linked tree (``igg.mapping.difference.desired_graph``, the nodes
  and edges a fresh map proposes), read in this process with the facts cache, against the stored session's
  graph (a second fresh map through the loop would take as long as the first).

Targets of issue 49: peak <= 4 GB, one-file update <= 2 s (the body edit, the lines moved, the TypeScript,
Go and Python calls), no-op update <= 0.5 s, check --since <= 3 s. Prints one JSON object (each figure goes to
stderr as soon as it is measured). Usage: ``python scripts/bench_scale.py [--files 50000] [--keep DIR]
[--mapped]``: ``--keep DIR`` generates the tree in DIR (an existing one is used again) and keeps it;
``--mapped`` starts after the fresh map, from DIR's store (a finished map of the tree).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_code_tree import generate  # noqa: E402

RULES = """
[[rules]]
name = "acyclic-packages"
kind = "acyclic"
level = "package"
[[rules]]
name = "py-independent"
kind = "independence"
modules = ["benchpy.p3", "benchpy.p4"]
"""
TARGETS = {
    "peak_rss_mb": 4096,
    "update_one_file_s": 2.0,
    "update_one_file_lines_moved_s": 2.0,
    "update_typescript_call_added_s": 2.0,
    "update_go_call_added_renamed_s": 2.0,
    "update_python_call_added_s": 2.0,
    "update_ts_function_added_s": 2.0,
    "update_go_function_added_s": 2.0,
    "update_java_function_added_s": 2.0,
    "update_py_function_added_s": 2.0,
    "update_ts_import_added_s": 2.0,
    "update_py_import_added_s": 2.0,
    "update_ts_file_added_s": 2.0,
    "update_py_file_added_s": 2.0,
    "update_ts_file_removed_s": 2.0,
    "update_py_file_removed_s": 2.0,
    "update_ts_file_renamed_s": 2.0,
    "update_noop_s": 0.5,
    "check_since_s": 3.0,
    "check_since_kept_s": 3.0,
    "check_since_export_added_s": 3.0,
    "check_since_export_in_turn_s": 3.0,
    "check_since_ts_import_added_s": 3.0,
    "check_since_py_import_added_s": 3.0,
    "check_since_ts_file_added_s": 3.0,
    "check_since_ts_file_removed_s": 3.0,
    "check_since_py_file_added_s": 3.0,
    "check_since_py_file_removed_s": 3.0,
}
FUNCTIONS_ADDED = {
    "ts": ("m2*.ts", "\nexport function addedByTheBench(n: number): number {\n  return n + 1;\n}\n"),
    "go": ("f2*.go", "\nfunc AddedByTheBench(n int) int {\n\treturn n + 1\n}\n"),
    "java": ("C2*.java", "    public int addedByTheBench(int n) {\n        return n + 1;\n    }\n"),
    "py": ("m2*.py", "\n\ndef added_by_the_bench(n):\n    return n + 1\n"),
}
"""A function (a method in Java, before the class's closing brace) added at the end of a file of each
language, by its name's pattern (a tree kept with ``--keep`` may hold one: the name is numbered then)."""
LIMITS = ["--max-nodes", "100000000", "--max-edges", "1000000000"]
NOOP_RUNS = 5
"""No-op updates timed after the one-file update (their median is the figure)."""


FILES_ADDED = {"ts": "m4*.ts", "py": "m4*.py"}
"""A module of each language (by its name's pattern) copied beside itself under another name: a file added
(``igg.mapping.added``)."""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        check=True,
        capture_output=True,
    )


def igg(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    """Run ``python -m igg ARGS``; (wall seconds, stdout)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(f"igg {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return wall, done.stdout


def same_as_fresh(tree: Path, store: Path) -> bool:
    """Whether the stored map-code session of ``store`` holds the graph a fresh map of ``tree`` builds,
    element ids aside (see the module doc)."""
    from igg.agents.code.mapping import SchemaFit
    from igg.codemap.cache import FactsCache
    from igg.mapping.difference import desired_graph
    from igg.mapping.prepare import prepare
    from igg.store import SessionStore
    from igg.store.location import sidecar_path

    sid = next(i.session_id for i in SessionStore(store).sessions() if i.agent == "code")
    _, state, _ = SessionStore(store).load_state(sid)
    cache = FactsCache(sidecar_path(store, ".codefacts"))
    try:
        codemap = prepare([tree], cache=cache)
    finally:
        cache.close()
    nodes, edges = desired_graph(SchemaFit(codemap.model, state.schema))
    key = {
        n: (state.node_type(n), state.identity(state.node_type(n), state.node_properties(n)))
        for n in state.graph.nodes
    }
    have_nodes = {key[n]: state.node_properties(n) for n in state.graph.nodes}
    have_edges = {(d["type"], key[u], key[v]): d["properties"] or {} for _, u, v, d in state.edges()}
    return have_nodes == {k: dict(v) for k, v in nodes.items()} and have_edges == {
        k: dict(v) for k, v in edges.items()
    }


PEAK = (
    "import os, subprocess, sys; child = subprocess.Popen(sys.argv[2:]); "
    "_, status, usage = os.wait4(child.pid, 0); open(sys.argv[1], 'w').write(str(usage.ru_maxrss)); "
    "sys.exit(os.waitstatus_to_exitcode(status))"
)
"""Runs a command and writes its peak resident set (KiB) to a file: a process started from this one would
report this one's size as its peak (Linux keeps the largest resident set across ``exec``, and this process
grows to a fresh map's size in ``same_as_fresh``), a process started from that small one does not."""


def igg_peak(*args: str, cwd: Path) -> tuple[float, str, int]:
    """``igg`` run alone: (wall seconds, stdout, the peak resident set of that process in MiB)."""
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp) / "peak"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", PEAK, str(peak), sys.executable, "-m", "igg", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"igg {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
        return wall, done.stdout, round(int(peak.read_text()) / 1024)


def call_edit(path: Path) -> None:
    """Add a call to a function's body (a Python file's value flows change: every Python file is linked
    again)."""
    text = path.read_text(encoding="utf-8")
    call = re.search(r"^        (f\d+)\(x\)$", text, re.MULTILINE)
    assert call is not None, path
    at = call.end()
    path.write_text(f"{text[:at]}\n        {call.group(1)}(x + 1){text[at:]}", encoding="utf-8")


def ts_call_edit(path: Path) -> None:
    """Add a call to a TypeScript method's body (no declaration, no import: ``igg.mapping.bodies`` links the
    file alone and loads its elements)."""
    text = path.read_text(encoding="utf-8")
    call = re.search(r"^    (f\d+)\(x\);$", text, re.MULTILINE)
    assert call is not None, path
    at = call.end()
    path.write_text(f"{text[:at]}\n    {call.group(1)}(x + 1);{text[at:]}", encoding="utf-8")


def go_call_edit(path: Path) -> None:
    """Add a call to a Go function's body, saved as editors that save safely, ``git checkout`` and ``sed -i``
    save: a new file renamed over it (its folder's time moves, its listing does not: the tree's index lists it
    again and the update goes on as for a file written in place)."""
    text = path.read_text(encoding="utf-8")
    call = re.search(r"^\t((?:\w+\.)?F\d+)\(x\)$", text, re.MULTILINE)
    assert call is not None, path
    at = call.end()
    new = path.with_name(f".{path.name}.swp")
    new.write_text(f"{text[:at]}\n\t{call.group(1)}(x + 1){text[at:]}", encoding="utf-8")
    os.replace(new, path)


IMPORTS_ADDED = {
    "ts": (
        "m5*.ts",
        re.compile(r'^import \{ K\d+, (f\d+) \} from ("[^"]+");$', re.MULTILINE),
        "import {{ {0} as fByTheBench }} from {1};",
    ),
    "py": (
        "m5*.py",
        re.compile(r"^from ([\w.]+) import K\d+, (f\d+)$", re.MULTILINE),
        "from {0} import {1} as f_by_the_bench",
    ),
}
"""An import added on top of a file of each language (by its name's pattern): a function another of its
imports names, imported again under a name of its own (the lines below it move); a tree kept with ``--keep``
has it taken away."""


def import_edit(path: Path, language: str) -> None:
    """Add the import ``IMPORTS_ADDED`` makes on top of ``path``, or take it away when it is there."""
    _, pattern, line = IMPORTS_ADDED[language]
    text = path.read_text(encoding="utf-8")
    first = text.split("\n", 1)
    if "ByTheBench" in first[0] or "by_the_bench" in first[0]:
        path.write_text(first[1], encoding="utf-8")
        return
    found = pattern.search(text)
    assert found is not None, path
    path.write_text(line.format(*found.groups()) + "\n" + text, encoding="utf-8")


def timed_update(out: dict[str, Any], name: str, repo: Path, store: Path) -> None:
    """Commit the tree as it is, ``--update`` the map, and keep the figure ``name``."""
    git(repo, "commit", "-q", "-am", name)
    wall, text, peak = igg_peak(
        "map-code", "tree", "--store", str(store), "--update", "--quiet", "--json", cwd=repo
    )
    update = json.loads(text)
    files = {k: v if isinstance(v, int) else len(v) for k, v in update["files"].items()}
    figure = {"wall_s": round(wall, 3), "peak_rss_mb": peak, "files": files, "seconds": update["seconds"]}
    say(out, name, figure)


def body_edit(path: Path) -> None:
    """Change one expression of a function's body (no import, no declaration, no line moves; back again in a
    tree kept from an earlier run)."""
    text = path.read_text(encoding="utf-8")
    then, now = ("if x else 0", "if x else 1") if "if x else 0" in text else ("if x else 1", "if x else 0")
    path.write_text(text.replace(then, now, 1), encoding="utf-8")


def line_edit(path: Path) -> None:
    """Add a comment line on top of a function's body: the lines after it move, and the file's facts are the
    same but for those lines (``igg.mapping.samefacts`` moves them)."""
    text = path.read_text(encoding="utf-8")
    end = text.index("\n", text.index("    def run0(")) + 1
    path.write_text(f"{text[:end]}        # reviewed\n{text[end:]}", encoding="utf-8")


def say(out: dict[str, Any], name: str, value: Any) -> None:
    """Keep a figure and show it at once on stderr."""
    out[name] = value
    print(f"{name}: {json.dumps(value)}", file=sys.stderr, flush=True)


def run(root: Path, files: int, mapped: bool = False) -> dict[str, Any]:
    repo, tree, store = root / "repo", root / "repo" / "tree", root / "map.sqlite"
    out: dict[str, Any] = {}
    if not (repo / ".git").is_dir():
        generate(tree, files=files, languages=("python", "java", "typescript", "go"))
        (repo / "igg.toml").write_text(RULES, encoding="utf-8")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "tree")
    say(out, "files", sum(1 for p in tree.rglob("*") if p.suffix in (".py", ".java", ".ts", ".go")))
    if not mapped:
        wall, text = igg("map-code", "tree", "--store", str(store), *LIMITS, "--quiet", "--json", cwd=repo)
        summary = json.loads(text)
        say(
            out,
            "fresh_map",
            {
                "wall_s": round(wall, 2),
                "nodes": summary["nodes"],
                "edges": summary["edges"],
                "seconds": summary["map_code"]["seconds"],
                "by_language": summary["map_code"]["files"]["by_language"],
            },
        )
        say(out, "peak_rss_mb", round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))

    wall, text = igg("map-code", "tree", "--store", str(store), "--update", "--quiet", "--json", cwd=repo)
    say(out, "update_noop_after_map", {"wall_s": round(wall, 3), "seconds": json.loads(text)["seconds"]})
    body_edit(sorted(tree.rglob("m1*.py"))[0])  # a body edit, committed
    git(repo, "commit", "-q", "-am", "one file changed")
    wall, text = igg("map-code", "tree", "--store", str(store), "--update", "--quiet", "--json", cwd=repo)
    update = json.loads(text)
    files = {k: v if isinstance(v, int) else len(v) for k, v in update["files"].items()}
    say(out, "update_one_file", {"wall_s": round(wall, 3), "files": files, "seconds": update["seconds"]})
    walls = []
    for _ in range(NOOP_RUNS):  # the shortest figure: the median of a few, the machine being shared
        wall, text = igg("map-code", "tree", "--store", str(store), "--update", "--quiet", "--json", cwd=repo)
        walls.append(round(wall, 3))
    say(
        out,
        "update_noop",
        {"wall_s": statistics.median(walls), "runs_s": walls, "seconds": json.loads(text)["seconds"]},
    )

    def timed_check(name: str) -> None:
        wall, text = igg(
            "check",
            "tree",
            "--store",
            str(store),
            "--since",
            "HEAD~1",
            "--new-only",
            "--json",
            cwd=repo,
            ok=(0, 1),
        )
        report = json.loads(text)
        say(
            out,
            name,
            {
                "wall_s": round(wall, 3),
                "violations": len(report["violations"]),
                "kept": report["kept"],
                "baseline": report["baseline"],
            },
        )

    timed_check("check_since")
    with sqlite3.connect(f"{store}.codefacts") as db:  # the graph the map kept, gone: the tree is mapped
        db.execute("DELETE FROM kept")
    timed_check("check_since_unkept")
    say(out, "update_equals_fresh_map", same_as_fresh(tree, store))
    body_edit(sorted(tree.rglob("m2*.py"))[0])  # the next commit: the graph the first check kept answers
    git(repo, "commit", "-q", "-am", "another body edit")
    timed_check("check_since_kept")
    line_edit(sorted(tree.rglob("m1*.py"))[1])
    timed_update(out, "update_one_file_lines_moved", repo, store)
    say(out, "update_lines_moved_equals_fresh_map", same_as_fresh(tree, store))
    ts_call_edit(sorted(tree.rglob("m3*.ts"))[0])
    timed_update(out, "update_typescript_call_added", repo, store)
    go_call_edit(sorted(tree.rglob("f3*.go"))[0])
    timed_update(out, "update_go_call_added_renamed", repo, store)
    call_edit(sorted(tree.rglob("m3*.py"))[0])
    timed_update(out, "update_python_call_added", repo, store)
    for language, (pattern, added) in FUNCTIONS_ADDED.items():  # a declaration: the files naming it linked
        path = sorted(tree.rglob(pattern))[0]
        text = path.read_text(encoding="utf-8")
        n = str(text.count("ByTheBench") + text.count("by_the_bench"))
        named = added.replace("ByTheBench", "ByTheBench" + n).replace("by_the_bench", "by_the_bench" + n)
        at = text.rindex("}") if language == "java" else len(text)
        path.write_text(text[:at] + named + text[at:], encoding="utf-8")
        timed_update(out, f"update_{language}_function_added", repo, store)
        if language == "ts":  # an export added, committed: the graph of imports reads exports
            timed_check("check_since_export_added")
            # the next commit, checked in turn: the graph the last check kept is its parent's
            path.write_text(
                text[:at] + named.replace("ByTheBench", "ByTheBenchNext") + text[at:], encoding="utf-8"
            )
            git(repo, "commit", "-q", "-am", "another export")
            timed_check("check_since_export_in_turn")
            path.write_text(text[:at] + named + text[at:], encoding="utf-8")  # as the map has it
            git(repo, "commit", "-q", "-am", "the export as mapped")
    for language, (pattern, _, _) in IMPORTS_ADDED.items():  # an import: the files naming what it binds
        import_edit(sorted(tree.rglob(pattern))[0], language)
        timed_update(out, f"update_{language}_import_added", repo, store)
        # the import committed, checked in turn: its edges spliced into the kept graph, its parent's
        timed_check(f"check_since_{language}_import_added")
    copies: dict[str, Path] = {}
    for language, pattern in FILES_ADDED.items():  # a copy of a module beside it: the files naming it linked
        module = sorted(tree.rglob(pattern))[0]
        added = next(  # a tree kept from an earlier run (--keep) holds the files it added
            module.parent / f"added{n}_{module.name}"
            for n in range(1000)
            if not (module.parent / f"added{n}_{module.name}").exists()
        )
        number = module.stem.removeprefix("m")  # its declarations renamed, as a new module's are its own
        text = re.sub(
            rf"\b([IKf]){number}\b", rf"\g<1>{number}{added.stem.partition('_')[0]}", module.read_text()
        )
        added.write_text(text, encoding="utf-8")
        git(repo, "add", "-A")
        timed_update(out, f"update_{language}_file_added", repo, store)
        # the file committed, checked in turn: spliced with the files whose imports may find it
        timed_check(f"check_since_{language}_file_added")
        copies[language] = added
    for language, added in copies.items():  # each removed: the files that named it linked without it
        added.unlink()
        git(repo, "add", "-A")
        timed_update(out, f"update_{language}_file_removed", repo, store)
        timed_check(f"check_since_{language}_file_removed")
    module = sorted(tree.rglob(FILES_ADDED["ts"]))[1]  # a module others import, renamed, then named back
    for old, new in (
        (module, module.with_name("renamed_" + module.name)),
        (module.with_name("renamed_" + module.name), module),
    ):
        old.rename(new)
        git(repo, "add", "-A")
        timed_update(
            out, "update_ts_file_renamed" if new != module else "update_ts_file_renamed_back", repo, store
        )
    say(out, "updates_equal_fresh_map", same_as_fresh(tree, store))

    measured = {
        "peak_rss_mb": out.get("peak_rss_mb"),
        "update_one_file_s": out["update_one_file"]["wall_s"],
        "update_one_file_lines_moved_s": out["update_one_file_lines_moved"]["wall_s"],
        "update_typescript_call_added_s": out["update_typescript_call_added"]["wall_s"],
        "update_go_call_added_renamed_s": out["update_go_call_added_renamed"]["wall_s"],
        "update_python_call_added_s": out["update_python_call_added"]["wall_s"],
        **{
            f"update_{language}_function_added_s": out[f"update_{language}_function_added"]["wall_s"]
            for language in FUNCTIONS_ADDED
        },
        **{
            f"update_{language}_import_added_s": out[f"update_{language}_import_added"]["wall_s"]
            for language in IMPORTS_ADDED
        },
        **{
            f"update_{language}_file_added_s": out[f"update_{language}_file_added"]["wall_s"]
            for language in FILES_ADDED
        },
        **{
            f"update_{language}_file_removed_s": out[f"update_{language}_file_removed"]["wall_s"]
            for language in FILES_ADDED
        },
        "update_ts_file_renamed_s": out["update_ts_file_renamed"]["wall_s"],
        "update_noop_s": out["update_noop"]["wall_s"],
        "check_since_s": out["check_since"]["wall_s"],
        "check_since_kept_s": out["check_since_kept"]["wall_s"],
        "check_since_export_added_s": out["check_since_export_added"]["wall_s"],
        "check_since_export_in_turn_s": out["check_since_export_in_turn"]["wall_s"],
        **{
            f"check_since_{language}_import_added_s": out[f"check_since_{language}_import_added"]["wall_s"]
            for language in IMPORTS_ADDED
        },
        **{
            f"check_since_{language}_file_{how}_s": out[f"check_since_{language}_file_{how}"]["wall_s"]
            for language in FILES_ADDED
            for how in ("added", "removed")
        },
    }
    out["targets"] = {
        k: {"target": TARGETS[k], "measured": v, "met": v is not None and v <= TARGETS[k]}
        for k, v in measured.items()
    }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--keep", type=Path, help="generate the tree here and keep it (default: a temp dir)")
    parser.add_argument("--mapped", action="store_true", help="start after the fresh map (needs --keep)")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        result = run(args.keep, args.files, args.mapped)
    else:
        with tempfile.TemporaryDirectory(prefix="igg-bench-scale-") as tmp:
            result = run(Path(tmp), args.files)
    print(json.dumps(result, indent=1))
    return 0 if result["update_equals_fresh_map"] and result["updates_equal_fresh_map"] else 1


if __name__ == "__main__":
    sys.exit(main())
