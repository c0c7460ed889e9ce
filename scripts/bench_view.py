"""Benchmark the HTML export's time to first render in headless Chromium, today's page beside the page before
big-graph aggregation (issue 33), in the same run (Debian's chromium, via Playwright).

    python scripts/bench_view.py [--sizes 1000,10000,50000,100000] [--repeat 3] [--baseline REV]

For each size a generated code map (``tests/support/bigcode.py``: packages > modules > classes > methods,
with imports, calls and inheritance; about 1.9 edges per node) is written with ``igg.export.write_html`` and
opened from a file:// URL with the network off. *First render* is the page's own mark
(``window.iggView.firstRenderMs``: ``performance.now()`` in the first animation frame after sigma.js drew
the graph, so it counts loading the page, the libraries, parsing the embedded JSON, building the graph, the
initial layout, the node list and the first WebGL frame); the page is interactive from then on, and the
force layout refines it afterwards in a web worker (switched off here with ``#nolayout``: it would only
compete for the cores with the next load).

*Before* is the same graph in the page as it was at ``--baseline`` (default: the commit where this branch
left ``main``): its viewer files are read from git and filled in the same way, with the payload of that time
(no ``grouping``, version 1), so both columns are measured in the same process, browser and load.
The median of ``--repeat`` loads is reported, each in a fresh browser context. ``BENCH_VIEW_VERBOSE=1``
prints each page's own split (parse, model, place, draw, panels).

Targets (issue 33): under 2 s at 10,000 nodes and under 3 s at 100,000 nodes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.export.html import write_html  # noqa: E402
from igg.view.data import graph_payload  # noqa: E402
from igg.view.page import json_script  # noqa: E402
from tests.support.bigcode import code_map  # noqa: E402

OLD_SCRIPTS = (
    "vendor/graphology.umd.min.js",
    "vendor/graphology-library.min.js",
    "vendor/sigma.min.js",
    "viewer.js",
)


def chromium() -> str:
    found = os.environ.get("IGG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("bench_view: no chromium (apt-get install -y chromium, or set IGG_CHROMIUM)")
    return found


def git_show(rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def baseline_rev() -> str:
    out = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "main"


def old_page(rev: str, payload: dict[str, Any]) -> str:
    """The self-contained page as ``rev`` wrote it: its template, style and scripts, the payload of that
    time."""
    old = {k: v for k, v in payload.items() if k != "grouping"}
    old["version"] = 1
    old["nodes"] = [{k: v for k, v in n.items() if k != "parent"} for n in payload["nodes"]]
    base = "igg/view/static/"
    scripts = "\n".join(
        "<script>" + re.sub(r"//# sourceMappingURL=\S*\s*$", "", git_show(rev, base + name)) + "</script>"
        for name in OLD_SCRIPTS
    )
    out = git_show(rev, base + "viewer.html").replace("{{TITLE}}", "IGG graph")
    out = out.replace("{{STYLE}}", f"<style>{git_show(rev, base + 'viewer.css')}</style>")
    out = out.replace("{{CONFIG}}", json_script("igg-config", {"mode": "static"}))
    head, _, tail = out.partition("{{DATA}}")
    middle, _, end = tail.partition("{{SCRIPTS}}")
    return "".join((head, json_script("igg-graph", old), middle, scripts, end))


def first_render(browser: Any, url: str) -> tuple[float, dict[str, int], int]:
    """(the page's first-render mark in ms, the page's own split of it, nodes drawn), one fresh context."""
    context = browser.new_context(viewport={"width": 1400, "height": 850})
    context.set_offline(True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "#nolayout")
    page.wait_for_selector("body[data-ready=true]", state="attached", timeout=600_000)
    mark = float(page.evaluate("() => window.iggView.firstRenderMs"))
    split = dict(page.evaluate("() => window.iggView.timings"))
    drawn = int(page.evaluate("() => window.iggView.graph.order"))
    context.close()
    if errors:
        raise SystemExit(f"bench_view: the page failed: {errors[0]}")
    return mark, split, drawn


def median_load(browser: Any, path: Path, repeat: int) -> tuple[float, dict[str, int], int]:
    runs = sorted((first_render(browser, path.as_uri()) for _ in range(repeat)), key=lambda r: r[0])
    return runs[len(runs) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,50000,100000", help="node counts (comma-separated)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="loads per size and page (the median is reported)"
    )
    parser.add_argument(
        "--baseline",
        default=None,
        help="the git revision whose page is 'before' (default: where this branch left main)",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rev = args.baseline or baseline_rev()
    verbose = bool(os.environ.get("BENCH_VIEW_VERBOSE"))
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium(), headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        first_render(browser, _write_pair(Path(tmp), 10, rev)[0].as_uri())  # warm-up: the browser's own start
        for n in sizes:
            new, old, edges = _write_pair(Path(tmp), n, rev)
            after = median_load(browser, new, args.repeat)
            before = median_load(browser, old, args.repeat)
            rows.append((n, edges, new.stat().st_size, old.stat().st_size, before, after))
            if verbose:
                print(f"{n}: before {before[1]}  after {after[1]}", flush=True)
        browser.close()
    print(
        f"\nfirst render, median of {args.repeat} loads each; before = the page at {rev[:10]}; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"{'nodes':>7} {'edges':>7} {'MB now':>7} {'MB before':>9} {'before':>9} {'now':>8} {'faster':>7} "
        f"{'drawn before':>12} {'drawn now':>9}"
    )
    for n, edges, size_new, size_old, before, after in rows:
        print(
            f"{n:>7} {edges:>7} {size_new / 1e6:>7.1f} {size_old / 1e6:>9.1f} {before[0] / 1000:>7.2f} s "
            f"{after[0] / 1000:>6.2f} s {before[0] / after[0]:>6.1f}x {before[2]:>12} {after[2]:>9}"
        )
    for n, limit in ((10_000, 2.0), (100_000, 3.0)):
        found = next((r for r in rows if r[0] == n), None)
        if found:
            seconds = found[5][0] / 1000
            print(
                f"target: under {limit:.0f} s at {n:,} nodes: {'meets' if seconds < limit else 'misses'} "
                f"({seconds:.2f} s)"
            )


def _write_pair(tmp: Path, n: int, rev: str) -> tuple[Path, Path, int]:
    """Today's export and the page at ``rev`` for the same generated code map; (new, old, edge count)."""
    state = code_map(n)
    new, old = tmp / f"now{n}.html", tmp / f"before{n}.html"
    started = time.perf_counter()
    write_html(state, new)
    took = time.perf_counter() - started
    old.write_text(old_page(rev, graph_payload(state)), encoding="utf-8")
    if n > 10:
        print(
            f"write_html {n:>6} nodes {state.edge_count:>6} edges: {new.stat().st_size / 1e6:6.1f} MB in"
            f" {took:5.2f} s",
            flush=True,
        )
    return new, old, state.edge_count


if __name__ == "__main__":
    main()
