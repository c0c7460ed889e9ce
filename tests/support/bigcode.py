"""A generated code map of any size, shaped like ``igg map-code``'s (for the big-graph viewer tests and the
bench).

Top-level packages hold sub-packages, which hold modules, which hold classes, which hold methods, all joined
by ``CONTAINS`` as the code schema says; modules import modules (mostly within their own top-level package),
methods call methods (mostly within their module), some classes extend others. The same ``n`` and ``seed``
give the same graph: names are ``pkg3``, ``pkg3.sub1``, ``pkg3/sub1/mod12.py``, ``Class7``, ``Class7.run2``.
"""

from __future__ import annotations

import random

from igg.codemap.schema import load_code_schema
from igg.graph.state import GraphState


def code_map(n: int, seed: int = 7, *, packages: int | None = None) -> GraphState:
    """About ``n`` nodes: ``packages`` top-level packages (default: one per 1,500 nodes, 6 to 40)."""
    rng = random.Random(seed)
    state = GraphState(load_code_schema().compile())
    tops = packages or max(6, min(40, n // 1500))
    n_modules = max(tops * 2, n // 24)
    n_classes = max(n_modules, n // 6)
    top_ids = [state.add_node("Package", {"name": f"pkg{t}"}) for t in range(tops)]
    subs: list[tuple[int, str, str]] = []  # (top index, dotted name, id)
    for t, tid in enumerate(top_ids):
        for s in range(3):
            name = f"pkg{t}.sub{s}"
            sid = state.add_node("Package", {"name": name})
            state.add_edge(tid, "CONTAINS", sid, {})
            subs.append((t, name, sid))
    modules: list[tuple[int, str, str]] = []  # (top index, dotted name, id)
    for m in range(n_modules):
        t, sub, sid = subs[(m * 7 + rng.randrange(3)) % len(subs)]
        name = f"{sub}.mod{m}"
        mid = state.add_node(
            "Module",
            {
                "name": name,
                "path": name.replace(".", "/") + ".py",
                "language": "python",
                "lines": rng.randint(20, 900),
            },
        )
        state.add_edge(sid, "CONTAINS", mid, {})
        modules.append((t, name, mid))
    classes: list[tuple[int, str]] = []  # (module index, id)
    for c in range(n_classes):
        mi = c % n_modules if c < n_modules else rng.randrange(n_modules)
        _, mod, mid = modules[mi]
        cid = state.add_node(
            "Class", {"name": f"Class{c}", "package": mod, "qualified_name": f"{mod}.Class{c}"}
        )
        state.add_edge(mid, "CONTAINS", cid, {})
        classes.append((mi, cid))
    methods: list[tuple[int, str]] = []  # (module index, id)
    remaining = max(0, n - state.node_count)
    for k in range(remaining):
        mi, cid = classes[k % len(classes) if k < len(classes) else rng.randrange(len(classes))]
        name = f"run{k}"
        owner = state.node_properties(cid)["qualified_name"]
        xid = state.add_node("Method", {"name": name, "owner": owner, "signature": f"{name}()"})
        state.add_edge(cid, "CONTAINS", xid, {})
        methods.append((mi, xid))
    by_top: dict[int, list[str]] = {}
    for t, _, mid in modules:
        by_top.setdefault(t, []).append(mid)
    for t, _, mid in modules:
        for _ in range(3):
            pool = by_top[t] if rng.random() < 0.8 else by_top[rng.randrange(tops)]
            other = rng.choice(pool)
            if other != mid and state.edge_between(mid, "IMPORTS", other) is None:
                state.add_edge(mid, "IMPORTS", other, {})
    by_module: dict[int, list[str]] = {}
    for mi, xid in methods:
        by_module.setdefault(mi, []).append(xid)
    for mi, xid in methods:
        near = (
            by_module[mi] if rng.random() < 0.6 else by_module.get(rng.randrange(n_modules)) or by_module[mi]
        )
        other = rng.choice(near)
        if other != xid and state.edge_between(xid, "CALLS", other) is None:
            state.add_edge(xid, "CALLS", other, {})
    for _, cid in classes[: len(classes) // 5]:
        other = rng.choice(classes)[1]
        if other != cid and state.edge_between(cid, "EXTENDS", other) is None:
            state.add_edge(cid, "EXTENDS", other, {})
    state.take_journal()
    return state
