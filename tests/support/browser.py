"""A real headless Chromium (Debian's ``chromium``) driven by Playwright, one per test session.

``browser`` starts it once; ``page`` gives each test a fresh context and page that records console errors,
uncaught exceptions and every request, and ``shot`` saves screenshots under ``test-artifacts/view/`` (or
``$IGG_TEST_ARTIFACTS``) for a person to look at. Playwright's own browser download is not used: the
executable is ``$IGG_CHROMIUM``, else ``chromium`` on PATH (``scripts/test`` installs it when missing).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("IGG_TEST_ARTIFACTS") or ROOT / "test-artifacts") / "view"


def chromium_path() -> str:
    """The Chromium executable. Where ``scripts/test`` could install one (``IGG_REQUIRE_COMPONENTS``), its
    absence fails the tests; elsewhere they skip, saying how to point at one."""
    found = os.environ.get("IGG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        reason = (
            "no Chromium for the browser tests: scripts/test installs Debian's chromium when run as root "
            "(apt-get install -y chromium), or set IGG_CHROMIUM to a Chromium executable"
        )
        if os.environ.get("IGG_REQUIRE_COMPONENTS"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module. Not per session: Playwright's sync API keeps its event loop
    running in this thread while a browser is open, so a later ``asyncio.run`` in the same worker (the MCP
    tests) would fail; closing it at the end of each module gives the thread back."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=chromium_path(),
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu-sandbox"],
        )
        try:
            yield b
        finally:
            b.close()


@dataclass
class Page:
    """A page with what it logged: console errors, page errors, and every URL it requested."""

    page: Any
    context: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def shot(self, name: str) -> Path:
        """Save a screenshot as a test artefact; returns its path."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.png"
        self.page.screenshot(path=str(path))
        return path

    def wait_ready(self, timeout_ms: int = 30_000) -> None:
        """Wait until the viewer has drawn its first frame."""
        self.page.wait_for_selector("body[data-ready=true]", state="attached", timeout=timeout_ms)

    def node_names(self) -> list[str]:
        """The names in the accessible node list, in order."""
        return [str(t) for t in self.page.locator("#node-list button .label").all_inner_texts()]


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    """A fresh browser context and page for one test; console errors are collected for the test to assert."""
    context = browser.new_context(viewport={"width": 1400, "height": 850})
    p = context.new_page()
    out = Page(page=p, context=context)
    p.on("console", lambda m: out.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    p.on("pageerror", lambda e: out.errors.append(f"page error: {e}"))
    p.on("request", lambda r: out.requests.append(r.url))
    try:
        yield out
    finally:
        context.close()
