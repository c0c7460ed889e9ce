"""Benchmark the HTML export's time to first frame in headless Chromium, today's page beside the page at a
baseline revision, in the same run (Debian's chromium, via Playwright).

    python scripts/bench_view.py [--sizes 1000,10000,50000,100000] [--repeat 3] [--baseline REV]

For each size a generated code map (``tests/support/bigcode.py``: packages > modules > classes > methods,
with imports, calls and inheritance; about 1.9 edges per node) is written with ``igg.export.write_html`` and
opened from a file:// URL with the network off. Two figures per page:

*wait*: what a person waits for, from just before the browser is told to open the file (a wall-clock time
taken before ``page.goto``) to the first frame (``performance.timeOrigin`` plus the time the frame was
handed to the compositor, on the same clock; see ``FRAME_PROBE``). It counts reading the file, parsing the
HTML with its embedded JSON, evaluating the scripts, the page's own work and the first WebGL frame, which the
compositor cannot show before the GPU process has drawn it (in headless Chromium SwiftShader draws it in
software and the compositor reads it back: from 0.3 s to 1.4 s, growing with the edges drawn and their
width).

*mark*: the page's own mark (``window.iggView.firstRenderMs``: ``performance.now()`` in the first animation
frame after sigma.js drew the graph), the figure this bench reported before issue 49. It is taken before
that frame is committed, so it leaves out the WebGL drawing.

The page is interactive from the first frame on; the force layout refines it afterwards in a web worker
(switched off here with ``#nolayout``: it would only compete for the cores with the next load).

*Before* is the same graph exported by the code at ``--baseline`` (default: the commit where this branch left
``main``): that revision's ``igg`` is read from git into a temporary folder and its own ``write_html`` writes
the page in a child process, so both columns are measured in the same process, browser and load.
The median of ``--repeat`` loads is reported, each in a fresh browser context, the two pages loaded in
turn. ``BENCH_VIEW_VERBOSE=1`` prints each page's own split (parse, model, place, draw, panels) and the
navigation entry's times (the file read, the document parsed) of the median load.

Targets: under 2 s at 10,000 nodes and under 3 s at 100,000 nodes (issue 33 by the page's mark; issue 49 by
the wait).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.export.html import write_html  # noqa: E402
from tests.support.bigcode import code_map  # noqa: E402

NAV_FIELDS = ("responseStart", "responseEnd", "domInteractive", "domContentLoadedEventEnd", "loadEventEnd")
"""The navigation entry's times printed with BENCH_VIEW_VERBOSE (ms from the time origin)."""

WRITE_AT_REV = """
import sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from igg.export.html import write_html
from tests.support.bigcode import code_map
state = code_map(int(sys.argv[3]))
started = time.perf_counter()
write_html(state, sys.argv[4])
print(state.edge_count, time.perf_counter() - started)
"""
"""Run with the revision's ``igg`` first on the path: that revision's export of the same generated graph."""


@dataclass
class Load:
    """One load of a page: the wait (ms from before ``goto`` to the first frame), the page's own mark (ms),
    its split, the navigation entry's times, and how many items were drawn."""

    wait: float
    mark: float
    split: dict[str, int]
    nav: dict[str, float]
    drawn: int


FRAME_PROBE = """(() => {
  const raf = window.requestAnimationFrame.bind(window);
  window.iggBenchFrameMs = null;
  window.requestAnimationFrame = (callback) => raf((time) => {
    callback(time);
    const view = window.iggView;
    if (window.iggBenchFrameMs === null && view && typeof view.firstRenderMs === "number") {
      window.iggBenchFrameMs = -1;
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { window.iggBenchFrameMs = performance.now(); };
      channel.port2.postMessage(0);
    }
  });
})();"""
"""Added to every page before its own scripts: in the animation frame where the page set ``firstRenderMs``,
a message is posted, and it arrives once that frame's task is over, its commit to the compositor included
(which waits for the WebGL drawing: in headless Chromium, SwiftShader draws it and the compositor reads it
back). ``performance.now()`` then is the frame's time, for any revision's page alike."""


def chromium() -> str:
    found = os.environ.get("IGG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("bench_view: no chromium (apt-get install -y chromium, or set IGG_CHROMIUM)")
    return found


def baseline_rev() -> str:
    out = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "main"


def rev_tree(rev: str, into: Path) -> Path:
    """``rev``'s ``igg`` package and the schemas it reads, from git into ``into``."""
    into.mkdir()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "igg", "schemas"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def first_render(browser: Any, url: str) -> Load:
    """One load of ``url`` in a fresh context, timed from just before ``goto`` to the first frame."""
    context = browser.new_context(viewport={"width": 1400, "height": 850})
    context.set_offline(True)
    context.add_init_script(FRAME_PROBE)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    asked = time.time() * 1000  # the same clock as performance.timeOrigin (ms since the epoch)
    page.goto(url + "#nolayout")
    page.wait_for_function("() => window.iggBenchFrameMs > 0", polling=100, timeout=600_000)
    got = page.evaluate(
        """(fields) => {
          const nav = performance.getEntriesByType("navigation")[0] || {};
          return { origin: performance.timeOrigin, mark: window.iggView.firstRenderMs,
            frame: window.iggBenchFrameMs,
            split: window.iggView.timings, drawn: window.iggView.graph.order,
            nav: Object.fromEntries(fields.map((f) => [f, nav[f] || 0])) };
        }""",
        list(NAV_FIELDS),
    )
    context.close()
    if errors:
        raise SystemExit(f"bench_view: the page failed: {errors[0]}")
    mark = float(got["mark"])
    wait = float(got["origin"]) + float(got["frame"]) - asked
    return Load(wait, mark, dict(got["split"]), dict(got["nav"]), int(got["drawn"]))


def median_loads(browser: Any, paths: tuple[Path, Path], repeat: int) -> tuple[Load, Load]:
    """The median load (by the wait) of each page, the two pages loaded in turn (before, now, before, ...) so
    that a change in the machine's load weighs on both alike."""
    runs: tuple[list[Load], list[Load]] = ([], [])
    for _ in range(repeat):
        for path, found in zip(paths, runs, strict=True):
            found.append(first_render(browser, path.as_uri()))
    before, now = (sorted(r, key=lambda load: load.wait)[len(r) // 2] for r in runs)
    return before, now


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
        old_igg = rev_tree(rev, Path(tmp) / "rev")
        browser = pw.chromium.launch(
            executable_path=chromium(), headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        warm = _write_pair(Path(tmp), 10, old_igg)[0].as_uri()
        first_render(browser, warm)  # warm-up: the browser's own start
        for n in sizes:
            new, old, edges = _write_pair(Path(tmp), n, old_igg)
            before, after = median_loads(browser, (old, new), args.repeat)
            rows.append((n, edges, new.stat().st_size, old.stat().st_size, before, after))
            if verbose:
                for name, load in (("before", before), ("now", after)):
                    nav = " ".join(f"{k} {v:.0f}" for k, v in load.nav.items())
                    print(
                        f"{n} {name}: wait {load.wait:.0f} ms, mark {load.mark:.0f} ms; {load.split}; {nav}"
                    )
        browser.close()
    report(rows, rev, args.repeat)


def report(rows: list[tuple[int, int, int, int, Load, Load]], rev: str, repeat: int) -> None:
    """The table (seconds) and the targets, judged by the wait."""
    print(
        f"\nfirst frame, median of {repeat} loads each (by the wait); before = the page at {rev[:10]}; load "
        f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n"
        "wait = from before page.goto to the first frame; mark = the page's own firstRenderMs"
    )
    print(
        f"{'nodes':>7} {'edges':>7} {'MB now':>7} {'MB before':>9} {'wait before':>11} {'wait now':>8} "
        f"{'faster':>6} {'mark before':>11} {'mark now':>8} {'drawn before':>12} {'drawn now':>9}"
    )
    for n, edges, size_new, size_old, before, after in rows:
        print(
            f"{n:>7} {edges:>7} {size_new / 1e6:>7.1f} {size_old / 1e6:>9.1f} {before.wait / 1000:>9.2f} s "
            f"{after.wait / 1000:>6.2f} s {before.wait / after.wait:>5.1f}x {before.mark / 1000:>9.2f} s "
            f"{after.mark / 1000:>6.2f} s {before.drawn:>12} {after.drawn:>9}"
        )
    for n, limit in ((10_000, 2.0), (100_000, 3.0)):
        found = next((r for r in rows if r[0] == n), None)
        if found:
            seconds = found[5].wait / 1000
            print(
                f"target: a wait under {limit:.0f} s at {n:,} nodes: "
                f"{'meets' if seconds < limit else 'misses'} ({seconds:.2f} s)"
            )


def _write_pair(tmp: Path, n: int, old_igg: Path) -> tuple[Path, Path, int]:
    """Today's export and the baseline's for the same generated code map; (new, old, edge count)."""
    state = code_map(n)
    new, old = tmp / f"now{n}.html", tmp / f"before{n}.html"
    started = time.perf_counter()
    write_html(state, new)
    took = time.perf_counter() - started
    child = [sys.executable, "-c", WRITE_AT_REV, str(old_igg), str(ROOT), str(n), str(old)]
    answer = subprocess.run(child, check=True, capture_output=True, text=True).stdout.split()
    edges, took_before = int(answer[-2]), float(answer[-1])
    if edges != state.edge_count:
        raise SystemExit(f"bench_view: the baseline generated {edges} edges, today's code {state.edge_count}")
    if n > 10:
        print(
            f"write_html {n:>6} nodes {state.edge_count:>6} edges: {new.stat().st_size / 1e6:6.1f} MB in"
            f" {took:5.2f} s (before: {old.stat().st_size / 1e6:6.1f} MB in {took_before:5.2f} s)",
            flush=True,
        )
    return new, old, state.edge_count


if __name__ == "__main__":
    main()
