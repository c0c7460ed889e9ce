"""The public surface: ``igg.__all__`` is exactly this list, and every name in it resolves."""

from __future__ import annotations

import re

import igg

PUBLIC = [
    "STOP_REASONS",
    "Actor",
    "Agent",
    "AgentCapabilities",
    "AgentFailed",
    "AgentResponse",
    "AgentTurn",
    "AgentUnavailable",
    "AsyncAgent",
    "BudgetExhausted",
    "ErrorCode",
    "Event",
    "ExportError",
    "ExportSpec",
    "GraphDocument",
    "GraphState",
    "IGGError",
    "IterationRecord",
    "Loop",
    "MemorySessions",
    "Mutation",
    "Observation",
    "Problem",
    "Recorder",
    "Request",
    "RequestInvalid",
    "ResponseInvalid",
    "RunResult",
    "RunStream",
    "Schema",
    "ScriptedAgent",
    "SessionBusy",
    "SessionError",
    "SessionExists",
    "SessionInfo",
    "SessionNotFound",
    "SessionRecorder",
    "SessionRefused",
    "SessionRepo",
    "SessionStore",
    "StopReason",
    "StoreSessions",
    "Usage",
    "Verdict",
    "WorkspaceError",
    "acontinue_session",
    "arun",
    "arun_request",
    "astream",
    "build_state",
    "check_request",
    "continue_session",
    "document_to_state",
    "export_session",
    "load_document",
    "load_request",
    "make_agent",
    "parse_export_spec",
    "parse_turn",
    "perform_exports",
    "read_response",
    "resume_point",
    "run",
    "run_request",
    "stream",
]


def test_the_public_names_are_pinned():
    assert igg.__all__ == PUBLIC


def test_every_public_name_resolves_and_nothing_public_is_unlisted():
    assert all(getattr(igg, name) is not None for name in PUBLIC)
    exported = {n for n in vars(igg) if not n.startswith("_") and not isinstance(getattr(igg, n), type(igg))}
    assert exported == set(PUBLIC)


# Where ``Any`` stays in a public signature, and why: JSON-shaped values (properties, records, payloads) are
# ``dict[str, Any]`` / ``Mapping[str, Any]`` / ``tuple[Any, ...]`` (identity values); a rule is generic over
# its action and resolved value (``Rule[Any, Any]`` in a mapping of rules per class); ``**kwargs: Any`` passes
# options through; and these parameters take any decoded JSON value on purpose.
JSON_SHAPED = ("dict[str, Any]", "Mapping[str, Any]", "tuple[Any, ...]", "Rule[Any, Any]")
ANY_ON_PURPOSE = {
    ("read_response", "value"),  # any decoded JSON document: what is not one is named in the error
    ("GraphState.nodes_with", "value"),  # a property value of any JSON type
    ("IterationRecord.__init__", "actions"),  # the actions as received: decoded JSON, not all of them objects
}


def _public_callables() -> list[tuple[str, object]]:
    import inspect

    out: list[tuple[str, object]] = []
    for name in PUBLIC:
        obj = getattr(igg, name)
        if inspect.isfunction(obj):
            out.append((name, obj))
        elif inspect.isclass(obj):
            out += [
                (f"{name}.{m}", f)
                for m, f in vars(obj).items()
                if inspect.isfunction(f) and (not m.startswith("_") or m == "__init__")
            ]
    return out


def test_public_signatures_name_real_types_instead_of_any():
    import inspect

    loose = []
    for name, func in _public_callables():
        signature = inspect.signature(func)  # type: ignore[arg-type]
        for pname, param in [*signature.parameters.items(), ("return", None)]:
            text = str(signature.return_annotation if param is None else param.annotation)
            for allowed in JSON_SHAPED:
                text = text.replace(allowed, "")
            if param is not None and param.kind is param.VAR_KEYWORD:
                continue
            if re.search(r"\bAny\b", text) and (name, pname) not in ANY_ON_PURPOSE:
                loose.append(f"{name}({pname}: {text})")
    assert loose == []


def test_no_loose_modules_at_the_top_of_the_package():
    """Every module of ``igg`` lives in the package of its layer; at the top stay only the package's face
    (``__init__``, ``__main__``), the exception tree (``errors``) and the service layer (``service``)."""
    from pathlib import Path

    import igg

    top = sorted(p.stem for p in Path(igg.__file__).parent.glob("*.py"))
    assert top == ["__init__", "__main__", "errors", "service"]


def test_no_module_imports_a_private_name_of_another():
    """``from igg.x import _name`` reaches into another module's internals: what two modules share is
    public."""
    import ast
    from pathlib import Path

    import igg

    found = []
    for path in Path(igg.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("igg"):
                found += [
                    f"{path.name}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert found == []
