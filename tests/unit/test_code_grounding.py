"""UNGROUNDED_SYMBOL: in code mode, nodes and edges about symbols the sources lack are rejected."""

from __future__ import annotations

from igg.act import Actor
from igg.agents.code import CodeAgent, link
from igg.agents.code.grounding import Grounding
from igg.codemap.sources import analyze_all
from igg.models.actions import read_response
from igg.models.verdicts import ErrorCode
from igg.request.load import build_state
from tests.codegraph import CODE_FIXTURES, code_request, drive, sources


def _workspace():
    files = sources(CODE_FIXTURES / "java")
    grounding = Grounding(link(analyze_all(files)), files)
    request = code_request()
    state, _ = build_state(request)
    actor = Actor(state.schema, request.config.constraints, extra_rules=grounding.rules())
    return state, actor


def _apply(state, actor, *actions):
    return actor.apply(state, read_response({"actions": list(actions)}).items)


def _cls(name, package, **extra):
    return {
        "type": "ADD_NODE",
        "label": "Class",
        "properties": {"name": name, "package": package, "qualified_name": f"{package}.{name}", **extra},
    }


def test_real_symbols_pass_and_invented_ones_are_rejected_with_close_names():
    state, actor = _workspace()
    ok, invented, wrong_package = _apply(
        state,
        actor,
        _cls("AuthService", "com.acme.service"),
        _cls("AuthServce", "com.acme.service"),
        _cls("User", "com.acme.service"),
    )
    assert ok.accepted
    assert invented.code == ErrorCode.UNGROUNDED_SYMBOL
    assert (
        "Class 'com.acme.service.AuthServce' does not exist in the 10 source files mapped" in invented.message
    )
    assert "Close names in the sources: com.acme.service.AuthService" in invented.message
    assert wrong_package.code == ErrorCode.UNGROUNDED_SYMBOL
    assert "Class 'com.acme.service.User' does not exist" in wrong_package.message


def test_methods_tables_and_packages():
    state, actor = _workspace()
    verdicts = _apply(
        state,
        actor,
        {
            "type": "ADD_NODE",
            "label": "Method",
            "properties": {
                "owner": "com.acme.service.AuthService",
                "name": "login",
                "signature": "login(String, String)",
            },
        },
        {
            "type": "ADD_NODE",
            "label": "Method",
            "properties": {
                "owner": "com.acme.service.AuthService",
                "name": "logout",
                "signature": "logout()",
            },
        },
        {"type": "ADD_NODE", "label": "DatabaseTable", "properties": {"name": "user_roles"}},
        {"type": "ADD_NODE", "label": "DatabaseTable", "properties": {"name": "payments"}},
        {"type": "ADD_NODE", "label": "Package", "properties": {"name": "java.sql"}},
        {"type": "ADD_NODE", "label": "Package", "properties": {"name": "org.spring"}},
    )
    assert [v.accepted for v in verdicts] == [True, False, True, False, True, False]
    assert all(v.code == ErrorCode.UNGROUNDED_SYMBOL for v in verdicts if not v.accepted)
    assert "Method 'logout' of 'com.acme.service.AuthService' does not exist" in verdicts[1].message


def test_an_edge_the_source_text_does_not_support_is_rejected():
    state, actor = _workspace()
    m = {"type": "ADD_NODE", "label": "Method"}
    verdicts = _apply(
        state,
        actor,
        {
            **m,
            "properties": {
                "owner": "com.acme.service.AuthService",
                "name": "login",
                "signature": "login(String, String)",
                "file": "src/main/java/com/acme/service/AuthService.java",
            },
        },
        {
            **m,
            "properties": {
                "owner": "com.acme.service.PasswordHasher",
                "name": "hash",
                "signature": "hash(String)",
            },
        },
        {"type": "ADD_NODE", "label": "DatabaseTable", "properties": {"name": "sessions"}},
        {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "login"}, "to": {"name": "hash"}},
        {"type": "ADD_EDGE", "label": "WRITES_TO", "from": {"name": "login"}, "to": {"name": "sessions"}},
    )
    assert [v.accepted for v in verdicts] == [True, True, True, True, False]
    assert verdicts[4].code == ErrorCode.UNGROUNDED_SYMBOL
    assert (
        "'sessions' does not occur in src/main/java/com/acme/service/AuthService.java" in verdicts[4].message
    )


def test_the_static_agent_passes_its_own_grounding():
    files = sources(CODE_FIXTURES / "java")
    grounding = Grounding(link(analyze_all(files)), files)
    state, turns, verdicts = drive(
        CodeAgent(sources=files), code_request(), max_turns=49, extra_rules=grounding.rules()
    )
    assert turns[-1].get("finished")
    rejected = [v.message for vs in verdicts for v in vs if not v.accepted]
    assert rejected == []
    plain, _, _ = drive(CodeAgent(sources=files), code_request())
    assert state.node_count == plain.node_count and state.edge_count == plain.edge_count


def test_once_the_llm_proposes_its_edges_must_quote_the_source_line_they_rely_on():
    """Issue 30: in hybrid mode after the static pass (and with --agent llm from the start), a CALLS edge
    needs evidence, a quote of the source symbol's file; the act step keeps where it was found."""
    from igg.act.apply import Actor
    from igg.act.evidence import Grounder
    from igg.mapping.prepare import context_of

    files = sources(CODE_FIXTURES / "java")
    grounding = Grounding(link(analyze_all(files)), files)
    grounding.quotes_required = True
    request = code_request()
    state, _ = build_state(request)
    grounder = Grounder(context_of(files), request.config.context.chunk_tokens)
    actor = Actor(state.schema, request.config.constraints, extra_rules=grounding.rules(), grounder=grounder)
    path = "src/main/java/com/acme/service/AuthService.java"
    line = next(
        t for t in (CODE_FIXTURES / "java" / path).read_text().splitlines() if "PasswordHasher.hash(" in t
    )
    m = {"type": "ADD_NODE", "label": "Method"}
    call = {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "login"}, "to": {"name": "hash"}}
    verdicts = _apply(
        state,
        actor,
        {
            **m,
            "properties": {
                "owner": "com.acme.service.AuthService",
                "name": "login",
                "signature": "login(String, String)",
                "file": path,
            },
        },
        {
            **m,
            "properties": {
                "owner": "com.acme.service.PasswordHasher",
                "name": "hash",
                "signature": "hash(String)",
            },
        },
        call,
        {**call, "evidence": ["return hash(password) // not in the file"]},
        {**call, "evidence": [" ".join(line.split())]},
    )
    assert [v.code for v in verdicts] == [
        None,
        None,
        ErrorCode.MISSING_EVIDENCE,
        ErrorCode.UNGROUNDED_EVIDENCE,
        None,
    ]
    assert "quote the source line they rely on" in verdicts[2].message and path in verdicts[2].message
    (item,) = state.edge_ends(verdicts[4].element)[2]["provenance"]["evidence"]
    assert item["file"] == path and item["match"] in ("exact", "normalized")
    assert (CODE_FIXTURES / "java" / path).read_text().splitlines()[item["line"] - 1] == line
