"""``--agent auto`` / ``code`` on a context of marked source files reads it as the run goes
(``igg.agents.streaming``): the first turn comes after the first batch of files, a run that stops early reads
only what it needed, and a run to the end builds the graph the code agent builds from every file at once."""

from __future__ import annotations

import json
from typing import Any

from igg import load_request, run
from igg.agents.code import CodeAgent, load_code_schema
from igg.agents.registry import make_agent
from igg.agents.streaming import StreamingCodeAgent, marked_files
from igg.codemap.sources import split_context
from igg.graph.state import GraphState
from tests.conftest import FIXTURES


def code_context() -> str:
    """Every Java and Python file of the code fixtures, each under a marker line, in path order."""
    parts = []
    for root in (FIXTURES / "code" / "java", FIXTURES / "code" / "python"):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".java", ".py"):
                mark = "//" if path.suffix == ".java" else "#"
                parts.append(f"{mark} File: {path.relative_to(root).as_posix()}\n{path.read_text()}")
    return "".join(parts)


def request(context: str, **config: Any) -> Any:
    schema = load_code_schema().model_dump(by_alias=True, mode="json", exclude_none=True)
    payload = {
        "session_id": "stream",
        "goal_prompt": "Map the code.",
        "context_data": context,
        "config": {
            "max_iterations": 200,
            "constraints": {"max_nodes": 5000, "max_edges": 20000, "max_actions_per_response": 40},
            "schema": schema,
            **config,
        },
    }
    return load_request(payload)


def graph(state: GraphState) -> tuple[list[str], list[str]]:
    """Nodes (type and properties) and edges (type and endpoint identities), comparable across runs."""

    def node(nid: str) -> str:
        data = state.graph.nodes[nid]
        props = {k: v for k, v in data["properties"].items() if k != "external_supertypes"}
        return json.dumps([data["type"], props], sort_keys=True)

    nodes = sorted(node(n) for n in state.graph.nodes)
    edges = sorted(json.dumps([d["type"], node(u), node(v)]) for u, v, d in state.graph.edges(data=True))
    return nodes, edges


def test_marked_files_finds_the_files_split_context_finds_one_at_a_time():
    context = code_context()
    assert list(marked_files(context)) == split_context(context)
    assert list(marked_files("class A { }\n")) == split_context("class A { }\n")


def test_a_streamed_run_builds_the_graph_of_the_code_agent_over_every_file_at_once():
    """A context that fits the first batch gives exactly the code agent's graph. In batches of 1, 2, 4, ...
    files (every cross-file edge then waits for a later link) the run ends with the same nodes and edges."""
    context = code_context()
    req = request(context)
    whole = graph(run(req, CodeAgent(sources=[s for s in split_context(context) if s.language])).state)
    one_batch = StreamingCodeAgent(context)
    assert graph(run(req, one_batch).state) == whole and one_batch.batches == 1
    small = StreamingCodeAgent(context, first_batch=1)
    streamed = run(req, small)
    assert streamed.stop_reason == "finished" and small.batches >= 4
    assert streamed.action_counts()["rejected"] == 0
    nodes, edges = graph(streamed.state)
    assert nodes == whole[0]
    assert edges == whole[1]


def test_a_run_that_stops_early_reads_only_the_first_batches():
    """max_iterations 2 over a context of 5,000 files: the run reads one batch of files, not all of them."""
    body = "".join(f"// File: src/p/F{i}.java\npackage p;\npublic class F{i} {{ }}\n" for i in range(5000))
    req = request(body, max_iterations=2)
    agent = make_agent("auto", req, env={})
    assert isinstance(agent, StreamingCodeAgent)
    result = run(req, agent)
    assert result.stop_reason == "max_iterations" and result.state.node_count > 0
    assert agent.files_read == 512 and agent.batches == 1


def test_an_import_of_a_submodule_read_later_is_not_linked_to_its_package():
    """``from pkg.sub import helper`` in a file read before ``pkg/sub.py``: the streamed run links the module
    ``app`` to ``pkg.sub`` (as the code agent over every file does), never to ``pkg`` itself."""
    context = (
        "# File: pkg/__init__.py\n"
        "# File: app.py\nfrom pkg.sub import helper\n\n\ndef main():\n    return helper()\n"
        "# File: pkg/sub.py\ndef helper():\n    return 1\n"
    )
    req = request(context)
    whole = graph(run(req, CodeAgent(sources=[s for s in split_context(context) if s.language])).state)
    streamed = StreamingCodeAgent(context, first_batch=2)  # pkg and app first, pkg/sub.py in the next batch
    assert graph(run(req, streamed).state) == whole and streamed.batches == 2
    imports = [json.loads(e) for e in whole[1] if json.loads(e)[0] == "IMPORTS"]
    assert [json.loads(to)[1]["name"] for _, _, to in imports] == ["pkg.sub"]
