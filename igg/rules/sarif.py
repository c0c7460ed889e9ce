"""A check report as SARIF 2.1.0, the format code scanning reads (GitHub shows its results on pull requests).

One ``run`` whose tool driver lists every rule (id = the rule's name, its kind and description as help), and
one ``result`` per violation: its message, its level (error or warning), the first edge's statement as the
location, the other edges of its path as related locations, and a partial fingerprint from the violation's key
so that code scanning follows a violation across commits whatever lines moved. With a baseline, each result's
``baselineState`` says whether it is new or was there before (``unchanged``). File URIs are relative to the
directory given (``root``; the repository's top for code scanning), under ``%SRCROOT%``, and percent-encoded
(RFC 3986: a space, ``#``, ``?``, ``%``, ``:`` or a non-ASCII letter in a file name never turns the path into
another file, a fragment or a scheme).
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from igg.rules.report import TRUNCATED, CheckReport, Hop, PathOf, Violation, repository_path

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
KIND_HELP = {
    "forbidden": "No dependency of the listed edge types from one set of nodes to another.",
    "layers": "Ordered layers: no dependency from a lower layer to a higher one.",
    "independence": "The listed parts may not depend on each other.",
    "acyclic": "No cycle among the selected nodes at the chosen level.",
    "allowed_only": "Dependencies from these nodes may go only to the allowed ones.",
}


def to_sarif(report: CheckReport, *, version: str, prefix: str | PathOf = "") -> dict[str, Any]:
    """The SARIF log of ``report``; ``prefix`` is put before every file path (the mapped folder relative to
    the repository's top, e.g. ``src/``), or maps each path there (several trees checked)."""
    index = {r.name: i for i, r in enumerate(report.rules)}
    rules = [
        {
            "id": r.name,
            "name": _pascal(r.name),
            "shortDescription": {"text": r.description or f"{r.kind} rule {r.name}"},
            "fullDescription": {"text": f"{KIND_HELP[r.kind]} {r.description or ''}".strip()},
            "help": {
                "text": f"{KIND_HELP[r.kind]} Fix the dependency, or change the rule in igg.toml.",
                "markdown": f"**{r.kind}** rule `{r.name}`: {KIND_HELP[r.kind]}",
            },
            "defaultConfiguration": {"level": r.severity},
            "properties": {"kind": r.kind, "tags": ["architecture", "dependencies"]},
        }
        for r in report.rules
    ]
    results = [_result(v, index[v.rule], prefix, report.since is not None) for v in report.violations]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "igg",
                "informationUri": "https://github.com/igg/igg",
                "version": version,
                "semanticVersion": version,
                "rules": rules,
            }
        },
        "results": results,
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository's top folder."}}},
    }
    if report.truncated:
        run["invocations"] = [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [{"level": "warning", "message": {"text": TRUNCATED}}],
            }
        ]
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("_", "-").split("-") if part)


def file_uri(path: str) -> str:
    """A relative file path as a URI reference (RFC 3986): every character but unreserved ones and ``/``
    percent-encoded, UTF-8 first."""
    return quote(path, safe="/")


def _location(
    hop: Hop, prefix: str | PathOf, message: str | None = None, ident: int | None = None
) -> dict[str, Any]:
    physical: dict[str, Any] = {
        "artifactLocation": {
            "uri": file_uri(repository_path(prefix, hop.file or "")),
            "uriBaseId": "%SRCROOT%",
        }
    }
    if hop.line:
        physical["region"] = {"startLine": hop.line}
    out: dict[str, Any] = {"physicalLocation": physical}
    if ident is not None:
        out["id"] = ident
    if message:
        out["message"] = {"text": message}
    return out


def _result(v: Violation, rule_index: int, prefix: str | PathOf, baseline: bool) -> dict[str, Any]:
    located = [h for h in v.path if h.file]
    first = located[0] if located else None
    result: dict[str, Any] = {
        "ruleId": v.rule,
        "ruleIndex": rule_index,
        "level": v.severity,
        "message": {"text": v.message + "".join(f"\n  {h.describe()}" for h in v.path)},
        "partialFingerprints": {"iggViolation/v1": hashlib.sha256(v.key.encode()).hexdigest()[:32]},
        "properties": {"kind": v.kind, "status": v.status},
    }
    if first is not None:
        result["locations"] = [_location(first, prefix)]
        related = [
            _location(h, prefix, f"{h.source} -> {h.target} ({h.edge})", i)
            for i, h in enumerate([*located[1:], *v.breaking_edges])
        ]
        if related:
            result["relatedLocations"] = related
    if baseline:
        result["baselineState"] = "new" if v.status == "new" else "unchanged"
    return result
