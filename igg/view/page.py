"""The viewer page: one HTML template, served live (assets by URL) or written self-contained (all inlined).

The page's own files (``viewer.html``, ``viewer.css``, ``viewer-model.js``, ``viewer.js``) and the vendored
libraries (``vendor/``: sigma.js for WebGL drawing, graphology and its standard library for the graph model
and the force layout, each from its npm release with its MIT licence beside it) are package data under
``igg/view/static/``. The self-contained form embeds them and the graph payload (in columns,
``igg.view.columns``), so the file opens offline from ``file://`` with no request leaving the page.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any, Literal

from igg.view.columns import columns

VENDOR_SCRIPTS = ("vendor/graphology.umd.min.js", "vendor/graphology-library.min.js", "vendor/sigma.min.js")
"""Third-party scripts, in load order (sigma last: it needs nothing, the app needs all three)."""

APP_SCRIPTS = ("viewer-model.js", "viewer.js")
"""The page's own scripts, in load order: the graph model (groups, what is drawn, positions, walks), then the
page."""
STYLESHEET = "viewer.css"

STATIC_FILES = frozenset(
    {
        *VENDOR_SCRIPTS,
        *APP_SCRIPTS,
        STYLESHEET,
        "vendor/LICENSE-sigma.txt",
        "vendor/LICENSE-graphology.txt",
        "vendor/LICENSE-graphology-library.txt",
        "vendor/VENDOR.md",
    }
)
"""Every file the live page may fetch under ``/ui/static/`` (nothing else is served from there)."""

_SOURCE_MAP = re.compile(r"//# sourceMappingURL=\S*\s*$")


@cache
def asset(name: str) -> str:
    """The text of one static file (``name`` must be in ``STATIC_FILES``)."""
    if name not in STATIC_FILES:
        raise KeyError(name)
    return resources.files("igg.view").joinpath("static", name).read_text(encoding="utf-8")


def _inline_script(text: str) -> str:
    """``text`` safe inside ``<script>``: no source-map comment (it would make a request), no ``</script``."""
    text = _SOURCE_MAP.sub("", text)
    if re.search(r"</script|<!--", text, re.IGNORECASE):  # vendored files are checked once, at build time
        raise ValueError("a script to inline contains '</script' or '<!--'")
    return f"<script>{text}</script>"


def json_script(element_id: str, value: Any) -> str:
    """``value`` as an inert ``<script type="application/json">`` block that no string in it can close."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def render_page(
    mode: Literal["static", "server"],
    *,
    payload: dict[str, Any] | None = None,
    title: str = "IGG graph viewer",
    static_url: str = "/ui/static",
    api_url: str = "/ui/api",
) -> str:
    """The viewer page.

    ``static``: everything inlined and ``payload`` embedded (the HTML export). ``server``: assets loaded from
    ``static_url``, data from the JSON routes under ``api_url``.
    """
    config: dict[str, Any] = {"mode": mode}
    if mode == "static":
        if payload is None:
            raise ValueError("a static page needs the graph payload")
        style = f"<style>{asset(STYLESHEET)}</style>"
        scripts = "\n".join(_inline_script(asset(name)) for name in (*VENDOR_SCRIPTS, *APP_SCRIPTS))
        data = json_script("igg-graph", columns(payload))
    else:
        config["api"] = api_url
        style = f'<link rel="stylesheet" href="{html.escape(static_url)}/{STYLESHEET}">'
        scripts = "\n".join(
            f'<script src="{html.escape(static_url)}/{name}"></script>'
            for name in (*VENDOR_SCRIPTS, *APP_SCRIPTS)
        )
        data = ""
    template = asset_template()
    out = template.replace("{{TITLE}}", html.escape(title))
    out = out.replace("{{STYLE}}", style).replace("{{CONFIG}}", json_script("igg-config", config))
    # the data and scripts go in last: nothing in them is ever scanned for placeholders
    head, _, tail = out.partition("{{DATA}}")
    middle, _, end = tail.partition("{{SCRIPTS}}")
    return "".join((head, data, middle, scripts, end))


@cache
def asset_template() -> str:
    """The page template (``viewer.html``)."""
    return resources.files("igg.view").joinpath("static", "viewer.html").read_text(encoding="utf-8")
