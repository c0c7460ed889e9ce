"""Seeing a graph: the viewer page (live at ``/ui`` of ``igg serve``/``igg view``, or a self-contained HTML
file).

``data`` turns a graph and its iteration records into the JSON the page draws, with the groups a big graph is
drawn as (``aggregate``: a code map's containment tree, else Louvain communities); ``page`` renders the page
(assets inlined for the export, by URL when served), and the export embeds the JSON in ``columns``. The
``/ui`` routes that serve it live with the other HTTP routes (``igg.interfaces.http.ui``).
"""

from igg.view.data import graph_payload, iteration_summary
from igg.view.page import render_page

__all__ = ["graph_payload", "iteration_summary", "render_page"]
