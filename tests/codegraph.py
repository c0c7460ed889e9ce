"""Helpers for the code agent's tests: drive an agent through the real act step, and name graph elements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from igg.act import Actor
from igg.agents.base import Observation
from igg.models.actions import read_response
from igg.request.load import build_state, load_request

CODE_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "code"


def code_request(schema: Any = None, **constraints: Any) -> Any:
    """A request over the built-in code schema (or ``schema``) with generous limits unless overridden."""
    from igg.agents.code import load_code_schema

    schema = schema or load_code_schema().model_dump(by_alias=True, exclude_defaults=True)
    context = constraints.pop("context", "")
    limits = {"max_nodes": 10_000, "max_edges": 10_000, **constraints}
    return load_request(
        {
            "goal_prompt": "Map the code.",
            "context_data": context,
            "config": {"max_iterations": 1000, "schema": schema, "constraints": limits},
        }
    )


def drive(
    agent: Any,
    request: Any,
    max_turns: int = 500,
    *,
    state: Any = None,
    first: int = 1,
    extra_rules: Any = None,
) -> tuple[Any, list[dict[str, Any]], list[list[Any]]]:
    """Run ``agent`` turn by turn through the real validation and apply step, as the loop does.

    ``state`` continues an existing graph from iteration ``first``; ``extra_rules`` join the built-in ones.
    Returns the graph state, the turns and the verdicts of each turn.
    """
    if state is None:
        state, _ = build_state(request)
    actor = Actor(
        state.schema, request.config.constraints, request.config.apply_mode, extra_rules=extra_rules
    )
    verdicts: list[Any] = []
    turns, all_verdicts = [], []
    for iteration in range(first, first + max_turns):
        state.iteration = iteration
        turn = agent(
            Observation(
                session_id="t",
                iteration=iteration,
                markdown="",
                tokens=0,
                last_verdicts=verdicts,
                request=request,
                state=state,
            )
        )
        turns.append(turn)
        verdicts = actor.apply(state, read_response(turn).items)
        all_verdicts.append(verdicts)
        if turn.get("finished"):
            break
    return state, turns, all_verdicts


def node_name(state: Any, node_id: str) -> str:
    t = state.node_type(node_id)
    p = state.node_properties(node_id)
    if t == "Method":
        return f"{p['owner']}#{p['signature']}"
    if t in ("Class", "Interface", "Enum"):
        return p["qualified_name"]
    if t == "Module":
        return p["path"]
    if t == "Function":
        return f"{p['package']}.{p['name']}"
    return p["name"]


def graph_sets(state: Any) -> tuple[set[str], set[str]]:
    """Nodes as ``"Type name"`` and edges as ``"TYPE source -> target"``."""
    nodes = {f"{state.node_type(n)} {node_name(state, n)}" for n in state.graph.nodes}
    edges = {f"{d['type']} {node_name(state, u)} -> {node_name(state, v)}" for _, u, v, d in state.edges()}
    return nodes, edges


def sources(root: Path) -> list[Any]:
    from igg.agents.code import SourceFile

    return [
        SourceFile(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))
        for p in sorted(root.rglob("*"))
        if p.suffix in (".py", ".java")
    ]


def map_into_store(tree: Path, store: Path) -> None:
    """A static map of ``tree`` kept as session ``m`` in ``store``, with the facts cache beside it (what an
    ``--update`` of the session reads)."""
    from igg.codemap.cache import FactsCache
    from igg.service import map_code
    from igg.store.location import sidecar_path

    cache = FactsCache(sidecar_path(store, ".codefacts"))
    try:
        result, _ = map_code([tree], agent="code", jobs=1, store=store, session_id="m", cache=cache)
    finally:
        cache.close()
    assert result.stop_reason == "finished"
