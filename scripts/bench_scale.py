"""Benchmark code maps of a monorepo: a generated tree of ``--files`` files in Python, Java, TypeScript and Go
(``gen_code_tree --languages``), in a git repository whose last commit changed one file.

Each command runs as the user runs it, ``python -m igg ...`` in a subprocess, timed by the wall clock:

- a fresh ``igg map-code TREE --store S`` (with limits raised to fit the tree), and its peak memory: the
  largest resident set of a child process (``resource.getrusage(RUSAGE_CHILDREN)``, which covers the parse
  processes too, each on its own);
- ``--update`` after one file changed (a body edit, committed), and a no-op ``--update`` after it;
- ``igg check TREE --store S --since HEAD~1 --new-only`` with a few rules;
- whether the updated session's graph equals a fresh map of the new tree (their JSON exports compared with
  element ids aside, as ``tests/integration/test_code_update_outputs.py`` compares them).

Targets of issue 49: peak <= 4 GB, one-file update <= 2 s, no-op update <= 0.5 s, check --since <= 3 s. Prints
one JSON object. Usage: ``python scripts/bench_scale.py [--files 50000] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import resource
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
TARGETS = {"peak_rss_mb": 4096, "update_one_file_s": 2.0, "update_noop_s": 0.5, "check_since_s": 3.0}
LIMITS = ["--max-nodes", "100000000", "--max-edges", "1000000000"]


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


def graph(path: Path) -> tuple[list[Any], list[Any]]:
    """Nodes (type, properties) and edges (between those, with their properties) of an IGG JSON document,
    element ids aside."""
    document = json.loads(path.read_text(encoding="utf-8"))
    key = {n["id"]: (n["type"], json.dumps(n["properties"], sort_keys=True)) for n in document["nodes"]}
    return sorted(key.values()), sorted(
        (key[e["from"]], e["type"], key[e["to"]], json.dumps(e.get("properties", {}), sort_keys=True))
        for e in document["edges"]
    )


def run(root: Path, files: int) -> dict[str, Any]:
    repo, tree = root / "repo", root / "repo" / "tree"
    written = generate(tree, files=files, languages=("python", "java", "typescript", "go"))
    (repo / "igg.toml").write_text(RULES, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    store = str(root / "map.sqlite")
    out: dict[str, Any] = {"files": len(written)}

    wall, text = igg("map-code", "tree", "--store", store, *LIMITS, "--quiet", "--json", cwd=repo)
    summary = json.loads(text)
    out["fresh_map"] = {
        "wall_s": round(wall, 2),
        "nodes": summary["nodes"],
        "edges": summary["edges"],
        "seconds": summary["map_code"]["seconds"],
        "by_language": summary["map_code"]["files"]["by_language"],
    }
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)

    changed = next(p for p in written if p.suffix == ".py")  # a body edit, committed
    changed.write_text(
        changed.read_text(encoding="utf-8").replace("if x else 0", "if x else 1", 1), encoding="utf-8"
    )
    git(repo, "commit", "-q", "-am", "one file changed")
    wall, text = igg("map-code", "tree", "--store", store, "--update", "--quiet", "--json", cwd=repo)
    out["update_one_file"] = {
        "wall_s": round(wall, 3),
        **{k: json.loads(text)[k] for k in ("files", "seconds")},
    }
    out["update_one_file"]["files"] = {
        k: v if isinstance(v, int) else len(v) for k, v in out["update_one_file"]["files"].items()
    }
    wall, text = igg("map-code", "tree", "--store", store, "--update", "--quiet", "--json", cwd=repo)
    out["update_noop"] = {"wall_s": round(wall, 3), "seconds": json.loads(text)["seconds"]}
    wall, text = igg(
        "check", "tree", "--store", store, "--since", "HEAD~1", "--new-only", "--json", cwd=repo, ok=(0, 1)
    )
    out["check_since"] = {"wall_s": round(wall, 3)}

    igg(
        "map-code", "tree", "--store", store, "--update", "--quiet", "--export", "json:updated.json", cwd=repo
    )
    igg("map-code", "tree", "--no-store", *LIMITS, "--quiet", "--export", "json:fresh.json", cwd=repo)
    out["update_equals_fresh_map"] = graph(repo / "updated.json") == graph(repo / "fresh.json")

    measured = {
        "peak_rss_mb": out["peak_rss_mb"],
        "update_one_file_s": out["update_one_file"]["wall_s"],
        "update_noop_s": out["update_noop"]["wall_s"],
        "check_since_s": out["check_since"]["wall_s"],
    }
    out["targets"] = {
        k: {"target": TARGETS[k], "measured": v, "met": v <= TARGETS[k]} for k, v in measured.items()
    }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--keep", type=Path, help="generate the tree here and keep it (default: a temp dir)")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        result = run(args.keep, args.files)
    else:
        with tempfile.TemporaryDirectory(prefix="igg-bench-scale-") as tmp:
            result = run(Path(tmp), args.files)
    print(json.dumps(result, indent=1))
    return 0 if result["update_equals_fresh_map"] else 1


if __name__ == "__main__":
    sys.exit(main())
