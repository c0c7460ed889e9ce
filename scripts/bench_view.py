"""Benchmark the HTML export's time to first render in headless Chromium (Debian's chromium, via Playwright).

    python scripts/bench_view.py [--sizes 1000,10000,50000] [--repeat 3]

For each size a code-like graph (4 node types, 1.5 edges per node, long-tailed degrees) is written with
``igg.export.write_html`` and opened from a file:// URL with the network off. *First render* is the page's
own mark (``window.iggView.firstRenderMs``: ``performance.now()`` in the first animation frame after sigma.js
drew the graph, so it counts loading the page, the libraries, parsing the embedded JSON, building the
graph, the initial layout, the node list and the first WebGL frame). The baseline, in the same process and
browser, is the same page with a 10-node graph: the ratio says what the graph's size adds. The page's
main-thread CPU time until that mark (Chromium's ``ThreadTime`` metric) is printed too: unlike the wall
time, it does not grow when other processes share the cores. The median of ``--repeat`` loads is
reported, each in a fresh browser context. ``BENCH_VIEW_VERBOSE=1`` prints the page's own split (parse,
build, sigma, panels) per load.

Target (issue 17): under 2 s at 10,000 nodes.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.export.html import write_html  # noqa: E402
from igg.graph.state import GraphState  # noqa: E402
from igg.models.schema import Schema  # noqa: E402

TYPES = ("Module", "Class", "Function", "Table")
EDGES = ("IMPORTS", "CALLS", "DECLARES", "READS_FROM")


def build(n_nodes: int, seed: int = 7) -> GraphState:
    """Modules, classes, functions and tables; 1.5 edges per node, targets drawn with a long tail."""
    rng = random.Random(seed)
    schema = Schema(node_types=list(TYPES), edge_types=list(EDGES))
    state = GraphState(schema.compile())
    ids: list[str] = []
    for i in range(n_nodes):
        t = TYPES[0] if i % 20 == 0 else TYPES[1] if i % 5 == 0 else TYPES[3] if i % 50 == 1 else TYPES[2]
        ids.append(state.add_node(t, {"name": f"pkg{i % 89}.{t.lower()}{i}", "lines": rng.randint(5, 900)}))
    made, wanted = 0, int(n_nodes * 1.5)
    while made < wanted:
        u = ids[rng.randrange(len(ids))]
        v = ids[min(int(rng.paretovariate(1.2)) - 1, len(ids) - 1)] if rng.random() < 0.3 else rng.choice(ids)
        et = EDGES[rng.randrange(len(EDGES))]
        if u != v and state.edge_between(u, et, v) is None:
            state.add_edge(u, et, v, {})
            made += 1
    state.take_journal()
    return state


def chromium() -> str:
    found = os.environ.get("IGG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("bench_view: no chromium (apt-get install -y chromium, or set IGG_CHROMIUM)")
    return found


def first_render(browser: object, url: str) -> tuple[float, dict[str, int]]:
    """(the page's first-render mark in ms, the page's own split of it), one fresh context.

    The force layout, which starts after the first frame, is switched off (``#nolayout``): it would only
    compete for the cores with the next load.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 850})  # type: ignore[attr-defined]
    context.set_offline(True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "#nolayout")
    page.wait_for_selector("body[data-ready=true]", state="attached", timeout=300_000)
    mark = float(page.evaluate("() => window.iggView.firstRenderMs"))
    split = dict(page.evaluate("() => window.iggView.timings"))
    context.close()
    if errors:
        raise SystemExit(f"bench_view: the page failed: {errors[0]}")
    return mark, split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,50000", help="node counts (comma-separated)")
    parser.add_argument("--repeat", type=int, default=3, help="loads per size (the median is reported)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
        pages: dict[int, tuple[Path, int]] = {}
        for n in [10, *sizes]:
            state = build(n)
            path = Path(tmp) / f"g{n}.html"
            started = time.perf_counter()
            summary = write_html(state, path)
            pages[n] = (path, summary["bytes"])
            print(f"write_html {n:>6} nodes {state.edge_count:>6} edges: {summary['bytes'] / 1e6:6.2f} MB "
                  f"in {time.perf_counter() - started:5.2f} s", flush=True)
        first_render(browser, pages[10][0].as_uri())  # warm-up: the browser's own start-up costs
        results: dict[int, tuple[float, dict[str, int]]] = {}
        for n in [10, *sizes]:
            runs = sorted((first_render(browser, pages[n][0].as_uri()) for _ in range(args.repeat)),
                          key=lambda r: r[0])
            results[n] = runs[len(runs) // 2]  # the median load, with its split
        browser.close()
    base = results[10][0]
    print(f"\nfirst render, median of {args.repeat} loads; baseline: the same page with 10 nodes ({base:.0f} ms); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'nodes':>7} {'edges':>7} {'page MB':>8} {'first render':>13} {'x baseline':>11}   split (ms)")
    for n in sizes:
        mark, split = results[n]
        parts = " ".join(f"{k} {v}" for k, v in split.items())
        print(f"{n:>7} {int(n * 1.5):>7} {pages[n][1] / 1e6:>8.2f} {mark:>10.0f} ms {mark / base:>10.1f}x   {parts}")
    if 10000 in results:
        verdict = "meets" if results[10000][0] < 2000 else "misses"
        print(f"target: under 2 s at 10,000 nodes: {verdict} ({results[10000][0] / 1000:.2f} s)")


if __name__ == "__main__":
    main()
